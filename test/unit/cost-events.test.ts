import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCostApiClient } from '../../lib/cost-api/client.js';
import { platformSession } from '../../lib/cost-api/session.js';
import {
  CLAIM_SECONDS,
  COST_EVENT_CALL_MS,
  type CostEventRecords,
  type CostEventSubject,
  type CostEventWriter,
  costEventWriter,
  memoryCostEventRecords,
  parseCostEventJob,
} from '../../lib/cost-events/events.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { createLogger } from '../../lib/log/logger.js';
import { KINDS } from '../../lib/notify/kinds.js';
import { verifySlackSignature } from '../../lib/notify/slack/signature.js';
import { buttonValue, triageButtons } from '../../lib/notify/slack/triage-blocks.js';
import { type OwnerRecord, ownersOfRecord } from '../../lib/owners/directory.js';
import { dynamoOwnerStore } from '../../lib/owners/dynamodb.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createRetryWorkerFromEnvironment } from '../../lib/retry/from-environment.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch, type QueueRecord } from '../../lib/retry/process-batch.js';
import { AFTER_POST_MS } from '../../lib/retry/record.js';
import { ANSWER_RESERVE_MS } from '../../lib/shared/deadline.js';
import { costEventsPort } from '../../lib/triage/cost-events.js';
import { createTriageHandler, type TriagePorts } from '../../lib/triage/handle.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { signDigestToken, signTriageToken } from '../../lib/triage-link/sign.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { capturedLogger, chatServices, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { memoryAws } from '../helpers/memory-aws.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

// "Expected" as a cost event on the platform (docs/platform.md): the writer with its records in
// memory and the platform on loopback, then the triage function's clicks and pages through it.

const NOW = Date.parse('2026-11-21T15:00:00Z');
const ACCOUNT = '247699517797';
const PAYER = '12345';
const TITLE = 'EC2 spend up 41% in us-east-1';
const subject = (overrides: Partial<CostEventSubject> = {}): CostEventSubject => ({
  title: TITLE,
  account: `Analytics (${ACCOUNT})`,
  destination: 'finops',
  by: 'Dana',
  day: '2026-11-20',
  ...overrides,
});
const signal = () => AbortSignal.timeout(5_000);

const ownersOf = (record: OwnerRecord | undefined) => record && ownersOfRecord(record);

let platform: FakePlatform;
beforeAll(async () => {
  platform = await startFakePlatform();
});
afterAll(() => platform.close());

function setup(options: { records?: CostEventRecords; now?: () => number; owners?: Map<string, OwnerRecord> } = {}) {
  const logs: string[] = [];
  const client = createCostApiClient({ baseUrl: platform.url, timeoutMs: 2_000, maxAttempts: 1 });
  const owners =
    options.owners ??
    new Map<string, OwnerRecord>([
      [
        ACCOUNT,
        {
          accountId: ACCOUNT,
          costCenters: [],
          readAt: 0,
          parts: [{ accountKey: PAYER, costCenters: [{ id: '7', name: 'Data' }], readAt: 0 }],
        },
      ],
    ]);
  const records = options.records ?? memoryCostEventRecords();
  const now = options.now ?? (() => NOW);
  const writer = costEventWriter({
    records,
    owners: { read: async (id) => ownersOf(owners.get(id)) },
    platform: {
      client,
      session: platformSession({ client, credentials: async () => ({ username: platform.username, password: platform.password }), now }),
    },
    now,
    logger: createLogger({ sink: (line) => logs.push(line) }),
  });
  return { writer, records, logs };
}

const live = () => [...platform.events.values()].filter((e) => !e.deleted);
const eventCalls = () => platform.requests.filter((r) => r.path.startsWith('/api/v1/users/events'));

beforeEach(() => {
  platform.reset();
  platform.events.clear();
});

describe('a cost event for an anomaly marked expected (lib/cost-events)', () => {
  it('writes one event with the documented fields under the payer’s account-scoped key; again writes none; a reopen deletes it', async () => {
    const { writer } = setup();
    expect(await writer.apply('write', subject({ note: 'Black Friday load test' }), signal())).toBe('written');
    const [post] = eventCalls();
    expect(post).toMatchObject({ method: 'POST', path: '/api/v1/users/events' });
    expect(post!.headers['apikey']).toBe(`${platform.userKey}:${PAYER}:`);
    expect(post!.headers['content-type']).toMatch(/^application\/json/);
    expect(live()).toHaveLength(1);
    const body = live()[0]!.body;
    expect(body).toMatchObject({ title: `Expected: ${TITLE}`, date: '2026-11-20', createdBy: 'Dana' });
    expect(body['description']).toContain('Dana');
    expect(body['description']).toContain('finops');
    expect(body['description']).toContain('Black Friday load test');
    expect(body['description']).toContain('Cost Alert Relay');
    expect(live()[0]!.accountKey).toBe(Number(PAYER));

    expect(await writer.apply('write', subject({ by: 'Sam' }), signal())).toBe('skipped');
    expect(live()).toHaveLength(1);

    expect(await writer.apply('delete', subject(), signal())).toBe('deleted');
    expect(live()).toHaveLength(0);
    expect(eventCalls().at(-1)).toMatchObject({ method: 'DELETE' });
    // Written again after the reopen: a new decision, a new event.
    expect(await writer.apply('write', subject(), signal())).toBe('written');
    expect(live()).toHaveLength(1);
  });

  it('an event marked by no one named says so, is created by Cost Alert Relay, and keeps the note’s own full stop', async () => {
    const { writer } = setup();
    await writer.apply('write', subject({ by: ' ', note: 'Planned, see CHG-42!' }), signal());
    expect(live()[0]!.body).toMatchObject({ createdBy: 'Cost Alert Relay' });
    expect(live()[0]!.body['description']).toMatch(
      /^Marked expected by someone at finops\. Note: Planned, see CHG-42! Cost Alert Relay \(ref [0-9a-f]{12}\)$/,
    );
  });

  it('knows the anomaly across destinations: a link’s label and a button’s bare account id name one event', async () => {
    const { writer } = setup();
    await writer.apply('write', subject({ destination: 'teams-finops' }), signal());
    expect(await writer.apply('write', subject({ destination: 'slack-app', account: ACCOUNT }), signal())).toBe('skipped');
    expect(live()).toHaveLength(1);
    // Another anomaly of the same account is its own event.
    expect(await writer.apply('write', subject({ title: 'S3 spend up 12%' }), signal())).toBe('written');
    expect(live()).toHaveLength(2);
  });

  it('writes nothing and asks the platform nothing for an account the directory does not know, or a label without an account', async () => {
    const { writer } = setup();
    expect(await writer.apply('write', subject({ account: 'Analytics (999999999999)' }), signal())).toBe('skipped');
    expect(await writer.apply('write', subject({ account: 'Analytics team' }), signal())).toBe('skipped');
    expect(await writer.apply('delete', subject({ account: 'Analytics team' }), signal())).toBe('skipped');
    expect(platform.requests).toEqual([]);
  });

  it('a writer cut off after the platform wrote leaves a mark the next one finds: the event is never written twice', async () => {
    let nowMs = NOW;
    const memory = memoryCostEventRecords();
    let lose = true;
    // The uuid's record is lost once, as when the function is cut off right after the platform answered.
    const records: CostEventRecords = {
      ...memory,
      record: async (...args) => {
        if (lose) {
          lose = false;
          throw new Error('cut off');
        }
        return memory.record(...args);
      },
    };
    const { writer } = setup({ records, now: () => nowMs });
    expect(await writer.apply('write', subject(), signal())).toBe('written');
    expect(live()).toHaveLength(1);
    // While its claim lasts, another writer waits rather than write beside it; a reopen waits too.
    await expect(writer.apply('write', subject(), signal())).rejects.toMatchObject({ reason: 'busy' });
    await expect(writer.apply('delete', subject(), signal())).rejects.toMatchObject({ reason: 'busy' });
    nowMs += (CLAIM_SECONDS + 1) * 1000;
    expect(await writer.apply('write', subject(), signal())).toBe('written');
    expect(live()).toHaveLength(1);
    expect(eventCalls().filter((r) => r.method === 'GET')[0]?.query).toMatchObject({ startDate: '2026-11-20', endDate: '2026-11-20' });
    // Recorded now: the reopen finds it and deletes it.
    expect(await writer.apply('delete', subject(), signal())).toBe('deleted');
    expect(live()).toHaveLength(0);
  });

  it('a platform that answers with an error gives the claim up, so the next attempt writes the event once, at once', async () => {
    const { writer } = setup();
    platform.queue('events', { kind: 'error', status: 503 }, 1);
    await expect(writer.apply('write', subject(), signal())).rejects.toMatchObject({ reason: 'platform_unavailable' });
    expect(live()).toHaveLength(0);
    expect(await writer.apply('write', subject(), signal())).toBe('written');
    expect(live()).toHaveLength(1);
    // It searched nothing: no claim had lapsed.
    expect(eventCalls().filter((r) => r.method === 'GET')).toEqual([]);
  });
});

describe('the triage function’s cost events', () => {
  const KEY = 'cost-events-triage-key-0123456789abcdefghij';
  const SIGNING = 'slack-signing-secret';
  const ANOMALY = `anomaly#${createHash('sha256').update('x').digest('hex')}`;

  function triage(
    options: {
      writer?: ReturnType<typeof setup>['writer'];
      load?: () => Promise<CostEventWriter>;
      enqueueFails?: boolean;
      noQueue?: boolean;
      enabled?: boolean;
    } = {},
  ) {
    const lines: string[] = [];
    const metrics = memoryMetrics();
    const queued: Array<{ body: string; delaySeconds: number }> = [];
    const logger = createLogger({ sink: (line) => lines.push(line) });
    const store = memoryTriageStore(() => NOW);
    const writer = options.writer ?? setup().writer;
    const costEvents = costEventsPort({
      writer: options.load ?? (async () => writer),
      enabled: async () => options.enabled ?? true,
      enqueue: options.noQueue
        ? undefined
        : async (body, delaySeconds) => {
            if (options.enqueueFails) throw new Error('AccessDenied');
            queued.push({ body, delaySeconds });
          },
      metrics,
      logger,
    });
    const ports: TriagePorts = {
      tokenKey: async () => KEY,
      interactionsAt: (path) =>
        path === KINDS.slack.interactionPath
          ? async () => ({ type: 'slack', interactions: (await KINDS.slack.extras()).interactions!, secret: SIGNING })
          : undefined,
      store,
      postAsApp: async () => undefined,
      postFollowUp: async () => undefined,
      destinationTypeOf: async () => 'teams',
      metrics,
      logger,
      now: () => NOW,
      costEvents,
    };
    const handle = createTriageHandler(ports);
    const path = `/triage/${signTriageToken(KEY, { a: ANOMALY, d: 'finops', t: TITLE, c: `Analytics (${ACCOUNT})` }, NOW)}`;
    const page = (form: string) => handle({ method: 'POST', path, headers: {}, body: form }, budgetOf(10_000));
    const view = () => handle({ method: 'GET', path, headers: {}, body: '' }, budgetOf(10_000));
    return { handle, page, view, store, metrics, queued, lines };
  }

  it('Expected on the page writes the event with the note given; the page asks for a note only where events are on', async () => {
    const t = triage();
    t.store.records.set(ANOMALY, {
      triage: { state: 'open' },
      audit: [],
      firstSeen: Math.floor(Date.parse('2026-11-19T23:30:00Z') / 1000),
    });
    const answer = await t.page('action=expected&name=Dana&note=Planned%20migration');
    expect(answer.statusCode).toBe(200);
    expect(live()).toHaveLength(1);
    expect(live()[0]!.body).toMatchObject({ date: '2026-11-19', createdBy: 'Dana' });
    expect(live()[0]!.body['description']).toContain('Planned migration');
    expect(t.metrics.count('CostEvents', { outcome: 'written' })).toBe(1);
    expect(answer.body).toContain('name="note"');
    expect((await t.view()).body).toContain('name="note"');
    const off = await triage({ enabled: false }).view();
    expect(off.statusCode).toBe(200);
    expect(off.body).not.toContain('name="note"');

    // Acknowledge writes nothing; Reopen deletes the event.
    await t.page('action=reopen&name=Dana');
    expect(live()).toHaveLength(0);
    expect(t.metrics.count('CostEvents', { outcome: 'deleted' })).toBe(1);
    await t.page('action=acknowledge&name=Dana');
    expect(live()).toHaveLength(0);
  });

  it('writes nothing where the configuration does not ask for cost events', async () => {
    const t = triage({ enabled: false });
    await t.page('action=expected&name=Dana');
    expect(platform.requests).toEqual([]);
    expect(t.queued).toEqual([]);
  });

  it('a Slack app button carries what the event needs; a message posted before it did is still triaged', async () => {
    const t = triage();
    const click = (value: string, action = 'expected') => {
      const payload = {
        type: 'block_actions',
        user: { id: 'U042', username: 'dana' },
        actions: [{ action_id: `triage_${action}`, value }],
        container: { channel_id: 'C0123ABCD', message_ts: '1700000000.000100' },
        message: { text: 'Cost anomaly', blocks: [triageButtons(value, true)] },
      };
      const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const timestamp = String(Math.floor(NOW / 1000));
      const signature = `v0=${createHmac('sha256', SIGNING).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      expect(verifySlackSignature({ timestamp, signature, rawBody: body }, SIGNING, NOW).ok).toBe(true);
      return t.handle(
        {
          method: 'POST',
          path: KINDS.slack.interactionPath!,
          headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
          body,
        },
        budgetOf(10_000),
      );
    };
    const value = buttonValue(ANOMALY, { destination: 'slack-app', title: TITLE, accountId: ACCOUNT });
    expect(value.length).toBeLessThan(2_000);
    expect((await click(value)).statusCode).toBe(200);
    expect(live()).toHaveLength(1);
    expect(live()[0]!.body['description']).toContain('slack-app');
    // A message posted before buttons carried it: the state changes, no event is written.
    const older = `anomaly#${createHash('sha256').update('older').digest('hex')}`;
    expect((await click(older)).statusCode).toBe(200);
    expect(t.store.records.get(older)?.triage.state).toBe('expected');
    expect(live()).toHaveLength(1);
  });

  it('a platform that does not answer in time leaves the event to the retry queue, and the page still answers', async () => {
    const t = triage();
    platform.queue('token', { kind: 'hang' }, 5);
    const answer = await t.page('action=expected&name=Dana');
    expect(answer.statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage.state).toBe('expected');
    expect(t.queued).toHaveLength(1);
    const job = parseCostEventJob(t.queued[0]!.body);
    expect(job).toMatchObject({ kind: 'cost_event', change: 'write', subject: { title: TITLE, by: 'Dana', destination: 'finops' } });
    expect(t.queued[0]!.delaySeconds).toBeGreaterThan(0);
    expect(t.metrics.count('CostEvents', { outcome: 'queued' })).toBe(1);
  });

  it('an event that can be neither written nor queued is counted failed and logged, and the action still stands', async () => {
    const t = triage({ enqueueFails: true });
    platform.queue('token', { kind: 'error', status: 503 }, 5);
    expect((await t.page('action=expected&name=Dana')).statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage.state).toBe('expected');
    expect(t.metrics.count('CostEvents', { outcome: 'failed' })).toBe(1);
    expect(t.lines.join('\n')).toContain('neither written nor queued');
  });

  it('a stack without a retry queue counts an event the platform cannot take as failed, and says why', async () => {
    const t = triage({ noQueue: true });
    platform.queue('events', { kind: 'error', status: 503 });
    expect((await t.page('action=expected&name=Dana')).statusCode).toBe(200);
    expect(t.metrics.count('CostEvents', { outcome: 'failed' })).toBe(1);
    expect(t.lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ message: 'cost event neither written nor queued', reason: 'no_retry_queue' }),
    );
    expect(live()).toHaveLength(0);
  });

  it('a writer that could not be loaded is loaded again with the next event; the first waits on the retry queue', async () => {
    const { writer } = setup();
    let loads = 0;
    const t = triage({
      load: async () => {
        loads++;
        if (loads === 1) throw new Error('Cannot find module lazy-cost-events.js');
        return writer;
      },
    });
    await t.page('action=expected&name=Dana');
    expect(t.queued).toHaveLength(1);
    expect(t.metrics.count('CostEvents', { outcome: 'queued' })).toBe(1);
    await t.page('action=reopen&name=Dana');
    await t.page('action=expected&name=Dana');
    expect(loads).toBe(2);
    expect(live()).toHaveLength(1);
    expect(t.metrics.count('CostEvents', { outcome: 'written' })).toBe(1);
  });

  it('a digest’s “all” queues one event per anomaly it changed, and asks the platform nothing while the page waits', async () => {
    const t = triage();
    const anomalies = [1, 2, 3].map((n) => ({
      anomalyId: `anomaly#${createHash('sha256').update(String(n)).digest('hex')}`,
      title: `Anomaly ${n}`,
      account: `Analytics (${ACCOUNT})`,
    }));
    const token = signDigestToken(KEY, { destination: 'storm', anomalies }, NOW);
    const answer = await t.handle(
      { method: 'POST', path: `/triage/${token}`, headers: {}, body: 'action=expected%3Aall&name=Dana' },
      budgetOf(10_000),
    );
    expect(answer.statusCode).toBe(200);
    expect(platform.requests).toEqual([]);
    expect(t.queued.map((q) => parseCostEventJob(q.body)?.subject.title)).toEqual(['Anomaly 1', 'Anomaly 2', 'Anomaly 3']);
    expect(t.metrics.count('CostEvents', { outcome: 'queued' })).toBe(3);
  });
});

