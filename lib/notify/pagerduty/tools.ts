// How `npm start` and its preview page show PagerDuty: a console that plays the Events API, and
// an HTML approximation of the incident an event opens. Loaded by the scripts and tests (lib/notify/tools.ts), never by a function.
import { randomBytes } from 'node:crypto';
import type { KindTools } from '../kind.js';
import { arr, bold, dim, html, linkButton, obj, previewImage, type SafeHtml, str, unsupported } from '../preview.js';
import { PAGERDUTY_MAX_BYTES } from './format.js';

const ACTIONS = new Set(['trigger', 'acknowledge', 'resolve']);

/** A custom detail's value as PagerDuty lists it: text as written, anything else as JSON. */
const detailText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The event without its routing key: a secret, which no console line or preview shows. */
function withoutKey(body: unknown): Record<string, unknown> {
  const { routing_key: _key, ...event } = obj(body);
  return event;
}

function incident(body: unknown, time: string): SafeHtml {
  const event = obj(body);
  const action = str(event['event_action']) ?? '';
  const payload = obj(event['payload']);
  const details = Object.entries(obj(payload['custom_details']));
  const links = arr(event['links']).map(obj);
  const images = arr(event['images']).map(obj);
  const machine = (['component', 'group', 'class'] as const).flatMap((key) => (str(payload[key]) ? [`${key}: ${str(payload[key])}`] : []));
  return html`<div class="pagerduty">
    <div class="sender"><strong>Cost Alert Relay</strong><span class="badge">Events API v2</span><span class="muted receipt">${time}</span></div>
    ${ACTIONS.has(action) ? '' : unsupported(`an event action "${action}"`)}
    <div class="pd-incident" data-action="${action}">
      <p><span class="badge">${action}</span> ${str(payload['severity']) ? html`<span class="pd-severity">${str(payload['severity'])}</span>` : ''}</p>
      ${str(payload['summary']) ? html`<h3 class="pd-summary">${str(payload['summary'])}</h3>` : ''}
      ${details.length > 0 ? html`<dl class="pd-details">${details.map(([key, value]) => html`<dt>${key}</dt><dd>${detailText(value)}</dd>`)}</dl>` : ''}
      ${machine.length > 0 ? html`<p class="muted">${machine.join(' · ')}</p>` : ''}
      <p class="muted">dedup key: ${str(event['dedup_key']) ?? '(PagerDuty makes one)'}</p>
      ${images.map((i) => html`<div class="pd-image">${previewImage(str(i['src']), str(i['alt']))}</div>`)}
      ${links.length > 0 ? html`<div class="buttons">${links.map((l) => linkButton(str(l['text']) ?? str(l['href']) ?? '', str(l['href'])))}</div>` : ''}
    </div>
  </div>`;
}

/** The event as the terminal shows it: the action, the incident's title and details, its links. */
function printed(event: Record<string, unknown>): string {
  const payload = obj(event['payload']);
  const lines = [
    `${bold(String(event['event_action']))} ${dim(`dedup key ${str(event['dedup_key']) ?? '(none)'}`)}`,
    ...(str(payload['summary']) ? [`${bold(String(payload['summary']))} ${dim(`(${String(payload['severity'])})`)}`] : []),
    ...Object.entries(obj(payload['custom_details'])).map(([key, value]) => `${key}: ${detailText(value)}`),
    ...arr(event['links']).map((l) => `${bold(`[${str(obj(l)['text']) ?? 'link'}]`)} ${str(obj(l)['href']) ?? ''}`),
    ...arr(event['images']).map((i) => `${bold('[picture]')} ${str(obj(i)['src']) ?? ''}`),
  ];
  return lines.join('\n');
}

/** An answer in PagerDuty's words: 400 "invalid event" with what is wrong, as the Events API says it. */
const invalid = (errors: string[]) => ({
  status: 400,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ status: 'invalid event', message: 'Event object is invalid', errors }),
  show: [`\n── PagerDuty refused an event (console destination): ${errors.join('; ')}\n`],
});

const PAGERDUTY_TEXTS = (body: unknown): string[] => {
  const event = obj(body);
  const payload = obj(event['payload']);
  return [
    str(payload['summary']) ?? '',
    ...Object.values(obj(payload['custom_details'])).flatMap((value) => (typeof value === 'string' ? [value] : [])),
    ...arr(event['links']).flatMap((l) => str(obj(l)['text']) ?? []),
  ];
};

export const tools: KindTools = {
  conformance: {
    variants: (base) => [
      {
        name: 'Events API v2',
        destination: { type: 'pagerduty', routingKey: 'R0CONTRACTROUTINGKEY0123456789AB', severity: 'error' },
        env: { PAGERDUTY_EVENTS_URL: `${base}/v2/enqueue` },
      },
    ],
    accepted: {
      status: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"status":"success","message":"Event processed","dedup_key":"contract"}',
    },
    shown: PAGERDUTY_TEXTS,
    secrets: (destination) => [(destination as { routingKey: string }).routingKey],
    maxBytes: PAGERDUTY_MAX_BYTES,
  },
  name: 'PagerDuty',
  fidelity: 'HTML approximation of the alert an event opens or changes, not PagerDuty’s own rendering',
  preview: incident,
  createConsole: () => (_rest, body) => {
    const event = obj(body);
    const action = str(event['event_action']) ?? '';
    const errors = [
      ...(typeof event['routing_key'] === 'string' && event['routing_key'].length === 32
        ? []
        : ["Length of 'routing_key' is incorrect (should be 32 characters)"]),
      ...(ACTIONS.has(action) ? [] : ["'event_action' is invalid (must be one of: trigger, acknowledge, resolve)"]),
      ...(action !== 'trigger' && str(event['dedup_key']) === undefined ? ["'dedup_key' is missing"] : []),
      ...(action === 'trigger' && !str(obj(event['payload'])['summary']) ? ["'payload.summary' is missing"] : []),
    ];
    if (errors.length > 0) return invalid(errors);
    const shown = withoutKey(body);
    return {
      status: 202,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        status: 'success',
        message: 'Event processed',
        dedup_key: str(event['dedup_key']) ?? randomBytes(16).toString('hex'),
      }),
      show: [
        `\n── PagerDuty event (console destination) ──\n${printed(shown)}\n`,
        'event JSON (the routing key left out):',
        `${JSON.stringify(shown, null, 2)}\n`,
      ],
      record: shown,
    };
  },
  // PagerDuty destinations post their events to the console's Events API.
  consoleEnvironment: (base) => ({ PAGERDUTY_EVENTS_URL: `${base}/pagerduty` }),
};
