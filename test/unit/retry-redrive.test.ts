import { beforeAll, describe, expect, it } from 'vitest';
import type { PostOutcome } from '../../lib/chat/service.js';
import { ConfigUnavailableError } from '../../lib/config/errors.js';
import { type RelayConfig, relayConfigSchema } from '../../lib/config/schema.js';
import { deliveryRecordId } from '../../lib/dedup/fingerprint.js';
import { deliverOnce, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery, targetOf } from '../../lib/delivery/deliver.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { inMemoryGroupStore } from '../../lib/group/store.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { kindOf } from '../../lib/notify/kinds.js';
import { sqsDeadLetters, sqsMessageOps, sqsRetryQueue } from '../../lib/queue/sqs.js';
import { createPacer, pacedServices } from '../../lib/retry/pacer.js';
import { processBatch, type QueueRecord, type RetryDependencies } from '../../lib/retry/process-batch.js';
import { memorySqs } from '../../sim/aws/sqs.js';
import { readDeployment } from '../../sim/deployment.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { virtualClock } from '../helpers/timer-clock.js';

/**
 * delivery-retry as deployed against the retry queue of template.yaml: SQS's redrive moves a
 * message received maxReceiveCount times to the dead-letter queue, without the reason our own
 * parking gives it. The queue is the simulation's SQS (sim/aws/sqs.ts), reached through the real
 * adapters, with the template's settings.
 */
const deployed = readDeployment({ PlatformUsername: 'unused', PlatformPassword: 'unused', EventBusArns: '' });
const { url: QUEUE, deadLetterUrl: DLQ } = deployed.queue;
/** Attempts in all before an alert is parked, as the stack sets them by default. */
const MAX_ATTEMPTS = Number(deployed.retry.env['DELIVERY_MAX_ATTEMPTS']);
const WEBHOOK = 'https://hooks.slack.com/services/T0/B0/aaa';
const config: RelayConfig = relayConfigSchema.parse({ auth: { method: 'none' }, destinations: { default: { url: WEBHOOK } } });
const GROUP_ID = '0b0e8c1a-6c1e-4d2f-9a3b-5f7d1e2c3b4a';
/** The function's timeout: each invocation's budget. */
const INVOCATION_MS = deployed.retry.timeoutMs;

const message = (title: string) => webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title } });