describe('delivery-retry writes the cost events the triage function queued', () => {
  function retry(maxAttempts = 4, options: { dlqFails?: boolean; remainingMs?: number } = {}) {
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const deadLetters = memoryDeadLetters(options.dlqFails ? new Error('AccessDenied') : undefined);
    const visibility: number[] = [];
    const { writer } = setup();
    const deps = {
      config: memoryConfigStore({ config: { auth: { method: 'none' as const, headers: [] }, destinations: {}, routes: [] } }),
      delivery: createDelivery({
        services: chatServices({}),
        postTimeoutMs: 5_000,
        deadLetters,
        logger: log.logger,
        metrics,
        now: () => NOW,
        sleep: async () => undefined,
      }),
      messages: {
        changeVisibility: async (_receipt: string, seconds: number) => {
          visibility.push(seconds);
        },
      } as QueueMessageOps,
      pacer: createPacer(),
      maxAttempts,
      postTimeoutMs: 5_000,
      logger: log.logger,
      metrics,
      budget: budgetOf(options.remainingMs ?? 60_000),
      costEvents: writer,
    };
    const job = JSON.stringify({ version: 2, kind: 'cost_event', change: 'write', subject: subject() });
    const receive = (receives: number): QueueRecord => ({
      messageId: `m${receives}`,
      receiptHandle: `r${receives}`,
      body: job,
      attributes: { ApproximateReceiveCount: String(receives) },
    });
    return { deps, receive, visibility, deadLetters, metrics, log };
  }

  it('retries through an outage with a growing wait, then writes the event once', async () => {
    const r = retry();
    platform.queue('events', { kind: 'error', status: 503 }, 2);
    expect((await processBatch([r.receive(1)], r.deps)).batchItemFailures).toHaveLength(1);
    expect((await processBatch([r.receive(2)], r.deps)).batchItemFailures).toHaveLength(1);
    expect(r.visibility).toEqual([30, 60]);
    expect(await processBatch([r.receive(3)], r.deps)).toEqual({ batchItemFailures: [] });
    expect(live()).toHaveLength(1);
    expect(r.metrics.count('CostEvents', { outcome: 'written' })).toBe(1);
    // SQS delivers a message twice now and then: the second finds the event written.
    expect(await processBatch([r.receive(4)], r.deps)).toEqual({ batchItemFailures: [] });
    expect(live()).toHaveLength(1);
    expect(r.metrics.count('CostEvents', { outcome: 'skipped' })).toBe(1);
  });

  it('parks the event for a human after its last attempt, saying why', async () => {
    const r = retry(3);
    platform.queue('events', { kind: 'error', status: 503 }, 5);
    await processBatch([r.receive(1)], r.deps);
    expect(await processBatch([r.receive(2)], r.deps)).toEqual({ batchItemFailures: [] });
    expect(r.deadLetters.parked).toHaveLength(1);
    expect(r.deadLetters.parked[0]!.reason).toMatch(/^cost_event_failed:/);
    expect(parseCostEventJob(r.deadLetters.parked[0]!.body)?.subject.title).toBe(TITLE);
    expect(r.metrics.count('CostEvents', { outcome: 'parked' })).toBe(1);
    expect(live()).toHaveLength(0);
  });

  it('a last attempt whose parking fails counts nothing parked and leaves the message on the queue', async () => {
    const r = retry(2, { dlqFails: true });
    platform.queue('events', { kind: 'error', status: 503 }, 5);
    const last = r.receive(2);
    expect(await processBatch([last], r.deps)).toEqual({ batchItemFailures: [{ itemIdentifier: last.messageId }] });
    expect(r.metrics.count('CostEvents', { outcome: 'parked' })).toBe(0);
    expect(r.log.records().find((l) => l['message'] === 'cost event parked after its last attempt')).toMatchObject({ level: 'error' });
  });

  it('an invocation without the time for the call leaves the event on the queue, unwritten and not counted an attempt', async () => {
    // A millisecond short of the call and the queue calls after it.
    const r = retry(4, { remainingMs: ANSWER_RESERVE_MS + COST_EVENT_CALL_MS + AFTER_POST_MS - 1 });
    const first = r.receive(1);
    expect(await processBatch([first], r.deps)).toEqual({ batchItemFailures: [{ itemIdentifier: first.messageId }] });
    expect(r.visibility).toEqual([1]);
    expect(live()).toHaveLength(0);
    expect(r.metrics.count('CostEvents', { outcome: 'written' })).toBe(0);
  });

  it('never puts the platform login in a log line or a parked message', async () => {
    const r = retry(2);
    platform.queue('events', { kind: 'error', status: 401 }, 5);
    await processBatch([r.receive(1)], r.deps);
    const output = [...r.log.lines, ...r.deadLetters.parked.map((p) => JSON.stringify(p))].join('\n');
    expect(output).not.toContain(platform.password);
    expect(output).not.toContain(platform.userKey);
    for (const token of platform.issuedTokens) expect(output).not.toContain(token);
  });
});

