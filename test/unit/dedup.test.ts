import { describe, expect, it } from 'vitest';
import type { PostOutcome } from '../../lib/chat/service.js';
import { deliveryRecordId } from '../../lib/dedup/fingerprint.js';
import { CLAIM_MARGIN_SECONDS } from '../../lib/dedup/ledger.js';
import { deliverOnce, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { answerFor } from '../../lib/relay/lazy-relay-answer.js';
import { canonicalJson } from '../../lib/shared/json.js';
import { budgetOf } from '../helpers/budget.js';
import {
  capturedLogger,
  chatServices,
  fakeChatService,
  manualClock,
  memoryDeadLetters,
  memoryRetryQueue,
} from '../helpers/fake-delivery-ports.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { settledWithin } from '../helpers/timer-clock.js';

const alert = (timestamp = '2026-11-22T10:00:00Z') =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp },
    payload: { title: 'EC2 up', account_id: '1', message: 'secret text' },
  });
const ops = { name: 'ops', destination: { url: 'https://hooks.slack.com/services/T0/B0/ops-secret' } };
const finops = { name: 'finops', destination: { url: 'https://hooks.slack.com/services/T0/B1/finops-secret' } };
const plenty = budgetOf(10_000);

function setup(script: PostOutcome[] = [], queue = true) {
  const clock = manualClock();
  const slack = fakeChatService(script);
  const ledger = memoryLedger(clock.now);
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const delivery = createDelivery({
    services: chatServices({ slack }),
    postTimeoutMs: 5_000,
    ...(queue ? { retryQueue: memoryRetryQueue() } : {}),
    deadLetters: memoryDeadLetters(),
    logger: log.logger,
    now: clock.now,
    sleep: clock.sleep,
  });
  const first = deliverOnce({ ledger, delivery, logger: log.logger, metrics });
  return { first, slack, ledger, log, metrics, clock };
}

describe('what counts as the same delivery', () => {
  it('the same content whatever the key order or request id; another timestamp or destination is another delivery', () => {
    const a = webhookMessageSchema.parse({ metadata: { object_type: 'x', timestamp: 't' }, payload: { title: 'T', account_id: '1' } });
    const b = webhookMessageSchema.parse(
      JSON.parse('{"payload":{"account_id":"1","title":"T"},"metadata":{"timestamp":"t","object_type":"x"}}'),
    );
    expect(deliveryRecordId(a, 'ops')).toBe(deliveryRecordId(b, 'ops'));
    expect(deliveryRecordId(a, 'ops')).not.toBe(deliveryRecordId(a, 'finops'));
    expect(deliveryRecordId(alert('2026-11-22T10:00:00Z'), 'ops')).not.toBe(deliveryRecordId(alert('2026-11-22T11:00:00Z'), 'ops'));
    expect(deliveryRecordId(a, 'ops')).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true })).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}');
  });
});

describe('the first attempt, at most once per destination', () => {
  it('a re-send that the destination already has is neither posted nor queued again, and counted as a duplicate', async () => {
    const { first, slack, metrics, log } = setup();
    expect(await first({ deliveryId: 'req-1', target: ops, message: alert() }, plenty)).toEqual({ kind: 'delivered' });
    expect(await first({ deliveryId: 'req-2', target: ops, message: alert() }, plenty)).toEqual({ kind: 'duplicate', state: 'delivered' });
    expect(slack.posts).toHaveLength(1);
    expect(metrics.count('Deliveries', { outcome: 'duplicate', destinationType: 'slack' })).toBe(1);
    expect(log.records()).toContainEqual(expect.objectContaining({ outcome: 'duplicate', destination: 'ops' }));
  });

  it('a queued alert sent again is not queued twice', async () => {
    const { first, slack } = setup([{ kind: 'retryable', reason: 'http_503' }]);
    expect(await first({ deliveryId: 'req-1', target: ops, message: alert() }, plenty)).toEqual({ kind: 'queued', reason: 'http_503' });
    expect(await first({ deliveryId: 'req-2', target: ops, message: alert() }, plenty)).toEqual({ kind: 'duplicate', state: 'queued' });
    expect(slack.posts).toHaveLength(1);
  });

  it('a destination that failed without being stored (503) or that refused is tried again on a re-send', async () => {
    const { first, slack } = setup(
      [
        { kind: 'retryable', reason: 'timeout' },
        { kind: 'refused', reason: 'channel_not_found' },
      ],
      false,
    );
    expect((await first({ deliveryId: 'req-1', target: ops, message: alert() }, plenty)).kind).toBe('unheld');
    expect((await first({ deliveryId: 'req-2', target: ops, message: alert() }, plenty)).kind).toBe('refused');
    expect((await first({ deliveryId: 'req-3', target: ops, message: alert() }, plenty)).kind).toBe('delivered');
    expect(slack.posts).toHaveLength(3);
  });

  it('identical deliveries arriving together post once per destination', async () => {
    const { first, slack } = setup();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => first({ deliveryId: `req-${i}`, target: ops, message: alert() }, plenty)),
    );
    expect(slack.posts).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'delivered')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'in_progress' || r.kind === 'duplicate')).toHaveLength(4);
  });

  it('a claim left by an attempt that died mid-post lasts no longer than the function can run plus a margin', async () => {
    const { first, slack, clock, ledger } = setup();
    const lambdaTimeout = budgetOf(15_000);
    // The first attempt's post never comes back: Lambda ends the invocation, nothing is recorded.
    slack.hang = true;
    void first({ deliveryId: 'req-1', target: ops, message: alert() }, lambdaTimeout);
    await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    slack.hang = false;
    const meanwhile = await first({ deliveryId: 'req-2', target: ops, message: alert() }, lambdaTimeout);
    expect(meanwhile).toEqual({ kind: 'in_progress', retryAfterSeconds: 15 + CLAIM_MARGIN_SECONDS });
    expect(answerFor([{ destination: 'ops', result: meanwhile }]).response.headers['retry-after']).toBe(String(15 + CLAIM_MARGIN_SECONDS));
    clock.advance((15 + CLAIM_MARGIN_SECONDS + 1) * 1000);
    expect(await first({ deliveryId: 'req-3', target: ops, message: alert() }, lambdaTimeout)).toEqual({ kind: 'delivered' });
    expect(slack.posts).toHaveLength(2);
    expect([...ledger.entries.values()]).toEqual([{ state: 'delivered' }]);
  });

  it('fails open: a ledger that throws or hangs costs no alert, only a warning and a metric', async () => {
    const { first, slack, ledger, metrics, log } = setup();
    ledger.fail = Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' });
    expect(await first({ deliveryId: 'req-1', target: ops, message: alert() }, plenty)).toEqual({ kind: 'delivered' });
    expect(slack.posts).toHaveLength(1);
    expect(metrics.count('DedupUnavailable')).toBe(1);
    expect(log.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', reason: 'dedup_unavailable', error: 'ResourceNotFoundException' }),
    );

    const hung = setup();
    const signals: AbortSignal[] = [];
    const never = (...args: unknown[]) => {
      signals.push(args.at(-1) as AbortSignal);
      return new Promise<never>(() => {});
    };
    Object.assign(hung.ledger, { claim: never, record: never, release: never });
    // The claim is given up after 1 s; without a claim there is nothing to record.
    expect(await settledWithin(1_000, () => hung.first({ deliveryId: 'req-1', target: ops, message: alert() }, budgetOf(2_500)))).toEqual({
      kind: 'delivered',
    });
    expect(hung.slack.posts).toHaveLength(1);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    expect(hung.log.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', reason: 'dedup_unavailable', error: 'dedup_table_deadline' }),
    );
  });
});

