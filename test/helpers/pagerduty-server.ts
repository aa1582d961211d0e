// A loopback PagerDuty Events API v2 (shared/reference/more-destinations.md): it checks events as
// PagerDuty documents them, answers in its words, and keeps incidents by dedup key with PagerDuty's
// merge rules, so a test sees what an incident went through and counts who was paged: a trigger
// merges into an open incident (triggered or acknowledged) without notifying anyone; with no open
// incident under its key (none yet, or resolved) it opens a new one, which pages; acknowledge and
// resolve change the open incident and do nothing when there is none.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/** How the fake answers the next events of one routing key. */
export type PagerDutyBehaviour =
  | { kind: 'ok' }
  /** Too many events for the integration key: 429, with Retry-After when given. */
  | { kind: 'throttled'; retryAfterSeconds?: number }
  /** Any other status; 400 in PagerDuty's "invalid event" words. */
  | { kind: 'error'; status: number }
  /** A redirect elsewhere, which a poster must not follow with the key. */
  | { kind: 'redirect' }
  | { kind: 'hang' };

export interface PagerDutyRequest {
  path: string;
  /** The event as received (or the raw text when it was no JSON). */
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  receivedAt: number;
  answeredStatus: number;
  /** Why the fake refused it as PagerDuty would (`errors` of a 400), when it did. */
  errors?: string[];
}

/** One incident as PagerDuty keeps it: its state, and how many triggers it took (the first opened it and paged). */
export interface PagerDutyAlert {
  status: 'triggered' | 'acknowledged' | 'resolved';
  triggers: number;
  summary: string;
}

export interface FakePagerDuty {
  /** The Events API endpoint, for PAGERDUTY_EVENTS_URL. */
  url: string;
  requests: PagerDutyRequest[];
  /** Events it took (202), of one routing key when given. */
  accepted(routingKey?: string): PagerDutyRequest[];
  /** The latest incident of each dedup key: a trigger on a resolved one opens a new one under the same key, which replaces it here. */
  alerts: Map<string, PagerDutyAlert>;
  /** Every incident opened, in order, with its dedup key: each paged whoever was on call once. */
  incidents: Array<{ dedupKey: string; incident: PagerDutyAlert }>;
  /** How many times on-call was paged (incidents opened), for one dedup key when given. */
  pages(dedupKey?: string): number;
  /** How the fake answers events of `routingKey` (of one `action` only, when given) from now on. */
  setBehaviour(routingKey: string, behaviour: PagerDutyBehaviour, action?: 'trigger' | 'acknowledge' | 'resolve'): void;
  /** The next `count` events of `routingKey` get `behaviour`, then its usual one again. */
  queue(routingKey: string, behaviour: PagerDutyBehaviour, count?: number): void;
  close(): Promise<void>;
}

const ACTIONS = new Set(['trigger', 'acknowledge', 'resolve']);
const SEVERITIES = new Set(['critical', 'error', 'warning', 'info']);
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What PagerDuty refuses in an event, in the spirit of its `errors` list. */
export function eventErrors(event: Record<string, unknown>): string[] {
  const errors: string[] = [];
  const { routing_key, event_action, dedup_key, payload, links } = event;
  if (typeof routing_key !== 'string' || routing_key.length !== 32)
    errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  if (typeof event_action !== 'string' || !ACTIONS.has(event_action)) errors.push("'event_action' is invalid");
  if (dedup_key !== undefined && (typeof dedup_key !== 'string' || dedup_key.length > 255)) errors.push("'dedup_key' is too long");
  if (event_action !== 'trigger' && typeof dedup_key !== 'string') errors.push("'dedup_key' is missing");
  if (event_action === 'trigger') {
    if (!isObject(payload)) return [...errors, "'payload' is missing"];
    const { summary, source, severity, timestamp, custom_details } = payload;
    if (typeof summary !== 'string' || summary === '' || summary.length > 1024) errors.push("'payload.summary' is missing or too long");
    if (typeof source !== 'string' || source === '') errors.push("'payload.source' is missing");
    if (typeof severity !== 'string' || !SEVERITIES.has(severity)) errors.push("'payload.severity' is invalid");
    if (custom_details !== undefined && !isObject(custom_details)) errors.push("'payload.custom_details' must be an object");
    // The schema's `format: date-time` (RFC 3339): a four-digit year, a time, a zone.
    if (timestamp !== undefined && (typeof timestamp !== 'string' || !DATE_TIME.test(timestamp) || Number.isNaN(Date.parse(timestamp)))) {
      errors.push("'payload.timestamp' is not a valid date-time");
    }
  }
  if (links !== undefined && (!Array.isArray(links) || !links.every((l) => isObject(l) && typeof l['href'] === 'string'))) {
    errors.push("'links' is invalid");
  }
  return errors;
}