describe('delivery-retry as deployed', () => {
  const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/delivery-retry';
  const DLQ = 'https://sqs.us-east-1.amazonaws.com/123456789012/delivery-retry-dlq';

  it('writes a queued cost event with the login from Secrets Manager, and parks a message that is no job at all', async () => {
    const aws = memoryAws({ now: Date.now });
    aws.sqs.create(QUEUE, { visibilityTimeoutSeconds: 30 });
    aws.sqs.create(DLQ, { visibilityTimeoutSeconds: 30 });
    aws.secrets.put('platform-login', JSON.stringify({ username: platform.username, password: platform.password }));
    const readAt = Math.floor(Date.now() / 1000);
    await dynamoOwnerStore(aws.table.call, aws.tableName).write({
      accountId: ACCOUNT,
      costCenters: [{ id: '7', name: 'Data' }],
      readAt,
      parts: [{ accountKey: PAYER, costCenters: [{ id: '7', name: 'Data' }], readAt }],
    });
    const dir = mkdtempSync(join(tmpdir(), 'retry-cost-events-'));
    writeFileSync(join(dir, 'relay.json'), JSON.stringify({ auth: { method: 'none' }, destinations: {}, platform: { costEvents: true } }));
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const worker = createRetryWorkerFromEnvironment(
      {
        RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`,
        DELIVERY_QUEUE_URL: QUEUE,
        DEAD_LETTER_QUEUE_URL: DLQ,
        DEDUP_TABLE_NAME: aws.tableName,
        COST_API_CREDENTIALS_SECRET_ID: 'platform-login',
        COST_API_BASE_URL: platform.url,
      },
      { aws: aws.aws, logger: log.logger, metrics, services: chatServices({}) },
    );
    const job = JSON.stringify({ version: 2, kind: 'cost_event', change: 'write', subject: subject() });
    const records: QueueRecord[] = [
      { messageId: 'm1', receiptHandle: 'r1', body: job, attributes: { ApproximateReceiveCount: '1' } },
      { messageId: 'm2', receiptHandle: 'r2', body: '{"kind":"cost_event",', attributes: { ApproximateReceiveCount: '1' } },
    ];
    expect(await worker(records, budgetOf(60_000))).toEqual({ batchItemFailures: [] });
    expect(live()).toHaveLength(1);
    expect(live()[0]).toMatchObject({ accountKey: Number(PAYER), body: { title: `Expected: ${TITLE}`, date: '2026-11-20' } });
    expect(metrics.count('CostEvents', { outcome: 'written' })).toBe(1);
    expect(aws.sqs.messages(DLQ)).toEqual([
      expect.objectContaining({ body: '{"kind":"cost_event",', attributes: expect.objectContaining({ reason: 'malformed_message' }) }),
    ]);
    expect(log.lines.join('\n')).not.toContain(platform.password);

    // A second copy of the job (SQS delivers at least once) finds the event written, in this container or another.
    expect(await worker([{ ...records[0]!, messageId: 'm3' }], budgetOf(60_000))).toEqual({ batchItemFailures: [] });
    expect(live()).toHaveLength(1);
    expect(metrics.count('CostEvents', { outcome: 'skipped' })).toBe(1);
  });
});
