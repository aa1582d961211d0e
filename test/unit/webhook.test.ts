// The webhook destination kind in process: its configuration, the Standard Webhooks events it
// posts (verified with the `standardwebhooks` library itself, as a receiver would), the
// `webhook-id` a retry keeps, its triage and summary events, and how `npm start` shows it.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import { postingOver } from '../../lib/chat/post-json.js';
import { type AnomalyPost, OPENING, type PostOutcome } from '../../lib/chat/service.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { createDelivery, type Target } from '../../lib/delivery/deliver.js';
import type { SummaryWeek } from '../../lib/format/summary.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import type { DestinationKind, TriageNote } from '../../lib/notify/kind.js';
import { createChatServices, KINDS } from '../../lib/notify/kinds.js';
import { toolsOf } from '../../lib/notify/tools.js';
import type { WebhookDestination } from '../../lib/notify/webhook/config.js';
import { MAX_BODY_BYTES, type WebhookPost } from '../../lib/notify/webhook/event.js';
import { postWebhook } from '../../lib/notify/webhook/lazy-webhook-post.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createRelay } from '../../lib/relay/relay.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch } from '../../lib/retry/process-batch.js';
import { describeIssues } from '../../lib/shared/zod-issues.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, manualClock, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { closeServer } from '../helpers/loopback-server.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const KEY_PART = SECRET.slice('whsec_'.length);
const LINK = 'https://api.example.com/triage/token-1';
// Sender text that would ping, link or format in a chat: for a receiver's code it is data, as sent.
const received = {
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z', platform_event_id: 'evt-42' },
  payload: {
    title: '<!channel> EC2 spend *up* [x](https://evil.example)',
    message: 'Daily cost rose 212% \u202E <script>alert(1)</script>',
    account_id: 123456789012,
    account_name: 'Production payer',
    cloud_provider_type: 'aws',
    tags: { team: 'data' },
  },
};
const message = { ...webhookMessageSchema.parse(received), received };

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}
type Answer = { status: number; headers?: Record<string, string> };