function world() {
  const clock = virtualClock();
  // Seeded by the test: a receive duplicates its message (leaves it visible to another receiver) when told to.
  let duplicate = false;
  const sqs = memorySqs({ now: clock.now, random: () => (duplicate ? 0 : 1), duplicateRate: 0.5 });
  sqs.create(DLQ, { visibilityTimeoutSeconds: 30 });
  const { visibilityTimeoutSeconds, maxReceiveCount } = deployed.queue;
  sqs.create(QUEUE, { visibilityTimeoutSeconds, maxReceiveCount, deadLetterUrl: DLQ });
  const slack = fakeChatService([], 1_100);
  const log = capturedLogger();
  const ledger = memoryLedger(clock.now);
  const groups = inMemoryGroupStore(clock.now);
  const store = memoryConfigStore({ config });
  // Set by the test: the dead-letter queue refuses every message, as it would without its permission.
  let deadLetterQueueDown = false;
  const dlq = sqsDeadLetters(sqs.lazySqs, DLQ);
  const ports = {
    postTimeoutMs: 5_000,
    retryQueue: sqsRetryQueue(sqs.lazySqs, QUEUE),
    deadLetters: {
      park: (...args: Parameters<typeof dlq.park>) => (deadLetterQueueDown ? Promise.reject(new Error('AccessDenied')) : dlq.park(...args)),
    },
    logger: log.logger,
    now: clock.now,
    sleep: clock.sleep,
  };

  /** A delivery-retry container: its own pacer, and the services paced by it. */
  const container = () => {
    const pacer = createPacer(clock.now, clock.sleep);
    const worker: Omit<RetryDependencies, 'budget'> = {
      config: store,
      delivery: createDelivery({ ...ports, services: pacedServices(chatServices({ slack }), pacer) }),
      messages: sqsMessageOps(sqs.lazySqs, QUEUE),
      pacer,
      maxAttempts: MAX_ATTEMPTS,
      postTimeoutMs: 5_000,
      logger: log.logger,
      ledger: retryLedger({ ledger, logger: log.logger, now: clock.now }),
      groups,
      now: clock.now,
      sleep: clock.sleep,
    };
    return worker;
  };
  const one = container();

  /** Containers working one batch each at the same time; Lambda deletes what a batch did not report as failed. */
  const invoke = (...batches: Array<[Omit<RetryDependencies, 'budget'>, QueueRecord[]]>) => {
    const started = clock.now();
    const budget = () => budgetOf(() => INVOCATION_MS - (clock.now() - started));
    return clock.run(() =>
      Promise.all(
        batches.map(async ([worker, records]) => {
          const { batchItemFailures } = await processBatch(records, { ...worker, budget: budget() });
          const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
          for (const r of records) if (!failed.has(r.messageId)) sqs.delete(QUEUE, r.receiptHandle);
        }),
      ),
    );
  };

  /** Lambda's poller: the clock moves to the next visible message, and one container works the batch it receives. */
  const poll = async (before?: () => void): Promise<boolean> => {
    const at = sqs.nextVisibleAt(QUEUE);
    if (at === undefined) return false;
    if (at > clock.now()) clock.advance(at - clock.now());
    before?.();
    const records = sqs.receive(QUEUE, 10);
    if (records.length > 0) await invoke([one, records]);
    return true;
  };

  /** Polls until the queue is empty, or `polls` ran; `before(n)` runs before the n-th one. */
  const drain = async (polls: number, before: (n: number) => void = () => {}) => {
    for (let n = 0; n < polls; n++) if (!(await poll(() => before(n)))) return;
  };

  /** The relay's first attempt at `default`: the chat answers `first`, and a retryable answer queues the job. */
  const send = async (title: string, first: PostOutcome) => {
    slack.answer(first);
    const relay = deliverOnce({ ledger, delivery: createDelivery({ ...ports, services: chatServices({ slack }) }), logger: log.logger });
    const target = targetOf('default', config.destinations['default']!, undefined);
    return clock.run(() => relay({ deliveryId: `d-${title}`, target, message: message(title) }, budgetOf(10_000)));
  };

  const deadLetters = () =>
    sqs.messages(DLQ).map((m) => ({ reason: m.attributes['reason'], destination: m.attributes['destination'], body: m.body }));
  const posted = (title: string) => slack.posts.filter((p) => p.payload.title === title).length;

  return {
    clock,
    sqs,
    store,
    ledger,
    slack,
    log,
    groups,
    one,
    container,
    invoke,
    drain,
    send,
    deadLetters,
    posted,
    duplicating: (on: boolean) => (duplicate = on),
    deadLetterQueueDown: (down: boolean) => (deadLetterQueueDown = down),
    queued: () => sqs.messages(QUEUE).length,
  };
}

/** A group of `alerts` at `default`, and its closing job on the queue. */
async function stormOf(w: ReturnType<typeof world>, alerts: number) {
  const entry = (n: number) => ({ key: `k${n}`, at: w.clock.now(), message: message(`storm ${n}`) });
  await w.groups.open('default', GROUP_ID, entry(1), 30);
  for (let n = 2; n <= alerts; n++) await w.groups.join('default', entry(n));
  const closing = { version: 2, kind: 'group_close', destination: 'default', groupId: GROUP_ID };
  await sqsMessageOps(w.sqs.lazySqs, QUEUE).send(JSON.stringify(closing), 30, { destination: 'default' });
}

/** Another job's posts keep the webhook throttled for `ms`, as their Retry-After tells the container's pacer. */
const throttled = (w: ReturnType<typeof world>, ms: number) => w.one.pacer.holdFor(WEBHOOK, ms);

