// The PagerDuty kind (lib/notify/pagerduty): its configuration, the events it sends for an
// anomaly and for each triage action, how it reads PagerDuty's answers, its pace, and how
// `npm start` shows it. Posts go to a loopback Events API (test/helpers/pagerduty-server.ts).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnomalyPost, ChatService, PostContext, TriageControls } from '../../lib/chat/service.js';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import { parseRelayConfig } from '../../lib/config/load.js';
import { createDelivery, type Target } from '../../lib/delivery/deliver.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import type { KindTools } from '../../lib/notify/kind.js';
import { addressOf, createChatServices, KIND_ENVIRONMENT, KINDS, kindOf, serviceFor } from '../../lib/notify/kinds.js';
import type { PagerDutyDestination } from '../../lib/notify/pagerduty/config.js';
import { PAGERDUTY_TRIAGE_EVENTS } from '../../lib/notify/pagerduty/lazy-pagerduty-extras.js';
import { classifyPagerDutyAnswer, DEFAULT_PAGERDUTY_EVENTS_URL } from '../../lib/notify/pagerduty/lazy-pagerduty-post.js';
import type { PagerDutyEvent } from '../../lib/notify/pagerduty/payload.js';
import { pagerDutyPaceKey } from '../../lib/notify/pagerduty/service.js';
import { toolsOf } from '../../lib/notify/tools.js';
import { relayEnvironmentSchema } from '../../lib/relay/environment.js';
import { retryEnvironmentSchema } from '../../lib/retry/environment.js';
import { readEnvironment } from '../../lib/shared/environment.js';
import { fetchOverNodeHttp, type NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { triageEnvironmentSchema } from '../../lib/triage/environment.js';
import { TRIAGE_ACTIONS, type TriageAction } from '../../lib/vocabulary/triage.js';
import { consolePathOf } from '../../scripts/console-chat.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, manualClock, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { type FakePagerDuty, startFakePagerDuty } from '../helpers/pagerduty-server.js';

const KEY = 'R0ONCALL0KEY0123456789abcdefABCD';
const OTHER_KEY = 'R0OTHER00KEY0123456789abcdefABCD';
const oncall: PagerDutyDestination = { type: 'pagerduty', routingKey: KEY, severity: 'error' };
const LINK = 'https://cost-alerts.example.org/triage/token-1';

const alert = (title: string, extra: Record<string, unknown> = {}): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z' },
    payload: {
      title,
      message: 'Daily cost of Amazon EC2 rose 212%',
      account_id: '123456789012',
      account_name: 'Production payer',
      cloud_provider_type: 'aws',
      ...extra,
    },
  });

const problemsOf = (destination: unknown) => {
  try {
    parseRelayConfig(JSON.stringify({ auth: { method: 'none' }, destinations: { default: destination } }));
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return (error as ConfigInvalidError).problems;
  }
};

let fake: FakePagerDuty;
let tools: KindTools;
beforeAll(async () => {
  fake = await startFakePagerDuty();
  tools = await toolsOf('pagerduty');
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.alerts.clear();
  fake.incidents.length = 0;
});

const env = () => ({ PAGERDUTY_EVENTS_URL: fake.url });
const serviceOf = (destination: object = oncall, transport: NodeFetch = fetchOverNodeHttp) =>
  serviceFor(createChatServices(transport, env()), destination);

/** Formats and posts one alert as the delivery core does; returns the outcome and the event PagerDuty got. */
async function post(
  message: WebhookMessage,
  anomaly?: AnomalyPost,
  triage?: TriageControls,
  /** None: a caller that knows no anomaly. */
  context: PostContext | 'none' = { anomalyId: anomalyRecordId(message, 'oncall'), destination: 'oncall' },
) {
  const service = serviceOf();
  const payload = service.format(message, oncall, anomaly, triage, context === 'none' ? undefined : context);
  const outcome = await service.post(KEY, payload, { timeoutMs: 2_000 });
  return { outcome, event: fake.requests.at(-1)?.body as unknown as PagerDutyEvent & { routing_key: string } };
}