describe('answers with repeats', () => {
  it('200 when every destination already has it, 503 naming the one still in progress elsewhere; only the missing destination posts', async () => {
    const { first, slack } = setup([{ kind: 'delivered' }, { kind: 'retryable', reason: 'timeout' }], false);
    const results1 = [
      { destination: 'ops', result: await first({ deliveryId: 'r1', target: ops, message: alert() }, plenty) },
      { destination: 'finops', result: await first({ deliveryId: 'r1', target: finops, message: alert() }, plenty) },
    ];
    expect(answerFor(results1).response.statusCode).toBe(503);
    const results2 = [
      { destination: 'ops', result: await first({ deliveryId: 'r2', target: ops, message: alert() }, plenty) },
      { destination: 'finops', result: await first({ deliveryId: 'r2', target: finops, message: alert() }, plenty) },
    ];
    expect(slack.posts.map((p) => p.url)).toEqual([ops.destination.url, finops.destination.url, finops.destination.url]);
    expect(answerFor(results2)).toMatchObject({ outcome: 'delivered', response: { statusCode: 200 } });
    const results3 = [
      { destination: 'ops', result: await first({ deliveryId: 'r3', target: ops, message: alert() }, plenty) },
      { destination: 'finops', result: await first({ deliveryId: 'r3', target: finops, message: alert() }, plenty) },
    ];
    const answer = answerFor(results3);
    expect(answer).toMatchObject({ outcome: 'duplicate', response: { statusCode: 200 } });
    expect(JSON.parse(answer.response.body)).toMatchObject({ delivered: ['ops', 'finops'], duplicate: ['ops', 'finops'] });
    const busy = answerFor([
      { destination: 'ops', result: { kind: 'duplicate', state: 'delivered' } },
      { destination: 'finops', result: { kind: 'in_progress', retryAfterSeconds: 7 } },
    ]);
    // Nothing holds the alert for finops yet: only 503 keeps the platform sending it.
    expect(busy.response.statusCode).toBe(503);
    expect(busy.response.headers['retry-after']).toBe('7');
    expect(JSON.parse(busy.response.body)).toMatchObject({ error: 'in_progress', in_progress: ['finops'], delivered: ['ops'] });
  });
});

describe('delivery-retry tells the ledger', () => {
  it('a delivered retry is recorded; a parked one is kept as parked, and a re-send still tries again', async () => {
    const { first, slack, ledger } = setup();
    const settle = retryLedger({ ledger, logger: capturedLogger().logger }).settle;
    const id = deliveryRecordId(alert(), 'ops');
    await ledger.record(id, 'queued');
    await settle({ message: alert(), destination: 'ops', outcome: 'delivered' }, plenty);
    expect(ledger.entries.get(id)).toEqual({ state: 'delivered' });
    const later = alert('2026-11-23T00:00:00Z');
    const other = deliveryRecordId(later, 'ops');
    await ledger.record(other, 'queued');
    const parked = { firstAttemptAt: '2026-11-23T00:00:01.000Z', parkToken: 'parking' };
    await settle({ message: later, destination: 'ops', outcome: 'parked', parked }, plenty);
    expect(ledger.entries.get(other)).toEqual({ state: 'parked', parking: parked });
    expect(await first({ deliveryId: 'req-again', target: ops, message: later }, plenty)).toEqual({ kind: 'delivered' });
    expect(slack.posts).toHaveLength(1);
    expect(ledger.entries.get(other)).toEqual({ state: 'delivered' });
    ledger.fail = new Error('down');
    const metrics = memoryMetrics();
    await retryLedger({ ledger, logger: capturedLogger().logger, metrics }).settle(
      { message: alert(), destination: 'ops', outcome: 'delivered' },
      plenty,
    );
    expect(metrics.count('DedupUnavailable')).toBe(1);
  });
});
