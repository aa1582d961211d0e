import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AwsJsonCall, AwsServiceError } from '../../lib/aws/json-client.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { dynamoGroupStore, FLUSHED_GROUP_SECONDS } from '../../lib/group/dynamodb.js';
import { groupedFirst } from '../../lib/group/lazy-relay.js';
import { entryBytes, MAX_GROUP_BYTES } from '../../lib/group/store.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { KINDS } from '../../lib/notify/kinds.js';
import { answerFor } from '../../lib/relay/lazy-relay-answer.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService } from '../helpers/fake-delivery-ports.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const message = (title: string) => webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title } });
const entry = (key: string) => ({ key, at: 1, message: message(key) });

describe('the group option', () => {
  const base = { auth: { method: 'none' }, destinations: { default: { url: 'https://hooks.slack.com/services/T/B/x' } } };
  const withWait = (waitSeconds: unknown) =>
    relayConfigSchema.safeParse({
      ...base,
      destinations: { default: { url: 'https://hooks.slack.com/services/T/B/x', group: { waitSeconds } } },
    });

  it('takes whole seconds from 10 to 900, and names the field otherwise', () => {
    expect(withWait(10).success).toBe(true);
    expect(withWait(900).success).toBe(true);
    for (const bad of [9, 901, 30.5, '60']) expect(withWait(bad).success).toBe(false);
    expect(JSON.stringify(withWait(5).error?.issues)).toContain('waitSeconds');
  });

  it('is answered 202 with the destination under grouped', async () => {
    const { response } = answerFor([
      { destination: 'storm', result: { kind: 'grouped' } },
      { destination: 'default', result: { kind: 'delivered' } },
    ]);
    expect(response.statusCode).toBe(202);
    expect(JSON.parse(response.body)).toEqual({ status: 202, delivered: ['default'], queued: [], grouped: ['storm'] });
  });
});