/** A receiver on loopback: keeps every request as it came, answers from a script (then 204). */
async function startReceiver() {
  const requests: Received[] = [];
  const answers: Answer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers.shift() ?? { status: 204 };
      res.writeHead(answer.status, answer.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/cost`,
    requests,
    answers,
    close: () => closeServer(server),
  };
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterEach(() => {
  receiver.requests.length = 0;
  receiver.answers.length = 0;
});
afterAll(() => receiver.close());

const destination = (): WebhookDestination => ({ type: 'webhook', url: receiver.url, secret: SECRET });

/** What a receiver does with a request: `standardwebhooks` verifies it (or throws) and hands back the event. */
const verified = (request: Received | undefined, secret = SECRET) =>
  new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };

const service = () => KINDS.webhook.services({ posting: postingOver() }).webhook;

describe('a webhook destination in the configuration', () => {
  const problemsOf = (destinations: Record<string, unknown>) => {
    const parsed = relayConfigSchema.safeParse({ auth: { method: 'none' }, destinations });
    return parsed.success ? [] : describeIssues(parsed.error, relayConfigSchema).map((p) => `${p.path}: ${p.problem}`);
  };

  it('takes a URL and a Standard Webhooks secret of 24 to 64 bytes, with escalation and a weekly summary', () => {
    // With its padding, and without it (as some generators write it): both decode to the one key.
    const padded = [24, 32, 64].map((bytes) => `whsec_${randomBytes(bytes).toString('base64')}`);
    const unpadded = [25, 31, 62].map((bytes) => `whsec_${randomBytes(bytes).toString('base64').replace(/=+$/, '')}`);
    for (const secret of [...padded, ...unpadded]) {
      expect(problemsOf({ default: { type: 'webhook', url: 'https://automation.example.com/cost', secret } }), secret).toEqual([]);
    }
    expect(
      problemsOf({
        default: {
          type: 'webhook',
          url: 'https://automation.example.com/cost',
          secret: SECRET,
          escalate: { afterMinutes: 60, to: 'oncall' },
          summary: { weekday: 'monday', hour: 9 },
        },
        oncall: { type: 'webhook', url: 'http://127.0.0.1:8080/oncall', secret: SECRET },
      }),
    ).toEqual([]);
  });

  it('refuses a secret of another form, naming the form and never the value', () => {
    const refused = [
      randomBytes(32).toString('base64'),
      `whsec_${randomBytes(16).toString('base64')}`,
      `whsec_${randomBytes(65).toString('base64')}`,
      `whsec_${randomBytes(32).toString('base64url')}-`,
      `whsec_${randomBytes(32).toString('base64')}!`,
    ];
    for (const secret of refused) {
      const problems = problemsOf({ default: { type: 'webhook', url: 'https://automation.example.com/cost', secret } });
      expect(problems, secret).toEqual([
        'destinations.default.secret: must be "whsec_" followed by the base64 of 24 to 64 random bytes (a Standard Webhooks secret)',
      ]);
      expect(problems.join('\n')).not.toContain(secret.slice(6, 20));
    }
  });

  it('takes no mention or group, and says which type a destination with its secret but no type lacks', () => {
    const url = 'https://automation.example.com/cost';
    expect(problemsOf({ default: { type: 'webhook', url, secret: SECRET, mention: '<!here>' } })).toEqual([
      'destinations.default.mention: is for chat destinations (slack, teams, googlechat) only, not webhook',
    ]);
    expect(problemsOf({ default: { type: 'webhook', url, secret: SECRET, group: { waitSeconds: 60 } } })).toEqual([
      'destinations.default.group: is for chat destinations (slack, teams, googlechat) only, not webhook',
    ]);
    const problems = problemsOf({ default: { type: 'webhook', url, secret: SECRET }, hooks: { url, secret: SECRET } });
    expect(problems).toEqual(['destinations.hooks: unknown key "secret"; a webhook destination needs "type": "webhook"']);
    expect(problems.join('\n')).not.toContain(KEY_PART);
    expect(problemsOf({ default: { type: 'webhooks', url, secret: SECRET } })).toEqual([
      expect.stringMatching(/^destinations\.default\.type: must be one of .*"webhook"; did you mean "webhook"\?$/),
    ]);
  });
});

describe('an alert, signed as Standard Webhooks', () => {
  const target = (): Target => ({ name: 'hooks', destination: destination() });
  const attempt = (anomaly: AnomalyPost, escalation?: { from: string; afterMinutes: number }) => {
    const clock = manualClock();
    const delivery = createDelivery({
      services: createChatServices(),
      postTimeoutMs: 2_000,
      logger: capturedLogger().logger,
      now: clock.now,
      sleep: clock.sleep,
      triage: () => ({ link: LINK }),
    });
    const costCenters = [{ id: 'cc-42', name: 'Data Platform' }];
    return delivery.attempt(target(), message, budgetOf(10_000), anomaly, { origin: 'https://api.example.com', costCenters, escalation });
  };

  it('carries the cost-trend picture as chartUrl where the post has one, and none where it has none', async () => {
    const context = { anomalyId: 'anomaly#a', destination: 'hooks', chartUrl: 'https://api.example.com/chart/token-1' };
    await service().post(receiver.url, service().format(message, destination(), OPENING, undefined, context), { timeoutMs: 2_000 });
    await service().post(receiver.url, service().format(message, destination(), OPENING, undefined, { ...context, chartUrl: undefined }), {
      timeoutMs: 2_000,
    });
    const [pictured, plain] = receiver.requests.map((request) => verified(request).data);
    expect(pictured?.['chartUrl']).toBe('https://api.example.com/chart/token-1');
    expect(plain).not.toHaveProperty('chartUrl');
  });

  it('an opening: a verified cost_alert.opened, the alert exactly as received, the anomaly, cost centers and Triage link', async () => {
    expect(await attempt(OPENING)).toEqual({ kind: 'delivered' });
    const [request] = receiver.requests;
    expect(request?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(request?.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Number(request?.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    expect(request?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = verified(request);
    expect(event).toEqual({
      type: 'cost_alert.opened',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      data: {
        destination: 'hooks',
        anomaly: { id: anomalyRecordId(message, 'hooks'), update: 0, firstSeen: event.timestamp },
        metadata: received.metadata,
        payload: received.payload,
        costCenters: [{ id: 'cc-42', name: 'Data Platform' }],
        triageUrl: LINK,
      },
    });
  });

  it('a receiver with another secret, or a body changed on the way, refuses it', async () => {
    await attempt(OPENING);
    const [request] = receiver.requests;
    expect(() => verified(request, `whsec_${randomBytes(32).toString('base64')}`)).toThrow(/signature/i);
    expect(() => verified({ headers: request?.headers ?? {}, body: (request?.body ?? '').replace('212%', '213%') })).toThrow(/signature/i);
  });

  it('a follow-up is cost_alert.updated and an escalation cost_alert.escalated, each its own message with its own id', async () => {
    const followUp: AnomalyPost = {
      kind: 'follow_up',
      firstSeenAt: '2026-11-26T08:00:00Z',
      updates: 2,
      triage: { state: 'acknowledged', by: 'Dana', at: Date.parse('2026-11-26T09:30:00Z') / 1000 },
    };
    await attempt(OPENING);
    await attempt(followUp);
    await attempt({ ...followUp, updates: 3 });
    await attempt(OPENING, { from: 'finops <!here>', afterMinutes: 240 });
    const [opened, updated, again, escalated] = receiver.requests.map((request) => verified(request));
    expect(opened?.type).toBe('cost_alert.opened');
    expect(updated).toMatchObject({
      type: 'cost_alert.updated',
      data: {
        anomaly: {
          update: 2,
          firstSeen: '2026-11-26T08:00:00Z',
          triage: { state: 'acknowledged', by: 'Dana', at: '2026-11-26T09:30:00Z' },
        },
      },
    });
    expect(again?.data['anomaly']).toMatchObject({ update: 3 });
    expect(escalated).toMatchObject({ type: 'cost_alert.escalated', data: { escalatedFrom: 'finops <!here>', afterMinutes: 240 } });
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size).toBe(4);
  });

  it('every attempt at one message carries the same webhook-id, signed anew with its own time', async () => {
    const post: WebhookPost = service().format(
      message,
      destination(),
      OPENING,
      { link: LINK },
      { anomalyId: 'anomaly#a', destination: 'hooks' },
    );
    const now = Date.now();
    expect(await postWebhook(postingOver(), receiver.url, post, { timeoutMs: 2_000 }, () => now - 120_000)).toEqual({ kind: 'delivered' });
    expect(await postWebhook(postingOver(), receiver.url, post, { timeoutMs: 2_000 }, () => now)).toEqual({ kind: 'delivered' });
    const [first, second] = receiver.requests;
    expect(first?.headers['webhook-id']).toBe(second?.headers['webhook-id']);
    expect(Number(second?.headers['webhook-timestamp']) - Number(first?.headers['webhook-timestamp'])).toBe(120);
    expect(first?.headers['webhook-signature']).not.toBe(second?.headers['webhook-signature']);
    for (const request of [first, second]) expect(verified(request).type).toBe('cost_alert.opened');
  });

  it('the secret is in no body, header, outcome or serialized payload: it only keys the signature', async () => {
    receiver.answers.push({ status: 400 }, { status: 503 });
    const outcomes: PostOutcome[] = [await attempt(OPENING), await attempt(OPENING), await attempt(OPENING)];
    const post = service().format(message, destination(), OPENING, undefined, { anomalyId: 'anomaly#a', destination: 'hooks' });
    const seen = [JSON.stringify(receiver.requests), JSON.stringify(outcomes), JSON.stringify(post) ?? '', JSON.stringify({ post })].join(
      '\n',
    );
    expect(seen).not.toContain(KEY_PART);
    expect(seen).not.toContain(Buffer.from(KEY_PART, 'base64').toString('hex'));
    expect(outcomes.slice(0, 2)).toEqual([
      { kind: 'refused', reason: 'http_400' },
      { kind: 'retryable', reason: 'http_503' },
    ]);
  });

  it('is refused, never cut, when its body would be larger than a receiver takes', async () => {
    const huge = { ...message, received: { ...received, payload: { ...received.payload, notes: 'x'.repeat(MAX_BODY_BYTES) } } };
    const post = service().format(huge, destination(), OPENING, undefined, { anomalyId: 'anomaly#a', destination: 'hooks' });
    expect(await service().post(receiver.url, post, { timeoutMs: 2_000 })).toEqual({ kind: 'refused', reason: 'event_too_large' });
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('how the delivery core treats it', () => {
  it('a follow-up never waits for an opening (nothing is edited), every event carries the Triage link, and the pace key names no URL', () => {
    const kind: DestinationKind<WebhookDestination> = KINDS.webhook;
    const hooks = destination();
    expect(kind.editsOpening(hooks)).toBe(false);
    expect(kind.links(hooks)).toBe(true);
    expect(kind.addressOf(hooks)).toBe(receiver.url);
    expect(kind.serviceKey(hooks)).toBe('webhook');
    const key = service().paceKey(receiver.url);
    expect(key).toMatch(/^webhook:[0-9a-f]{64}$/);
    expect(key).not.toContain('127.0.0.1');
    expect(service().paceKey(`${receiver.url}/other`)).not.toBe(key);
  });
});

describe('a retry from the queue', () => {
  it('keeps the webhook-id of the first attempt, after a 503 and a 429 with Retry-After', async () => {
    const config = relayConfigSchema.parse({ auth: { method: 'none' }, destinations: { default: destination() } });
    const clock = manualClock();
    const { logger } = capturedLogger();
    const store = memoryConfigStore({ config });
    const retryQueue = memoryRetryQueue();
    const ports = { services: createChatServices(), postTimeoutMs: 2_000, logger, now: clock.now, sleep: clock.sleep };
    const relay = createRelay({
      config: store,
      authenticate: createRequestAuthenticator({ check: createAuthenticator(), store, graceMs: 0, now: clock.now }),
      first: createDelivery({ ...ports, retryQueue }).first,
      logger,
      now: clock.now,
    });
    receiver.answers.push({ status: 503 });
    const request = {
      requestId: 'r-1',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(received),
      isBase64Encoded: false,
    };
    expect((await relay(request, budgetOf(10_000))).statusCode).toBe(202);
    const [queued] = retryQueue.jobs;
    // The job names the destination; its secret stays in the configuration.
    expect(JSON.stringify(queued?.job)).not.toContain(KEY_PART);

    const visibility: number[] = [];
    const retry = (receives: number) =>
      processBatch(
        [
          {
            messageId: 'm0',
            receiptHandle: 'h0',
            body: JSON.stringify(queued?.job),
            attributes: { ApproximateReceiveCount: String(receives) },
          },
        ],
        {
          config: store,
          delivery: createDelivery(ports),
          messages: {
            changeVisibility: async (_handle: string, seconds: number) => void visibility.push(seconds),
          } as unknown as QueueMessageOps,
          pacer: createPacer(clock.now, clock.sleep),
          maxAttempts: 5,
          postTimeoutMs: 2_000,
          logger,
          budget: budgetOf(60_000),
        },
      );
    receiver.answers.push({ status: 429, headers: { 'retry-after': '120' } });
    expect(await retry(1)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
    expect(visibility).toEqual([120]);
    expect(await retry(2)).toEqual({ batchItemFailures: [] });

    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(1);
    for (const r of receiver.requests) expect(verified(r).data['payload']).toEqual(received.payload);
  });
});

describe('triage and summary events', () => {
  const note = (action: TriageNote['action'], by = 'Dana <!here>'): TriageNote => ({
    action,
    line: `${action} by ${by}`,
    by,
    at: Date.parse('2026-11-26T09:30:00Z') / 1000,
    destination: 'hooks',
    anomalyId: 'anomaly#abc',
    title: 'EC2 spend rose',
    account: 'Production payer (123456789012)',
    link: LINK,
  });

  it('an action through the Triage link is a verified cost_alert.triaged: the anomaly, action, by and at; one id per action', async () => {
    const extras = await KINDS.webhook.extras();
    for (const payload of [extras.triageNote(destination(), note('acknowledge')), extras.triageNote(destination(), note('acknowledge'))]) {
      expect(await service().post(receiver.url, payload as WebhookPost, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    }
    await service().post(receiver.url, extras.triageNote(destination(), note('expected')) as WebhookPost, { timeoutMs: 2_000 });
    const [first, repeat, expected] = receiver.requests;
    expect(verified(first)).toEqual({
      type: 'cost_alert.triaged',
      timestamp: '2026-11-26T09:30:00Z',
      data: {
        destination: 'hooks',
        anomaly: { id: 'anomaly#abc' },
        title: 'EC2 spend rose',
        account: 'Production payer (123456789012)',
        action: 'acknowledge',
        by: 'Dana <!here>',
        at: '2026-11-26T09:30:00Z',
        triageUrl: LINK,
      },
    });
    expect(repeat?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(expected?.headers['webhook-id']).not.toBe(first?.headers['webhook-id']);
    expect(verified(expected).data['action']).toBe('expected');
  });

  const from = Date.parse('2026-11-16T08:00:00Z') / 1000;
  const week = (count: number): SummaryWeek => ({
    destination: 'hooks',
    from,
    to: from + 7 * 86_400,
    asOf: from + 7 * 86_400,
    timeZone: 'Europe/Berlin',
    counts: { open: count, acknowledged: 0, expected: 0, snoozed: 0 },
    anomalies: Array.from({ length: count }, (_, i) => ({
      id: `anomaly#${i}`,
      title: `A${i} ${'EC2 spend rose <!here> '.repeat(20)}`,
      account: 'Production payer (123456789012)',
      accountId: '123456789012',
      accountName: 'Production payer',
      firstSeen: from + 3_600 * (i + 1),
      updates: i % 3,
      state: 'open' as const,
      link: `${LINK}-${i}`,
    })),
  });

  it('a week is a verified cost_alert.summary: the destination, the week and a record per anomaly', async () => {
    const extras = await KINDS.webhook.extras();
    const withTriaged: SummaryWeek = {
      ...week(1),
      counts: { open: 1, acknowledged: 1, expected: 0, snoozed: 0 },
      anomalies: [
        ...week(1).anomalies,
        {
          id: 'anomaly#s3',
          title: 'S3 up',
          account: '222222222222',
          accountId: '222222222222',
          firstSeen: from + 7_200,
          updates: 0,
          state: 'acknowledged',
          by: 'Dana',
          at: from + 9_000,
        },
      ],
    };
    await service().post(receiver.url, extras.summary(destination(), withTriaged) as WebhookPost, { timeoutMs: 2_000 });
    const event = verified(receiver.requests[0]);
    expect(event).toEqual({
      type: 'cost_alert.summary',
      timestamp: '2026-11-23T08:00:00Z',
      data: {
        destination: 'hooks',
        from: '2026-11-16T08:00:00Z',
        to: '2026-11-23T08:00:00Z',
        timeZone: 'Europe/Berlin',
        counts: { open: 1, acknowledged: 1, expected: 0, snoozed: 0 },
        anomalies: [
          {
            id: 'anomaly#0',
            title: week(1).anomalies[0]?.title,
            accountId: '123456789012',
            accountName: 'Production payer',
            state: 'open',
            firstSeen: '2026-11-16T09:00:00Z',
            updates: 0,
            triagedBy: null,
            triageUrl: `${LINK}-0`,
          },
          {
            id: 'anomaly#s3',
            title: 'S3 up',
            accountId: '222222222222',
            state: 'acknowledged',
            firstSeen: '2026-11-16T10:00:00Z',
            updates: 0,
            triagedBy: 'Dana',
            triagedAt: '2026-11-16T10:30:00Z',
          },
        ],
      },
    });
  });

  it('a week too long for one body names as many as fit and how many it leaves out; the same week keeps its id', async () => {
    const extras = await KINDS.webhook.extras();
    const long = week(3_000);
    await service().post(receiver.url, extras.summary(destination(), long) as WebhookPost, { timeoutMs: 2_000 });
    await service().post(receiver.url, extras.summary(destination(), long) as WebhookPost, { timeoutMs: 2_000 });
    const [first, again] = receiver.requests;
    expect(Buffer.byteLength(first?.body ?? '')).toBeLessThanOrEqual(MAX_BODY_BYTES);
    const { data } = verified(first);
    const named = (data['anomalies'] as unknown[]).length;
    expect(named).toBeGreaterThan(100);
    expect(named + Number(data['notShown'])).toBe(3_000);
    expect(again?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
  });
});

describe('npm start and the preview page', () => {
  it('the console answers as a receiver does and prints the event; the preview shows it escaped', async () => {
    const tools = await toolsOf('webhook');
    const body = { type: 'cost_alert.opened', timestamp: '2026-11-26T09:00:00Z', data: { payload: { title: '<script>x</script>' } } };
    const answer = tools.createConsole()('', body);
    expect(answer.status).toBe(204);
    expect(answer.show.join('\n')).toContain('cost_alert.opened');
    expect(answer.record).toBe(body);
    const preview = tools.preview(body, '09:00').toString();
    expect(preview).toContain('cost_alert.opened');
    expect(preview).not.toContain('<script>');
    expect(tools.preview({}, '09:00').toString()).toContain('without an event type');
  });
});