describe('a PagerDuty destination’s configuration', () => {
  it('takes a type, an integration key and a severity; the kind is PagerDuty and posts go where the key says', () => {
    expect(problemsOf(oncall)).toEqual([]);
    expect(problemsOf({ type: 'pagerduty', routingKey: KEY })).toEqual([]);
    expect(kindOf(oncall).type).toBe('pagerduty');
    expect(addressOf(oncall)).toBe(KEY);
    const kind = kindOf(oncall);
    expect(kind.serviceKey(oncall)).toBe('pagerduty');
    expect(kind.editsOpening(oncall)).toBe(false);
    expect(kind.links(oncall)).toBe(true);
  });

  it('refuses a key that is not 32 letters and digits, and an unknown severity, by path and without repeating the key', () => {
    const shortKey = 'R0SHORTKEY';
    const problems = [
      ...problemsOf({ type: 'pagerduty', routingKey: shortKey }),
      ...problemsOf({ type: 'pagerduty', routingKey: `${KEY.slice(0, 31)}-` }),
      ...problemsOf({ type: 'pagerduty', routingKey: KEY, severity: 'high' }),
    ];
    expect(problems.map((p) => p.path)).toEqual([
      'destinations.default.routingKey',
      'destinations.default.routingKey',
      'destinations.default.severity',
    ]);
    expect(problems[0]?.problem).toBe('must be 32 letters and digits');
    expect(problems[2]?.problem).toBe('must be one of "critical", "error", "warning", "info"');
    expect(JSON.stringify(problems)).not.toContain(shortKey);
    expect(JSON.stringify(problems)).not.toContain(KEY.slice(0, 31));
  });

  it('needs its type: a routing key alone is never taken for PagerDuty; a mention or group is for chats only', () => {
    expect(problemsOf({ routingKey: KEY }).map((p) => p.path)).toEqual(['destinations.default.type']);
    expect(problemsOf({ ...oncall, mention: '<!here>' })).toEqual([
      { path: 'destinations.default.mention', problem: 'is for chat destinations (slack, teams, googlechat) only, not pagerduty' },
    ]);
    expect(problemsOf({ ...oncall, group: { waitSeconds: 60 } }).map((p) => p.path)).toEqual(['destinations.default.group']);
    expect(problemsOf({ ...oncall, url: 'https://events.pagerduty.com/v2/enqueue' }).map((p) => p.path)).toEqual([
      'destinations.default.url',
    ]);
  });

  it('PAGERDUTY_EVENTS_URL is read by the relay, delivery-retry and triage: https, or plain http to loopback only', () => {
    expect(Object.keys(KIND_ENVIRONMENT)).toContain('PAGERDUTY_EVENTS_URL');
    const schemas: Array<Parameters<typeof readEnvironment>[0]> = [relayEnvironmentSchema, retryEnvironmentSchema, triageEnvironmentSchema];
    for (const schema of schemas) {
      const base = { DELIVERY_QUEUE_URL: 'https://sqs.example/q' };
      const read = (url: string) => readEnvironment(schema, { ...base, PAGERDUTY_EVENTS_URL: url });
      expect(read('https://events.eu.pagerduty.com/v2/enqueue')).toMatchObject({ ok: true });
      expect(read('http://127.0.0.1:9/v2/enqueue')).toMatchObject({ ok: true });
      expect(read('http://events.pagerduty.com/v2/enqueue')).toEqual({
        ok: false,
        problems: [{ path: 'PAGERDUTY_EVENTS_URL', problem: 'must be an https URL' }],
      });
    }
  });
});