describe('the group in the DynamoDB table', () => {
  const now = () => Date.parse('2026-11-22T12:00:00Z');
  const t = now() / 1000;
  function scripted(...answers: Array<Record<string, unknown> | AwsServiceError>) {
    const calls: Array<{ operation: string; input: Record<string, unknown> }> = [];
    const call: AwsJsonCall = async (operation, input) => {
      calls.push({ operation, input });
      const next = answers.shift() ?? {};
      if (next instanceof AwsServiceError) throw next;
      return next;
    };
    return { store: dynamoGroupStore(call, { tableName: 'dedup', now }), calls };
  }
  const conditionFailed = (item?: Record<string, unknown>) =>
    new AwsServiceError('ConditionalCheckFailedException', 400, item ? { Item: item } : {});

  it('joins with one conditional update keyed by the alert, so concurrent relays and re-sends are safe', async () => {
    const { store, calls } = scripted({});
    expect(await store.join('storm', entry('k1'))).toEqual({ kind: 'joined' });
    expect(calls[0]?.input).toMatchObject({
      TableName: 'dedup',
      UpdateExpression: 'SET alerts.#key = :entry ADD #bytes :bytes',
      ExpressionAttributeNames: { '#key': 'k1' },
    });
    expect(JSON.stringify(calls[0]?.input['Key'])).not.toContain('storm');
  });

  it("counts each alert's bytes in its join, which the table refuses once the group would pass the bound", async () => {
    const { store, calls } = scripted({}, {});
    const joined = entry('k1');
    await store.open('storm', 'g1', joined, 60);
    await store.join('storm', entry('k2'));
    expect(calls[0]?.input['Item']).toMatchObject({ alertBytes: { N: String(entryBytes(joined)) } });
    const join = calls[1]!.input;
    expect(join['ConditionExpression']).toContain('#bytes <= :room');
    expect(join['ExpressionAttributeNames']).toMatchObject({ '#bytes': 'alertBytes' });
    expect(join['ExpressionAttributeValues']).toMatchObject({
      ':bytes': { N: String(entryBytes(entry('k2'))) },
      ':room': { N: String(MAX_GROUP_BYTES - entryBytes(entry('k2'))) },
    });
  });

  it('reads a failed join: the same alert, a closing or full group, or no open group', async () => {
    const open = { state: { S: 'open' }, alerts: { M: { k1: { S: '{}' } } } };
    const { store } = scripted(
      conditionFailed(open),
      conditionFailed(open),
      conditionFailed({ state: { S: 'closing' } }),
      conditionFailed(),
    );
    expect(await store.join('storm', entry('k1'))).toEqual({ kind: 'duplicate' });
    expect(await store.join('storm', entry('k2'))).toEqual({ kind: 'busy' });
    expect(await store.join('storm', entry('k2'))).toEqual({ kind: 'busy' });
    expect(await store.join('storm', entry('k2'))).toEqual({ kind: 'none' });
  });

  it('opens only where no group is open, and tells a lost race', async () => {
    const { store, calls } = scripted({}, conditionFailed());
    expect(await store.open('storm', 'g1', entry('k1'), 60)).toBe(true);
    expect(await store.open('storm', 'g2', entry('k1'), 60)).toBe(false);
    expect(calls[0]?.input['ConditionExpression']).toBe('attribute_not_exists(id) OR #state = :flushed OR expiresAt < :now');
  });

  it('takes a group by its id, records posts, and forgets the text within an hour of the flush', async () => {
    const item = {
      alerts: { M: { b: { S: JSON.stringify(entry('b')) }, a: { S: JSON.stringify({ ...entry('a'), at: 0 }) } } },
      postedParts: { N: '1' },
    };
    const { store, calls } = scripted({ Attributes: item }, conditionFailed({ groupId: { S: 'g-new' }, state: { S: 'open' } }), {}, {});
    const lease = { token: 'tok-1', holdSeconds: 65 };
    const taken = await store.take('storm', 'g1', lease);
    expect(taken).toMatchObject({ kind: 'taken', postedParts: 1 });
    expect(taken.kind === 'taken' && taken.entries.map((e) => e.key)).toEqual(['a', 'b']);
    expect(calls[0]?.input['ExpressionAttributeValues']).toMatchObject({ ':token': { S: 'tok-1' }, ':until': { N: String(t + 65) } });
    expect(await store.take('storm', 'g-old', lease)).toEqual({ kind: 'gone' });
    expect(await store.posted('storm', 'g1', 'tok-1', 2)).toBe(true);
    expect(await store.flushed('storm', 'g1', 'tok-1')).toBe(true);
    const flush = calls[3]?.input;
    expect(flush?.['UpdateExpression']).toContain('REMOVE alerts');
    expect(flush?.['ExpressionAttributeValues']).toMatchObject({ ':expires': { N: String(t + FLUSHED_GROUP_SECONDS) } });
  });

  it("tells a closer that finds another's live lease how long it holds, and refuses the writes of a closer that lost it", async () => {
    const { store, calls } = scripted(
      conditionFailed({ groupId: { S: 'g1' }, state: { S: 'closing' }, leaseUntil: { N: String(t + 40) } }),
      conditionFailed({ groupId: { S: 'g1' }, state: { S: 'closing' } }),
      conditionFailed({ groupId: { S: 'g1' }, state: { S: 'flushed' } }),
      conditionFailed(),
      conditionFailed(),
      conditionFailed(),
    );
    expect(await store.take('storm', 'g1', { token: 'late', holdSeconds: 65 })).toEqual({ kind: 'leased', retryAfterSeconds: 40 });
    expect(calls[0]?.input['ConditionExpression']).toContain('leaseUntil <= :now');
    // A lease written at the very moment it reads as ended still waits a second, never zero.
    expect(await store.take('storm', 'g1', { token: 'late', holdSeconds: 65 })).toEqual({ kind: 'leased', retryAfterSeconds: 1 });
    expect(await store.take('storm', 'g1', { token: 'late', holdSeconds: 65 })).toEqual({ kind: 'gone' });
    expect(await store.posted('storm', 'g1', 'lost', 1)).toBe(false);
    expect(await store.flushed('storm', 'g1', 'lost')).toBe(false);
    expect(calls[3]?.input['ConditionExpression']).toBe('groupId = :group AND leaseToken = :token');
    expect(calls[4]?.input['ConditionExpression']).toBe('groupId = :group AND leaseToken = :token');
    await store.release('storm', 'g1', 'lost');
    expect(calls[5]?.input).toMatchObject({
      UpdateExpression: 'REMOVE leaseToken, leaseUntil',
      ConditionExpression: 'groupId = :group AND leaseToken = :token',
    });
  });

  it('lets other table errors through', async () => {
    const { store } = scripted(new AwsServiceError('ProvisionedThroughputExceededException', 400, {}));
    await expect(store.join('storm', entry('k1'))).rejects.toThrow();
  });
});