describe('delivery-retry against the retry queue and its redrive', () => {
  beforeAll(() => kindOf(config.destinations['default']!).extras());

  it('a job that waits for its webhook slot receive after receive is delivered in the end, not redriven', async () => {
    const w = world();
    await w.send('patient', { kind: 'retryable', reason: 'http_500' });
    // More receives in a row than the queue's maxReceiveCount find the webhook held by other jobs' Retry-Afters; then it is free.
    const held = deployed.queue.maxReceiveCount + 10;
    await w.drain(held + 10, (n) => n < held && throttled(w, 5_000));
    expect(w.posted('patient')).toBe(2);
    expect(w.deadLetters()).toEqual([]);
    expect(w.queued()).toBe(0);
  });

  it('a job that fails every attempt, waiting for its slot between them, is parked by us with its reason after its last one', async () => {
    const w = world();
    await w.send('hopeless', { kind: 'retryable', reason: 'http_500' });
    w.slack.answer(...Array.from({ length: MAX_ATTEMPTS }, (): PostOutcome => ({ kind: 'retryable', reason: 'http_500' })));
    // Every other receive only finds the webhook held: more receives than the queue's maxReceiveCount in all.
    await w.drain(4 * MAX_ATTEMPTS, (n) => n % 2 === 0 && throttled(w, 5_000));
    expect(2 * MAX_ATTEMPTS).toBeGreaterThan(deployed.queue.maxReceiveCount);
    // The relay's attempt and the rest from the queue; the waits between them were none.
    expect(w.posted('hopeless')).toBe(MAX_ATTEMPTS);
    expect(w.deadLetters()).toEqual([{ reason: 'attempts_exhausted:http_500', destination: 'default', body: expect.any(String) }]);
    expect(JSON.parse(w.deadLetters()[0]!.body)).toMatchObject({ attempt: MAX_ATTEMPTS, lastReason: 'http_500' });
    expect(w.queued()).toBe(0);
  });

  it("a group closing its chat throttles for long parks each alert with its reason before SQS's redrive can take it", async () => {
    const w = world();
    await stormOf(w, 3);
    w.slack.answer(
      ...Array.from({ length: MAX_ATTEMPTS }, (): PostOutcome => ({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 60_000 })),
    );

    await w.drain(4 * MAX_ATTEMPTS);
    // Each alert waits in the dead-letter queue as its own delivery, with the reason; none is lost.
    expect(w.deadLetters().map((d) => d.reason)).toEqual(Array(3).fill('attempts_exhausted:rate_limited'));
    expect(w.deadLetters().map((d) => parseDeliveryJob(d.body)?.message.payload.title)).toEqual(['storm 1', 'storm 2', 'storm 3']);
    // Tried as long as a single alert is.
    expect(w.slack.posts).toHaveLength(MAX_ATTEMPTS);
    expect(w.groups.groups.get('default')?.state).toBe('flushed');
    expect(w.queued()).toBe(0);
  });

  it('a closing that fails every attempt, waiting for its slot between them, parks each alert after its last one', async () => {
    const w = world();
    await stormOf(w, 3);
    w.slack.answer(...Array.from({ length: MAX_ATTEMPTS }, (): PostOutcome => ({ kind: 'retryable', reason: 'http_503' })));
    // Every other receive only finds the webhook held: more receives than the queue's maxReceiveCount in all.
    await w.drain(4 * MAX_ATTEMPTS, (n) => n % 2 === 0 && throttled(w, 5_000));
    expect(w.slack.posts).toHaveLength(MAX_ATTEMPTS);
    expect(w.deadLetters().map((d) => d.reason)).toEqual(Array(3).fill('attempts_exhausted:http_503'));
    expect(w.queued()).toBe(0);
  });

  it('a job whose configuration cannot be read for hours goes on as a new message, and is delivered once it can', async () => {
    const w = world();
    await w.send('blocked', { kind: 'retryable', reason: 'http_500' });
    w.store.set(new ConfigUnavailableError('down', 'ResourceNotFoundException'));
    // Each receive waits out the queue's visibility timeout: more of them than its maxReceiveCount.
    await w.drain(deployed.queue.maxReceiveCount + 5);
    w.store.set({ config });
    await w.drain(10);
    expect(w.posted('blocked')).toBe(2);
    expect(w.deadLetters()).toEqual([]);
    expect(w.queued()).toBe(0);
  });

  it("a copy that finds another's claim late in its message's life waits as a new message, its receive no attempt", async () => {
    const w = world();
    await w.send('claimed', { kind: 'retryable', reason: 'http_500' });
    const [queued] = w.sqs.messages(QUEUE);
    // Another container holds the claim for a minute; this copy's message was received many times before.
    await w.ledger.claimQueued(deliveryRecordId(message('claimed'), 'default'), {
      token: 'elsewhere',
      holdSeconds: 60,
      job: { firstAttemptAt: JSON.parse(queued!.body).firstAttemptAt },
    });
    const receives = deployed.queue.maxReceiveCount - 1;
    const copy = {
      messageId: 'copy',
      receiptHandle: 'copy#1',
      body: queued!.body,
      attributes: { ApproximateReceiveCount: String(receives) },
    };
    await w.invoke([w.one, [copy]]);
    expect(w.posted('claimed')).toBe(1);
    const again = w.sqs.messages(QUEUE).find((m) => m.messageId !== queued!.messageId);
    expect(again!.visibleAt - w.clock.now()).toBe(60_000);
    expect(JSON.parse(again!.body)).toMatchObject({ attempt: 1 + receives - 1 });
  });

  it('one job handed to two batches at once posts once; the second copy finds it delivered', async () => {
    const w = world();
    await w.send('once', { kind: 'retryable', reason: 'http_500' });
    w.clock.advance(sqsDelay(w));
    // SQS hands the message out twice: to two containers, side by side.
    w.duplicating(true);
    const first = w.sqs.receive(QUEUE, 10);
    w.duplicating(false);
    const second = w.sqs.receive(QUEUE, 10);
    expect(second.map((r) => r.messageId)).toEqual(first.map((r) => r.messageId));
    await w.invoke([w.one, first], [w.container(), second]);
    await w.drain(20);
    // The relay's failed attempt, and one from the queue.
    expect(w.posted('once')).toBe(2);
    expect(w.deadLetters()).toEqual([]);
    expect(w.queued()).toBe(0);
  });
});