describe('the events an anomaly sends', () => {
  it('an opening is a trigger: the routing key from the address, the dedup key the anomaly’s, the alert as PagerDuty fields, the Triage link', async () => {
    const message = alert('EC2 spend rose');
    const { outcome, event } = await post(message, undefined, { link: LINK });
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(fake.requests[0]?.path).toBe('/v2/enqueue');
    expect(fake.requests[0]?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(event).toEqual({
      routing_key: KEY,
      event_action: 'trigger',
      dedup_key: anomalyRecordId(message, 'oncall'),
      payload: {
        summary: 'EC2 spend rose',
        source: 'cost-alert-relay',
        severity: 'error',
        timestamp: '2026-11-26T09:00:00Z',
        component: '123456789012',
        group: 'aws',
        class: 'anomaly_alert',
        custom_details: { message: 'Daily cost of Amazon EC2 rose 212%', 'account name': 'Production payer' },
      },
      links: [{ href: LINK, text: 'Triage' }],
    });
    expect(event.dedup_key?.length).toBeLessThanOrEqual(255);
    expect(fake.alerts.get(event.dedup_key as string)).toEqual({ status: 'triggered', triggers: 1, summary: 'EC2 spend rose' });
  });

  it('a follow-up is a trigger under the same dedup key, which PagerDuty adds to the open alert; its details say which update it is', async () => {
    const opening = alert('EC2 spend rose');
    const followUp = alert('EC2  spend rose', { message: 'now 340%' });
    await post(opening);
    const mark = { state: 'acknowledged' as const, by: 'Dana <!channel>', at: Date.parse('2026-11-26T10:00:00Z') / 1000 };
    const { event } = await post(followUp, { kind: 'follow_up', firstSeenAt: '2026-11-26T09:00:00Z', updates: 2, triage: mark });
    expect(event.event_action).toBe('trigger');
    expect(event.dedup_key).toBe(anomalyRecordId(opening, 'oncall'));
    expect(event.payload?.custom_details).toEqual({
      message: 'now 340%',
      'account name': 'Production payer',
      update: 2,
      'first seen': '2026-11-26T09:00:00Z',
      triage: 'Acknowledged by Dana ＜!channel＞ at 2026-11-26T10:00:00Z',
    });
    expect(fake.alerts.size).toBe(1);
    expect(fake.alerts.get(event.dedup_key as string)?.triggers).toBe(2);
  });

  it('keeps sender text inert: no mention, link, markup or bidi control survives, and the summary stays within 1,024 characters', async () => {
    const message = alert(`<!channel> *bold* [x](https://evil.example) \u202E00.001$ ${'x'.repeat(2_000)}`, {
      message: '<https://evil.example|click> <@U0123> www.evil.example',
      account_name: '<b>Payer</b>',
    });
    const { event } = await post(message);
    const shown = tools.conformance.shown(event).join('\n');
    for (const live of ['<!channel>', '*bold*', 'https://evil', 'www.evil.example', '<@U0123>', '<b>', '\u202E'])
      expect(shown).not.toContain(live);
    expect(shown).toContain('bold');
    expect(event.payload?.summary.length).toBe(1_024);
    expect(event.payload?.summary.endsWith('…')).toBe(true);
  });

  it('sends the fields PagerDuty’s rules match on as received but on one line without controls; leaves out what the alert lacks', async () => {
    const message = webhookMessageSchema.parse({
      metadata: { object_type: 'budget_alert\u0000', timestamp: 'yesterday' },
      payload: { message: 'Budget at 90%', account_id: ` 12\n34 ${'9'.repeat(300)}` },
    });
    const { event } = await post(message, undefined, undefined, 'none');
    expect(event).not.toHaveProperty('dedup_key');
    expect(event).not.toHaveProperty('links');
    expect(event.payload).toEqual({
      summary: 'Budget alert',
      source: 'cost-alert-relay',
      severity: 'error',
      component: `12 34 ${'9'.repeat(248)}…`,
      class: 'budget_alert',
      custom_details: { message: 'Budget at 90%', time: 'yesterday' },
    });
  });

  it('cleans cost-center names as every other text: no bidi control or half emoji reaches PagerDuty', async () => {
    const message = alert('EC2 spend rose');
    const costCenters = [
      { id: 'cc-1', name: `Data \u202EPlatform\u202C <!here> \uD83D` },
      { id: 'cc-2', name: '\uDE00Ops\u200F' },
    ];
    const { outcome, event } = await post(message, undefined, undefined, {
      anomalyId: anomalyRecordId(message, 'oncall'),
      destination: 'oncall',
      costCenters,
    });
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(event.payload?.custom_details?.['cost centers']).toBe('Data Platform ＜!here＞ \uFFFD, \uFFFDOps');
  });

  it('sends no lone surrogate: half an emoji in sender text reaches PagerDuty as U+FFFD, a whole one as it is', async () => {
    const { outcome, event } = await post(
      alert('EC2 \uD83D spend 😀 rose', { message: 'up \uDE00 212% 🚀', account_name: 'Payer \uD800' }),
      { kind: 'follow_up', firstSeenAt: '2026-11-26T09:00:00Z', updates: 1, triage: { state: 'acknowledged', by: 'Dana \uDBFF', at: 1 } },
    );
    expect(outcome).toEqual({ kind: 'delivered' });
    const raw = fake.requests.at(-1)?.body as unknown as PagerDutyEvent;
    expect(JSON.stringify(raw)).not.toMatch(/\\ud[89ab][0-9a-f]{2}|\\ud[c-f][0-9a-f]{2}/i);
    expect(JSON.stringify(raw)).not.toMatch(/\p{Cs}/u);
    expect(event.payload?.summary).toBe('EC2 \uFFFD spend 😀 rose');
    expect(event.payload?.custom_details).toMatchObject({ message: 'up \uFFFD 212% 🚀', 'account name': 'Payer \uFFFD' });
  });

  it('an alert whose title and kind are blank once cleaned is still taken, its summary saying where it came from', async () => {
    const message = webhookMessageSchema.parse({
      metadata: { object_type: '\u0000\u202E' },
      payload: { title: '\u200F\u0007', message: 'Budget at 90%' },
    });
    const { outcome, event } = await post(message);
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(event.payload?.summary).toBe('Alert from the cost platform');
  });

  it('sends a timestamp PagerDuty’s date-time takes, or none: an epoch past the year 9999 is a detail as sent', async () => {
    const at = (timestamp: string) =>
      webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert', timestamp }, payload: { title: 'EC2 spend rose' } });
    const far = await post(at('999999999999'));
    expect(far.outcome).toEqual({ kind: 'delivered' });
    expect(far.event.payload).not.toHaveProperty('timestamp');
    expect(far.event.payload?.custom_details).toMatchObject({ time: '999999999999' });
    const last = await post(at('253402300799'));
    expect(last.event.payload?.timestamp).toBe('9999-12-31T23:59:59Z');
    expect((await post(at('1795773600000'))).event.payload?.timestamp).toBe('2026-11-27T10:00:00Z');
  });

  it('is a warning unless the destination says otherwise', async () => {
    const service = serviceOf({ type: 'pagerduty', routingKey: OTHER_KEY });
    await service.post(OTHER_KEY, service.format(alert('S3 spend rose'), { type: 'pagerduty', routingKey: OTHER_KEY }), {
      timeoutMs: 2_000,
    });
    expect(fake.requests.at(-1)?.body['payload']).toMatchObject({ severity: 'warning' });
  });

  it('reads the anomaly’s id only when it posts, and never puts the routing key in what it formats', () => {
    let reads = 0;
    const context = {
      get anomalyId() {
        reads++;
        return 'anomaly#1';
      },
      destination: 'oncall',
    };
    const payload = serviceOf().format(alert('EC2 spend rose'), oncall, undefined, { link: LINK }, context);
    expect(reads).toBe(0);
    expect(JSON.stringify(payload)).not.toContain(KEY);
  });

  it("posts to PagerDuty's own endpoint unless PAGERDUTY_EVENTS_URL says otherwise", async () => {
    const urls: string[] = [];
    const recording: NodeFetch = async (url, init) => {
      urls.push(String(url));
      return fetchOverNodeHttp(fake.url, init);
    };
    const service = serviceFor(createChatServices(recording, {}), oncall);
    expect(await service.post(KEY, service.format(alert('EC2 spend rose'), oncall), { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    expect(urls).toEqual([DEFAULT_PAGERDUTY_EVENTS_URL]);
    expect(DEFAULT_PAGERDUTY_EVENTS_URL).toBe('https://events.pagerduty.com/v2/enqueue');
  });

  it('through the delivery core: the dedup key is the anomaly at the named destination, and a refusal is parked without the key', async () => {
    const clock = manualClock();
    const log = capturedLogger();
    const deadLetters = memoryDeadLetters();
    const delivery = createDelivery({
      services: createChatServices(fetchOverNodeHttp, env()),
      postTimeoutMs: 2_000,
      deadLetters,
      logger: log.logger,
      now: clock.now,
      sleep: clock.sleep,
      triage: ({ origin }) => (origin ? { link: `${origin}/triage/t` } : undefined),
    });
    const target: Target = { name: 'oncall', destination: oncall };
    const message = alert('EC2 spend rose');
    expect(await delivery.first({ deliveryId: 'd1', target, message, origin: 'https://api.example.org' }, budgetOf(10_000))).toEqual({
      kind: 'delivered',
    });
    const event = fake.requests.at(-1)?.body as unknown as PagerDutyEvent;
    expect(event.dedup_key).toBe(anomalyRecordId(message, 'oncall'));
    expect(event.links).toEqual([{ href: 'https://api.example.org/triage/t', text: 'Triage' }]);

    fake.queue(KEY, { kind: 'error', status: 400 });
    expect(await delivery.first({ deliveryId: 'd2', target, message: alert('RDS spend rose') }, budgetOf(10_000))).toEqual({
      kind: 'refused',
      reason: 'invalid_event',
    });
    expect(deadLetters.parked).toHaveLength(1);
    expect(deadLetters.parked[0]).toMatchObject({ reason: 'invalid_event', destination: 'oncall' });
    expect(JSON.stringify(deadLetters.parked) + log.lines.join('\n')).not.toContain(KEY);
  });
});

describe('what a triage action sends', () => {
  const noteFor = async (action: TriageAction, destination: PagerDutyDestination = oncall) =>
    (await KINDS.pagerduty.extras()).triageNote(destination, {
      action,
      line: `Done by Dana <!here> [x](https://evil.example) at 2026-11-26T10:00:00Z`,
      by: 'Dana <!here> [x](https://evil.example)',
      at: 1_795_773_600,
      destination: 'oncall',
      anomalyId: anomalyRecordId(alert('EC2 spend rose'), 'oncall'),
      title: 'EC2 spend rose <!channel> *now*',
      account: 'Prod <@U1> (123456789012)',
      link: 'https://api.example.org/triage/t',
    }) as { events: PagerDutyEvent[] };

  it('maps every action: acknowledge and snooze acknowledge, expected resolves, reopen resolves and triggers again', () => {
    expect(Object.keys(PAGERDUTY_TRIAGE_EVENTS).sort()).toEqual([...TRIAGE_ACTIONS].sort());
    expect(PAGERDUTY_TRIAGE_EVENTS).toEqual({
      acknowledge: ['acknowledge'],
      snooze: ['acknowledge'],
      expected: ['resolve'],
      reopen: ['resolve', 'trigger'],
    });
  });

  it('names the alert the anomaly’s opening has, and PagerDuty changes that alert; a reopen opens a new one, which pages', async () => {
    const message = alert('EC2 spend rose');
    await post(message);
    const key = anomalyRecordId(message, 'oncall');
    const service = serviceOf();
    const send = async (action: TriageAction) => {
      const note = await noteFor(action);
      for (const event of note.events) expect(event.dedup_key).toBe(key);
      const before = fake.requests.length;
      expect(await service.post(KEY, note, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
      return fake.requests.slice(before).map((r) => r.body as unknown as PagerDutyEvent & { routing_key: string });
    };

    expect(await send('acknowledge')).toEqual([{ routing_key: KEY, event_action: 'acknowledge', dedup_key: key }]);
    expect(fake.alerts.get(key)?.status).toBe('acknowledged');
    expect((await send('snooze')).map((e) => e.event_action)).toEqual(['acknowledge']);
    // A trigger would merge into the acknowledged alert without notifying anyone: it is resolved first.
    const reopened = await send('reopen');
    expect(reopened.map((e) => e.event_action)).toEqual(['resolve', 'trigger']);
    expect(reopened[1]).toMatchObject({ dedup_key: key, payload: { source: 'cost-alert-relay', severity: 'error' } });
    expect(fake.alerts.get(key)).toMatchObject({ status: 'triggered', triggers: 1 });
    expect(fake.pages(key)).toBe(2);
    expect(await send('expected')).toEqual([{ routing_key: KEY, event_action: 'resolve', dedup_key: key }]);
    expect(fake.alerts.get(key)?.status).toBe('resolved');
    expect((await noteFor('reopen', { type: 'pagerduty', routingKey: KEY })).events[1]?.payload?.severity).toBe('warning');
  });

  it('a refused resolve sends no trigger: the outcome is the first event PagerDuty does not take', async () => {
    fake.queue(KEY, { kind: 'error', status: 400 });
    expect(await serviceOf().post(KEY, await noteFor('reopen'), { timeoutMs: 2_000 })).toEqual({
      kind: 'refused',
      reason: 'invalid_event',
    });
    expect(fake.requests.map((r) => r.body['event_action'])).toEqual(['resolve']);
  });

  it('a reopen is titled with the alert’s title, says who reopened it in its details, and links to its Triage page', async () => {
    const [, event] = (await noteFor('reopen')).events;
    // A new alert is opened from this event: it must read as the alert, not as the note.
    expect(event?.payload?.summary).toBe('EC2 spend rose ＜!channel＞ ＊now＊');
    expect(event?.payload?.custom_details).toEqual({
      triage: 'Done by Dana ＜!here＞ [x](https://evil.example) at 2026-11-26T10:00:00Z',
      account: 'Prod ＜＠U1＞ (123456789012)',
    });
    expect(event?.links).toEqual([{ href: 'https://api.example.org/triage/t', text: 'Triage' }]);
    expect(JSON.stringify(event)).not.toContain(KEY);
    // A link whose alert had no title (only a message): the note is the summary rather than nothing.
    const untitled = (await KINDS.pagerduty.extras()).triageNote(oncall, {
      action: 'reopen',
      line: 'Reopened by Dana at 2026-11-26T10:00:00Z',
      by: 'Dana',
      at: 1_795_773_600,
      destination: 'oncall',
      anomalyId: 'anomaly#x',
      title: '',
    }) as { events: PagerDutyEvent[] };
    expect(untitled.events[1]?.payload?.summary).toBe('Reopened by Dana at 2026-11-26T10:00:00Z');
    expect(untitled.events[1]?.links).toBeUndefined();
    for (const action of ['acknowledge', 'snooze', 'expected'] as const) {
      for (const event of (await noteFor(action)).events) expect(event.payload).toBeUndefined();
    }
  });
});

describe('PagerDuty’s answers', () => {
  const answer = (status: number, body = '', retryAfter: string | null = null) => classifyPagerDutyAnswer({ status, body, retryAfter });

  it('202 is delivered; 400 is refused with PagerDuty’s status word; 401, 403 and 404 are refused by status', () => {
    expect(answer(202, '{"status":"success","message":"Event processed","dedup_key":"k"}')).toEqual({ kind: 'delivered' });
    expect(answer(400, '{"status":"invalid event","message":"Event object is invalid","errors":["x"]}')).toEqual({
      kind: 'refused',
      reason: 'invalid_event',
    });
    expect(answer(400, '{"status":"Unrecognized object"}')).toEqual({ kind: 'refused', reason: 'unrecognized_object' });
    for (const status of [401, 403, 404]) expect(answer(status, 'Forbidden')).toEqual({ kind: 'refused', reason: `http_${status}` });
  });

  it('429 waits as its Retry-After says, or as the core backs off; 408 and 5xx are retryable', () => {
    expect(answer(429, '', '3')).toEqual({ kind: 'retryable', reason: 'http_429', retryAfterMs: 3_000 });
    expect(answer(429)).toEqual({ kind: 'retryable', reason: 'http_429' });
    expect(answer(500, '{"status":"Error"}')).toEqual({ kind: 'retryable', reason: 'error' });
    expect(answer(503)).toEqual({ kind: 'retryable', reason: 'http_503' });
    expect(answer(408)).toEqual({ kind: 'retryable', reason: 'http_408' });
  });

  it('takes only a few short words for a reason: a key echoed back, a long or odd status, is not one', () => {
    for (const status of [KEY, 'abcdefghijklmnopqrstuvwxyzabcdef', 'invalid event: R0ONCALL', 'a b c d e', 42])
      expect(answer(400, JSON.stringify({ status }))).toEqual({ kind: 'refused', reason: 'http_400' });
    expect(answer(400, 'not json')).toEqual({ kind: 'refused', reason: 'http_400' });
    expect(answer(400, 'null')).toEqual({ kind: 'refused', reason: 'http_400' });
  });

  it('a redirect is refused (the key is not sent on), a hang and a broken connection are retryable', async () => {
    const service = serviceOf();
    const payload = service.format(alert('EC2 spend rose'), oncall);
    fake.queue(KEY, { kind: 'redirect' });
    expect(await service.post(KEY, payload, { timeoutMs: 2_000 })).toEqual({ kind: 'refused', reason: 'redirect_refused' });
    expect(fake.requests).toHaveLength(1);
    fake.queue(KEY, { kind: 'hang' });
    expect(await service.post(KEY, payload, { timeoutMs: 200 })).toEqual({ kind: 'retryable', reason: 'timeout' });
    const closed = serviceFor(createChatServices(fetchOverNodeHttp, { PAGERDUTY_EVENTS_URL: 'http://127.0.0.1:1/v2/enqueue' }), oncall);
    expect(await closed.post(KEY, payload, { timeoutMs: 2_000 })).toEqual({ kind: 'retryable', reason: 'network_error' });
  });
});

describe('PagerDuty’s pace', () => {
  it('is about 120 events a minute per integration key, keyed by a hash that does not hold the key', () => {
    const service: ChatService = serviceOf();
    expect(service.minIntervalMs).toBeGreaterThanOrEqual(500);
    expect(service.minIntervalMs).toBeLessThan(1_000);
    const paceKey = service.paceKey(KEY);
    expect(paceKey).toBe(pagerDutyPaceKey(KEY));
    expect(paceKey).toMatch(/^[0-9a-f]{64}$/);
    expect(paceKey).not.toContain(KEY);
    expect(paceKey).not.toContain(KEY.slice(0, 8));
    expect(service.paceKey(OTHER_KEY)).not.toBe(paceKey);
  });
});

describe('PagerDuty under npm start', () => {
  const event = (extra: Record<string, unknown> = {}) => ({
    routing_key: KEY,
    event_action: 'trigger',
    dedup_key: 'anomaly#1',
    payload: {
      summary: 'EC2 spend rose <script>alert(1)</script>',
      source: 'cost-alert-relay',
      severity: 'warning',
      component: '123456789012',
      group: 'aws',
      class: 'anomaly_alert',
      custom_details: { message: '<img src=x onerror=alert(1)>', update: 2 },
    },
    links: [{ href: LINK, text: 'Triage' }],
    ...extra,
  });

  it('its console answers as the Events API does and shows the event without the routing key', () => {
    const console = tools.createConsole();
    const answer = console('', event());
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.body ?? '')).toEqual({ status: 'success', message: 'Event processed', dedup_key: 'anomaly#1' });
    const printed = answer.show.join('\n');
    expect(printed).toContain('EC2 spend rose');
    expect(printed).toContain(LINK);
    expect(printed + JSON.stringify(answer.record)).not.toContain(KEY);
    expect(answer.record).toMatchObject({ event_action: 'trigger', dedup_key: 'anomaly#1' });

    const made = console('', event({ dedup_key: undefined }));
    expect(JSON.parse(made.body ?? '').dedup_key).toMatch(/^[0-9a-f]{32}$/);
    expect(console('', event({ event_action: 'acknowledge', payload: undefined, links: undefined })).status).toBe(202);
  });

  it('its console refuses what PagerDuty refuses, in PagerDuty’s words', () => {
    const console = tools.createConsole();
    for (const body of [
      event({ routing_key: 'short' }),
      event({ event_action: 'snooze' }),
      event({ event_action: 'resolve', dedup_key: undefined }),
      event({ payload: {} }),
    ]) {
      const answer = console('', body);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body ?? '')).toMatchObject({ status: 'invalid event', message: 'Event object is invalid' });
      expect(answer.record).toBeUndefined();
    }
  });

  it('npm start points PAGERDUTY_EVENTS_URL at the console, at /console/pagerduty', () => {
    expect(tools.consoleEnvironment?.('http://127.0.0.1:3000/console')).toEqual({
      PAGERDUTY_EVENTS_URL: 'http://127.0.0.1:3000/console/pagerduty',
    });
    expect(consolePathOf('/console/pagerduty')).toEqual({ type: 'pagerduty', rest: '' });
  });

  it("its console and preview show the account's cost-trend picture: loaded from an https or loopback address only", () => {
    const picture = 'https://api.example.com/chart/token-1';
    const answer = tools.createConsole()('', event({ images: [{ src: picture, alt: 'Daily cost, 30 days' }] }));
    expect(answer.show.join('\n')).toContain(`[picture]\x1b[0m ${picture}`);
    const page = tools.preview(answer.record, '09:00:00').value;
    expect(page).toContain(`<img class="picture" src="${picture}" alt="Daily cost, 30 days"`);
    // Anyone on this machine may post to a console path: another address shows the alt text, never loads.
    const elsewhere = tools.preview(event({ images: [{ src: 'javascript:alert(1)', alt: '<b>cost</b>' }, { src: 7 }] }), 't').value;
    expect(elsewhere).not.toContain('<img');
    expect(elsewhere).toContain('[picture: &lt;b&gt;cost&lt;/b&gt;]');
    expect(elsewhere).toContain('[picture: no address]');
  });

  it('its preview shows the incident with every value escaped, and follows only an https or loopback link', () => {
    const page = tools.preview(tools.createConsole()('', event()).record, '09:00:00').value;
    expect(page).toContain('EC2 spend rose &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).toContain(`href="${LINK}"`);
    expect(page).toContain('component: 123456789012 · group: aws · class: anomaly_alert');
    expect(page).toContain('<dt>update</dt><dd>2</dd>');
    const hostile = tools.preview(
      event({ event_action: '<b>x</b>', links: [{ href: 'javascript:alert(1)', text: '"><b>' }], dedup_key: 7 }),
      't',
    ).value;
    expect(hostile).not.toContain('href="javascript');
    expect(hostile).not.toContain('<b>');
    expect(hostile).toContain('(an event action &quot;&lt;b&gt;x&lt;/b&gt;&quot;: not drawn by this approximation');
    expect(hostile).toContain('dedup key: (PagerDuty makes one)');
    expect(tools.preview('not an object', 't').value).toContain('not drawn by this approximation');
  });
});