describe('grouping as the relay wires it', () => {
  // The kind's digest plan loads with import(), which fake timers cannot hurry: load it first.
  beforeAll(async () => {
    await KINDS.slack.extras();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const config = relayConfigSchema.parse({
    auth: { method: 'none' },
    destinations: { default: { url: 'https://hooks.slack.com/services/T/B/x', group: { waitSeconds: 10 } } },
  });
  const target = { name: 'default', destination: config.destinations['default']! };
  function wiring(localGroups: boolean) {
    const slack = fakeChatService();
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const delivery = createDelivery({
      services: chatServices({ slack }),
      postTimeoutMs: 5_000,
      logger: log.logger,
      metrics,
      now: Date.now,
      sleep: async () => undefined,
    });
    const ledger = memoryLedger();
    return {
      slack,
      log,
      wiring: {
        delivery,
        logger: log.logger,
        metrics,
        now: Date.now,
        settings: {},
        sqs: undefined as never,
        options: { localGroups, ledger },
      },
    };
  }

  it('under npm start, an in-process timer closes the group after the wait', async () => {
    vi.useFakeTimers();
    const { slack, wiring: w } = wiring(true);
    expect(await groupedFirst(w, { deliveryId: 'a', target, message: message('one') }, budgetOf(10_000))).toEqual({ kind: 'grouped' });
    expect(await groupedFirst(w, { deliveryId: 'b', target, message: message('two') }, budgetOf(10_000))).toEqual({ kind: 'grouped' });
    expect(slack.posts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(slack.posts).toHaveLength(1);
    expect(JSON.stringify(slack.posts[0]?.payload)).toContain('2 alerts grouped');
  });

  it('under npm start, a group the chat refuses is logged alert by alert as a single refused alert is, and not tried again', async () => {
    vi.useFakeTimers();
    const { slack, log, wiring: w } = wiring(true);
    slack.answer({ kind: 'refused', reason: 'no_service' });
    for (const [id, title] of [
      ['a', 'first private text'],
      ['b', 'second private text'],
    ] as const) {
      expect(await groupedFirst(w, { deliveryId: id, target, message: message(title) }, budgetOf(10_000))).toEqual({ kind: 'grouped' });
    }
    await vi.advanceTimersByTimeAsync(10_000);
    expect(slack.posts).toHaveLength(1);
    const parked = log.records().filter((r) => r['message'] === 'alert cannot be delivered and no dead-letter queue is configured');
    expect(parked).toHaveLength(2);
    for (const record of parked) expect(record).toMatchObject({ reason: 'no_service', destination: 'default' });
    await vi.advanceTimersByTimeAsync(900_000);
    expect(slack.posts).toHaveLength(1);
    expect(log.lines.join('\n')).not.toContain('private text');
  });

  it('without the table and the queue (and not npm start), each alert is delivered on its own', async () => {
    const { slack, wiring: w } = wiring(false);
    expect(await groupedFirst(w, { deliveryId: 'a', target, message: message('one') }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    expect(slack.posts).toHaveLength(1);
  });
});