/**
 * A job handed to two batches at its last attempt: the first copy holds the claim, meets a 429 and
 * parks the alert, while the second finds the claim and waits on the queue. Posted never since.
 */
async function parkedByItsTwin(w: ReturnType<typeof world>, title: string) {
  await w.send(title, { kind: 'retryable', reason: 'http_500' });
  w.slack.answer(...Array.from({ length: MAX_ATTEMPTS - 2 }, (): PostOutcome => ({ kind: 'retryable', reason: 'http_500' })), {
    kind: 'retryable',
    reason: 'rate_limited',
    retryAfterMs: 30_000,
  });
  await w.drain(MAX_ATTEMPTS - 2);
  expect(w.posted(title)).toBe(MAX_ATTEMPTS - 1);
  w.clock.advance(sqsDelay(w));
  w.duplicating(true);
  const first = w.sqs.receive(QUEUE, 10);
  w.duplicating(false);
  const second = w.sqs.receive(QUEUE, 10);
  expect(second.map((r) => r.messageId)).toEqual(first.map((r) => r.messageId));
  await w.invoke([w.one, first], [w.container(), second]);
  expect(w.deadLetters()).toEqual([{ reason: 'attempts_exhausted:rate_limited', destination: 'default', body: expect.any(String) }]);
  // The copy that waited comes back, and finds the alert parked by its twin.
  await w.drain(20);
  expect(w.posted(title)).toBe(MAX_ATTEMPTS);
  expect(w.queued()).toBe(0);
}