export async function startFakePagerDuty(): Promise<FakePagerDuty> {
  const requests: PagerDutyRequest[] = [];
  const behaviours = new Map<string, PagerDutyBehaviour>();
  const queued = new Map<string, PagerDutyBehaviour[]>();
  const alerts = new Map<string, PagerDutyAlert>();
  const incidents: FakePagerDuty['incidents'] = [];
  const hanging = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const event = isObject(body) ? body : { raw };
      const request: PagerDutyRequest = {
        path: req.url ?? '/',
        body: event,
        headers: req.headers,
        receivedAt: Date.now(),
        answeredStatus: 0,
      };
      requests.push(request);
      const send = (status: number, answer: unknown, headers: Record<string, string> = {}) => {
        request.answeredStatus = status;
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(answer === undefined ? '' : JSON.stringify(answer));
      };
      if (req.method !== 'POST' || request.path !== '/v2/enqueue') return send(404, { status: 'Not found', message: 'Not found' });
      if (!isObject(body))
        return send(400, { status: 'Unrecognized object', message: 'Event object format is unrecognized', errors: ['JSON parse error'] });

      const key = typeof body['routing_key'] === 'string' ? body['routing_key'] : '';
      const behaviour = queued.get(key)?.shift() ??
        behaviours.get(`${key} ${String(body['event_action'])}`) ??
        behaviours.get(key) ?? { kind: 'ok' };
      switch (behaviour.kind) {
        case 'hang':
          hanging.add(res);
          return;
        case 'redirect':
          return send(302, undefined, { location: 'https://elsewhere.example/v2/enqueue' });
        case 'throttled':
          return send(
            429,
            undefined,
            behaviour.retryAfterSeconds === undefined ? {} : { 'retry-after': String(behaviour.retryAfterSeconds) },
          );
        case 'error':
          return behaviour.status === 400
            ? send(400, { status: 'invalid event', message: 'Event object is invalid', errors: ['Event object is invalid'] })
            : send(behaviour.status, { status: 'Error', message: `HTTP ${behaviour.status}` });
        case 'ok':
          break;
      }
      const errors = eventErrors(body);
      if (errors.length > 0) {
        request.errors = errors;
        return send(400, { status: 'invalid event', message: 'Event object is invalid', errors });
      }
      const dedupKey = typeof body['dedup_key'] === 'string' ? body['dedup_key'] : randomBytes(16).toString('hex');
      const alert = alerts.get(dedupKey);
      const action = body['event_action'];
      if (action === 'trigger') {
        const summary = String((body['payload'] as Record<string, unknown>)['summary']);
        if (alert && alert.status !== 'resolved') alert.triggers += 1;
        else {
          const incident: PagerDutyAlert = { status: 'triggered', triggers: 1, summary };
          alerts.set(dedupKey, incident);
          incidents.push({ dedupKey, incident });
        }
      } else if (alert && alert.status !== 'resolved') {
        alert.status = action === 'acknowledge' ? 'acknowledged' : 'resolved';
      }
      send(202, { status: 'success', message: 'Event processed', dedup_key: dedupKey });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v2/enqueue`,
    requests,
    accepted: (routingKey) =>
      requests.filter((r) => r.answeredStatus === 202 && (routingKey === undefined || r.body['routing_key'] === routingKey)),
    alerts,
    incidents,
    pages: (dedupKey) => incidents.filter((i) => dedupKey === undefined || i.dedupKey === dedupKey).length,
    setBehaviour: (routingKey, behaviour, action) => behaviours.set(action ? `${routingKey} ${action}` : routingKey, behaviour),
    queue: (routingKey, behaviour, count = 1) => {
      const list = queued.get(routingKey) ?? [];
      for (let i = 0; i < count; i++) list.push(behaviour);
      queued.set(routingKey, list);
    },
    close: () => closeServer(server, hanging),
  };
}
