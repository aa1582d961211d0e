// How `npm start` and its preview page show a webhook destination: a console that plays a
// receiver and prints each event, and the event as a labelled JSON card. Loaded by the scripts and
// tests (lib/notify/tools.ts), never by a function.
import type { KindTools } from '../kind.js';
import { bold, html, obj, type SafeHtml, str, unsupported } from '../preview.js';
import { MAX_BODY_BYTES } from './event.js';

/** A made-up secret for the contract suite's receiver: never one a receiver uses. */
const CONTRACT_SECRET = 'whsec_Y29udHJhY3Qtc3VpdGUtc2VjcmV0LW5vdC1hLXJlYWwtb25l';

function webhookRequest(body: unknown, time: string): SafeHtml {
  const event = obj(body);
  const type = str(event['type']);
  return html`<div class="webhook">
    <div class="sender"><strong>Webhook</strong><span class="muted">Standard Webhooks</span><span class="muted receipt">${time}</span></div>
    ${
      type === undefined
        ? unsupported('a body without an event type')
        : html`<section class="event">
      <dl>
        <dt>Type</dt><dd>${type}</dd>
        <dt>Timestamp</dt><dd>${str(event['timestamp']) ?? ''}</dd>
      </dl>
      <pre class="event-detail">${JSON.stringify(event['data'] ?? null, null, 2)}</pre>
    </section>`
    }
  </div>`;
}

export const tools: KindTools = {
  conformance: {
    variants: (base) => [{ name: 'receiver', destination: { type: 'webhook', url: `${base}/hooks/cost`, secret: CONTRACT_SECRET } }],
    accepted: { status: 204, body: '' },
    // No person reads an event: its data is for a receiver's code, the alert exactly as received.
    shown: () => [],
    data: (body) => obj(body)['data'],
    secrets: (destination) => [str(obj(destination)['secret']) ?? CONTRACT_SECRET],
    maxBytes: MAX_BODY_BYTES,
  },
  name: 'Webhook',
  fidelity: 'The events as a receiver gets them; the console does not check their signatures',
  preview: webhookRequest,
  createConsole: () => (_rest, body) => {
    const event = obj(body);
    return {
      // As a receiver answers when it took the event.
      status: 204,
      show: [
        `\n── Webhook event (console destination) ──\n${bold(String(str(event['type']) ?? 'no type'))} at ${str(event['timestamp']) ?? '?'}\n${JSON.stringify(event['data'] ?? null, null, 2)}\n`,
      ],
      record: body,
    };
  },
};