/** An operator's redrive: the dead-letter queue's messages back on the retry queue, as parked. */
async function redrive(w: ReturnType<typeof world>) {
  const parked = w.sqs.receive(DLQ, 10);
  const queue = sqsMessageOps(w.sqs.lazySqs, QUEUE);
  for (const m of parked) {
    await queue.send(m.body, 0, { destination: m.messageAttributes['destination']?.stringValue });
    w.sqs.delete(DLQ, m.receiptHandle);
  }
}

describe('a job whose twin parked it', () => {
  beforeAll(() => kindOf(config.destinations['default']!).extras());

  it('is parked once and posted never when its copies reach two batches at its last attempt', async () => {
    const w = world();
    await parkedByItsTwin(w, 'twin');
    expect(w.deadLetters()).toHaveLength(1);
    expect(w.log.records()).toContainEqual(
      expect.objectContaining({ message: 'duplicate delivery: another copy of this job parked it', outcome: 'duplicate' }),
    );
  });

  it("is posted once by an operator's redrive of the parked message", async () => {
    const w = world();
    await parkedByItsTwin(w, 'redriven');
    await redrive(w);
    await w.drain(5);
    expect(w.posted('redriven')).toBe(MAX_ATTEMPTS + 1);
    expect(w.deadLetters()).toEqual([]);
    expect(w.queued()).toBe(0);
    expect(w.ledger.entries.get(deliveryRecordId(message('redriven'), 'default'))?.state).toBe('delivered');
  });

  it('is posted once when the platform sends the alert again', async () => {
    const w = world();
    await parkedByItsTwin(w, 'sent again');
    expect(await w.send('sent again', { kind: 'delivered' })).toMatchObject({ kind: 'delivered' });
    await w.drain(5);
    expect(w.posted('sent again')).toBe(MAX_ATTEMPTS + 1);
    expect(w.ledger.entries.get(deliveryRecordId(message('sent again'), 'default'))?.state).toBe('delivered');
  });

  it('a job whose parking the dead-letter queue refused is neither dropped as parked nor lost: its next receive parks it', async () => {
    const w = world();
    await w.send('unparked', { kind: 'retryable', reason: 'http_500' });
    w.slack.answer(...Array.from({ length: MAX_ATTEMPTS }, (): PostOutcome => ({ kind: 'retryable', reason: 'http_500' })));
    await w.drain(MAX_ATTEMPTS - 2);
    w.deadLetterQueueDown(true);
    await w.drain(1);
    expect(w.posted('unparked')).toBe(MAX_ATTEMPTS);
    expect(w.deadLetters()).toEqual([]);
    expect(w.queued()).toBe(1);
    w.deadLetterQueueDown(false);
    await w.drain(5);
    expect(w.posted('unparked')).toBe(MAX_ATTEMPTS + 1);
    expect(w.deadLetters().map((d) => d.reason)).toEqual(['attempts_exhausted:http_500']);
    expect(w.queued()).toBe(0);
  });

  it("a group closing's parked alerts: each posted once by a redrive, or by the platform sending it again", async () => {
    const w = world();
    await stormOf(w, 2);
    w.slack.answer(
      ...Array.from({ length: MAX_ATTEMPTS }, (): PostOutcome => ({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 60_000 })),
    );
    await w.drain(4 * MAX_ATTEMPTS);
    expect(w.deadLetters()).toHaveLength(2);
    expect(await w.send('storm 2', { kind: 'delivered' })).toMatchObject({ kind: 'delivered' });
    await redrive(w);
    await w.drain(10);
    const accepted = w.slack.posts.slice(MAX_ATTEMPTS + 1).map((p) => p.payload.title);
    expect(accepted).toEqual(['storm 1']);
    expect(w.posted('storm 2')).toBe(1);
    expect(w.deadLetters()).toEqual([]);
    expect(w.queued()).toBe(0);
  });
});

/** How long until the queue's next message is visible. */
const sqsDelay = (w: ReturnType<typeof world>) => Math.max(0, (w.sqs.nextVisibleAt(QUEUE) ?? 0) - w.clock.now());
