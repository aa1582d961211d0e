// How `npm start` and its preview page show EventBridge: a console that plays PutEvents and
// prints each event, and the event as a labelled JSON card. Loaded by the scripts and tests (lib/notify/tools.ts), never by a function.
import { randomUUID } from 'node:crypto';
import type { KindTools } from '../kind.js';
import { arr, bold, html, obj, type SafeHtml, str, unsupported } from '../preview.js';
import { LOCAL_CREDENTIALS, MAX_ENTRY_BYTES } from './lazy-eventbridge-post.js';

/** An entry's detail as its rule's targets get it: the JSON object, or the string as sent when it is none. */
function detailOf(entry: Record<string, unknown>): unknown {
  const detail = str(entry['Detail']);
  if (detail === undefined) return undefined;
  try {
    return JSON.parse(detail) as unknown;
  } catch {
    return detail;
  }
}

const entriesOf = (body: unknown) => arr(obj(body)['Entries']).map(obj);

/** One event as the preview page shows it: where it went and what it is, then its detail, escaped like everything else. */
const eventCard = (entry: Record<string, unknown>): SafeHtml =>
  html`<section class="event">
      <dl>
        <dt>Event bus</dt><dd>${str(entry['EventBusName']) ?? 'default'}</dd>
        <dt>Source</dt><dd>${str(entry['Source']) ?? ''}</dd>
        <dt>Detail type</dt><dd>${str(entry['DetailType']) ?? ''}</dd>
      </dl>
      <pre class="event-detail">${JSON.stringify(detailOf(entry), null, 2) ?? ''}</pre>
    </section>`;

function eventBridgeRequest(body: unknown, time: string): SafeHtml {
  const entries = entriesOf(body);
  return html`<div class="eventbridge">
    <div class="sender"><strong>Amazon EventBridge</strong><span class="muted">PutEvents</span><span class="muted receipt">${time}</span></div>
    ${entries.length === 0 ? unsupported('a PutEvents request without entries') : entries.map(eventCard)}
  </div>`;
}

export const tools: KindTools = {
  conformance: {
    // A loopback fake of AWS: a plain-http endpoint, which the poster signs for as it would for AWS.
    variants: (base) => [
      { name: 'bus by name', destination: { type: 'eventbridge', eventBus: 'finops-alerts' }, env: { EVENTBRIDGE_ENDPOINT_URL: base } },
      {
        name: 'bus by ARN',
        destination: { type: 'eventbridge', eventBus: 'arn:aws:events:eu-west-1:123456789012:event-bus/finops-alerts' },
        env: { EVENTBRIDGE_ENDPOINT_URL: base },
      },
    ],
    accepted: {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: '11111111-2222-3333-4444-555555555555' }] }),
    },
    // No person reads an event: its detail is data for rules and their targets, the alert exactly as received.
    shown: () => [],
    data: (body) => detailOf(entriesOf(body)[0] ?? {}),
    // Nothing in the configuration is secret; what the requests are signed with is.
    secrets: () =>
      [LOCAL_CREDENTIALS.secretAccessKey, process.env['AWS_SECRET_ACCESS_KEY'], process.env['AWS_SESSION_TOKEN']].filter(
        (value): value is string => Boolean(value),
      ),
    maxBytes: MAX_ENTRY_BYTES,
  },
  name: 'Amazon EventBridge',
  fidelity: 'The events as PutEvents received them; a rule’s targets get each detail as shown',
  preview: eventBridgeRequest,
  createConsole: () => (_rest, body) => {
    const entries = entriesOf(body);
    const events = entries.map((entry) => ({
      bus: str(entry['EventBusName']) ?? 'default',
      source: str(entry['Source']),
      detailType: str(entry['DetailType']),
      detail: detailOf(entry),
    }));
    return {
      // As PutEvents answers when it took every entry.
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify({ FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: randomUUID() })) }),
      show: events.map(
        ({ bus, source, detailType, detail }) =>
          `\n── Amazon EventBridge event (console destination) ──\n${bold(String(detailType))} from ${source} on bus ${bus}\n${JSON.stringify(detail, null, 2)}\n`,
      ),
      record: body,
    };
  },
  // EventBridge alone: the other AWS calls of `npm start` (a configuration secret, a table) still go where they went.
  consoleEnvironment: (base) => ({ EVENTBRIDGE_ENDPOINT_URL: `${base}/eventbridge` }),
};
