import { beforeAll, describe, expect, it } from 'vitest';
import type { PostOutcome } from '../../lib/chat/service.js';
import { ConfigUnavailableError } from '../../lib/config/errors.js';
import { type RelayConfig, relayConfigSchema } from '../../lib/config/schema.js';
import { deliverOnce } from '../../lib/dedup/once.js';
import { createDelivery, QUEUE_CALL_BUDGET_MS, targetOf } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import type { EscalationJob } from '../../lib/escalation/job.js';
import type { EscalationQueue } from '../../lib/escalation/queue.js';
import { escalationWatcher } from '../../lib/escalation/watch.js';
import { inMemoryGroupStore } from '../../lib/group/store.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { googleChatService } from '../../lib/notify/googlechat/service.js';
import { destinationType, kindOf } from '../../lib/notify/kinds.js';
import { teamsService } from '../../lib/notify/teams/service.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createPacer, pacedServices } from '../../lib/retry/pacer.js';
import { type BatchResult, PACE_HOLD_MS, processBatch, type QueueRecord, type RetryDependencies } from '../../lib/retry/process-batch.js';
import { ANSWER_RESERVE_MS } from '../../lib/shared/deadline.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { settledWithin, virtualClock } from '../helpers/timer-clock.js';

const message = (title: string) => webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title } });
const config = {
  auth: { method: 'none' as const, headers: [] },
  destinations: {
    default: { url: 'https://hooks.slack.com/services/T0/B0/aaa' },
    ops: { url: 'https://hooks.slack.com/services/T0/B1/bbb' },
  },
  routes: [],
};

let counter = 0;
function record(body: unknown, receives = 1): QueueRecord {
  counter++;
  return {
    messageId: `m${counter}`,
    receiptHandle: `rh${counter}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: { ApproximateReceiveCount: String(receives) },
  };
}
const job = (title: string, destination = 'default') => newJob(`d-${title}`, destination, message(title), 'http_500', 0);

function setup(
  script: PostOutcome[] = [],
  options: { remainingMs?: number; configError?: boolean; dlqFails?: boolean; config?: RelayConfig } = {},
) {
  const clock = virtualClock();
  const slack = fakeChatService(script, 1_100);
  const deadLetters = memoryDeadLetters(options.dlqFails ? new Error('AccessDenied') : undefined);
  const log = capturedLogger();
  const metrics = memoryMetrics();
  /** Each visibility change, with when it was made: the record comes back `seconds` after `at`. */
  const visibility: Array<{ receiptHandle: string; seconds: number }> = [];
  const returns = new Map<string, number>();
  const store = memoryConfigStore(
    options.configError ? new ConfigUnavailableError('down', 'ResourceNotFoundException') : { config: options.config ?? config },
  );
  let remaining = options.remainingMs ?? 60_000;
  const started = clock.now();
  const pacer = createPacer(clock.now, clock.sleep);
  const deps: RetryDependencies = {
    config: store,
    // As delivery-retry is wired: every post tells the pacer, and a Retry-After holds its key.
    delivery: createDelivery({
      services: pacedServices(chatServices({ slack }), pacer),
      postTimeoutMs: 5_000,
      deadLetters,
      logger: log.logger,
      metrics,
      now: clock.now,
      sleep: clock.sleep,
    }),
    messages: {
      changeVisibility: async (receiptHandle: string, seconds: number): Promise<void> => {
        visibility.push({ receiptHandle, seconds });
        returns.set(receiptHandle, clock.now() + seconds * 1000);
      },
    } as QueueMessageOps,
    pacer,
    maxAttempts: 5,
    postTimeoutMs: 5_000,
    logger: log.logger,
    metrics,
    budget: budgetOf(() => remaining - (clock.now() - started)),
    now: clock.now,
    sleep: clock.sleep,
  };
  /** One invocation, on the test's clock. */
  const batch = (records: QueueRecord[], dependencies: RetryDependencies = deps): Promise<BatchResult> =>
    clock.run(() => processBatch(records, dependencies));
  /** A record handed back, as SQS hands it out again once its visibility ends: the clock moved there, one more receive. */
  const comesBack = (r: QueueRecord): QueueRecord => {
    const at = returns.get(r.receiptHandle);
    if (at === undefined) throw new Error(`${r.messageId} was not handed back`);
    if (at > clock.now()) clock.advance(at - clock.now());
    return {
      ...r,
      receiptHandle: `${r.receiptHandle}+`,
      attributes: { ApproximateReceiveCount: String(Number(r.attributes.ApproximateReceiveCount) + 1) },
    };
  };
  return {
    deps,
    batch,
    comesBack,
    slack,
    deadLetters,
    visibility,
    clock,
    log,
    metrics,
    setRemaining: (ms: number) => (remaining = ms),
  };
}

/** When each post reached the fake service, by title, on the test's clock. */
function postTimes(service: ReturnType<typeof fakeChatService>, clock: { now: () => number }) {
  const at = new Map<string, number>();
  const post = service.post.bind(service);
  service.post = (url, payload, options) => {
    at.set((payload as { title: string }).title, clock.now());
    return post(url, payload, options);
  };
  return at;
}

/** Posts of the same service at least `ms` apart, in the order they went. */
const spacedBy = (times: Iterable<number>, ms: number) => {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).every((t, i) => t - sorted[i]! >= ms);
};

describe('delivery-retry, one batch', () => {
  it('delivers good jobs and reports only the ones that must come back', async () => {
    const { batch, slack, visibility } = setup([{ kind: 'delivered' }, { kind: 'retryable', reason: 'http_502' }]);
    const records = [record(job('one')), record(job('two', 'ops'))];
    expect(await batch(records)).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.messageId }] });
    expect(slack.posts.map((p) => p.payload.title)).toEqual(['one', 'two']);
    // attempt 1 by the relay + this receive = 2 attempts: 10 s backoff.
    expect(visibility).toEqual([{ receiptHandle: records[1]!.receiptHandle, seconds: 10 }]);
  });

  it('paces by each service: Teams four a second per webhook, Google Chat one a second per space', async () => {
    const { deps, batch, clock } = setup();
    const teams = fakeChatService([], teamsService().minIntervalMs);
    const chat = { ...fakeChatService([], googleChatService().minIntervalMs), paceKey: googleChatService().paceKey };
    const space = 'https://chat.googleapis.com/v1/spaces/AAAA/messages';
    const store = memoryConfigStore({
      config: {
        ...config,
        destinations: {
          ...config.destinations,
          teams: { url: 'https://prod-1.westus.logic.azure.com/workflows/x/triggers/manual/paths/invoke?sig=S' },
          chatOne: { url: `${space}?key=K&token=ONE` },
          chatTwo: { url: `${space}?key=K&token=TWO` },
        },
      },
    });
    const delivery = createDelivery({
      services: pacedServices(chatServices({ teams, googlechat: chat }), deps.pacer),
      postTimeoutMs: 5_000,
      logger: deps.logger,
      now: clock.now,
      sleep: clock.sleep,
    });
    await batch([record(job('a', 'teams')), record(job('b', 'teams')), record(job('c', 'chatOne')), record(job('d', 'chatTwo'))], {
      ...deps,
      config: store,
      delivery,
    });
    // Two webhooks in one space share Google's per-space limit.
    expect(clock.slept).toEqual([260, 1_100]);
    expect(teams.posts).toHaveLength(2);
    expect(chat.posts.map((p) => p.url)).toEqual([`${space}?key=K&token=ONE`, `${space}?key=K&token=TWO`]);
  });

  it('paces posts to one webhook by the service interval; a Retry-After holds it, and what waits behind it comes back when it ends', async () => {
    const { batch, comesBack, slack, clock, visibility } = setup([
      { kind: 'delivered' },
      { kind: 'retryable', reason: 'rate_limited', retryAfterMs: 4_000 },
    ]);
    const times = postTimes(slack, clock);
    const [a, b, c] = [record(job('a')), record(job('b')), record(job('c'))];
    expect(await batch([a, b, c])).toEqual({ batchItemFailures: [{ itemIdentifier: b.messageId }, { itemIdentifier: c.messageId }] });
    expect(clock.slept).toEqual([1_100]);
    // b was throttled for 4 s: c, behind it, is not posted in the hold; it waits on the queue until the hold ends.
    expect([...times.keys()]).toEqual(['a', 'b']);
    expect(visibility.find((v) => v.receiptHandle === c.receiptHandle)?.seconds).toBe(4);
    expect(await batch([comesBack(c)])).toEqual({ batchItemFailures: [] });
    expect(times.get('c')! - times.get('b')!).toBeGreaterThanOrEqual(4_000);
  });

  it('uses a Retry-After as the visibility delay', async () => {
    const { batch, visibility } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 42_000 }]);
    await batch([record(job('a'))]);
    expect(visibility[0]?.seconds).toBe(42);
  });

  it('hands back, unposted, what would not finish before the invocation ends', async () => {
    const { batch, slack, visibility } = setup([], { remainingMs: 5_500 });
    const r = record(job('late'));
    expect(await batch([r])).toEqual({ batchItemFailures: [{ itemIdentifier: r.messageId }] });
    expect(slack.posts).toHaveLength(0);
    expect(visibility).toEqual([{ receiptHandle: r.receiptHandle, seconds: 1 }]);
  });

  it('parks a refusal with its reason and the attempts made, and deletes it from the queue', async () => {
    const { batch, deadLetters } = setup([{ kind: 'refused', reason: 'channel_is_archived' }]);
    const r = record(job('gone'), 2);
    expect(await batch([r])).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked).toEqual([{ body: expect.any(String), reason: 'channel_is_archived', destination: 'default' }]);
    expect(JSON.parse(deadLetters.parked[0]!.body)).toMatchObject({ attempt: 3, lastReason: 'channel_is_archived' });
  });

  it('parks when the attempts run out, naming the last failure', async () => {
    const { batch, deadLetters } = setup([{ kind: 'retryable', reason: 'timeout' }]);
    await batch([record(job('tired'), 4)]);
    expect(deadLetters.parked[0]).toMatchObject({ reason: 'attempts_exhausted:timeout' });
  });

  it.each([
    ['malformed JSON', '{', 'malformed_message'],
    ['a job with fields for Slack added by a sender', { ...job('x'), username: 'CEO', channel: '#general' }, 'malformed_message'],
    ['a removed destination', job('x', 'removed'), 'destination_not_configured'],
    ['a destination named like an Object property', job('x', 'constructor'), 'destination_not_configured'],
    ['a destination named __proto__', job('x', '__proto__'), 'destination_not_configured'],
  ])('parks %s without posting', async (_name, body, reason) => {
    const { batch, slack, deadLetters } = setup();
    expect(await batch([record(body)])).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked[0]?.reason).toBe(reason);
    expect(slack.posts).toHaveLength(0);
  });

  it('keeps a message on the queue when it can be neither delivered nor parked', async () => {
    const { batch } = setup([{ kind: 'refused', reason: 'invalid_payload' }], { dlqFails: true });
    const r = record(job('stuck'));
    expect(await batch([r])).toEqual({ batchItemFailures: [{ itemIdentifier: r.messageId }] });
  });

  it('keeps every message when the configuration cannot be read', async () => {
    const { batch, slack } = setup([], { configError: true });
    const records = [record(job('a')), record(job('b'))];
    expect((await batch(records)).batchItemFailures).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
  });

  it('hands every message back when the configuration read never settles, within the invocation', async () => {
    // Little time left, so the read's deadline (real time) is short.
    const { deps, batch, slack, metrics } = setup([], { remainingMs: ANSWER_RESERVE_MS + 50 });
    deps.config = { ...deps.config, current: () => new Promise<never>(() => {}) };
    const records = [record(job('a')), record(job('b'))];
    expect((await batch(records)).batchItemFailures).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
    expect(metrics.count('ConfigurationUnavailable')).toBe(2);
  });

  it('an unexpected failure on one record does not lose the others', async () => {
    const { batch, slack, log } = setup();
    const format = slack.format;
    slack.format = (message, destination) => {
      if (message.payload.title === 'x') throw new TypeError('boom');
      return format(message, destination);
    };
    const records = [record(job('x')), record(job('y', 'ops'))];
    expect(await batch(records)).toEqual({ batchItemFailures: [{ itemIdentifier: records[0]!.messageId }] });
    expect(slack.posts.map((p) => p.payload.title)).toEqual(['y']);
    expect(log.lines.join('\n')).toContain('retry failed unexpectedly');
  });
});

describe('delivery-retry, against a queue that hangs', () => {
  it('gives up on a visibility change in time and still answers the batch', async () => {
    const { deps, log, slack } = setup([{ kind: 'retryable', reason: 'http_500' }, { kind: 'delivered' }], { remainingMs: 9_000 });
    let visibilitySignal: AbortSignal | undefined;
    deps.messages.changeVisibility = (_handle, _seconds, signal) => {
      visibilitySignal = signal;
      return new Promise<void>(() => {});
    };
    const records = [record(job('slow')), record(job('next', 'ops'))];
    // The deadline runs on the timer clock: at most QUEUE_CALL_BUDGET_MS for the hung call.
    expect(await settledWithin(QUEUE_CALL_BUDGET_MS, () => processBatch(records, deps))).toEqual({
      batchItemFailures: [{ itemIdentifier: records[0]!.messageId }],
    });
    expect(visibilitySignal?.aborted).toBe(true);
    expect(slack.posts.map((p) => p.payload.title)).toEqual(['slow', 'next']);
    expect(log.lines.join('\n')).toContain('queue visibility timeout applies');
    // Named by its reason, which survives the bundle's minified class names.
    expect(log.records()).toContainEqual(expect.objectContaining({ error: 'retry_queue_deadline' }));
  });
});

describe('delivery-retry, a job that fails the same way every time', () => {
  it('is retried twice, then parked with the reason instead of waiting for the redrive policy', async () => {
    const { batch, slack, deadLetters } = setup();
    slack.format = () => {
      throw new RangeError('formatter bug');
    };
    const body = job('poison');
    expect((await batch([record(body, 1)])).batchItemFailures).toHaveLength(1);
    expect((await batch([record(body, 2)])).batchItemFailures).toHaveLength(1);
    expect(await batch([record(body, 3)])).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked.map((p) => p.reason)).toEqual(['unexpected_error:RangeError']);
  });

  it('counts every attempt and what came of it, by destination type; a parked alert by its reason', async () => {
    const { batch, metrics } = setup([
      { kind: 'delivered' },
      { kind: 'retryable', reason: 'http_502' },
      { kind: 'refused', reason: 'channel_not_found' },
    ]);
    await batch([record(job('a')), record(job('b', 'ops')), record(job('c'))]);
    expect(metrics.count('RetryAttempts', { destinationType: 'slack' })).toBe(3);
    expect(metrics.count('Deliveries', { outcome: 'delivered', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'queued', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'parked', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('AlertsParked', { reason: 'channel_not_found' })).toBe(1);
  });

  it('a worker that cannot read its configuration counts it on every record, which the blocked-worker alarm watches', async () => {
    const { batch, metrics, slack } = setup([], { configError: true });
    const result = await batch([record(job('a')), record(job('b'))]);
    expect(result.batchItemFailures).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
    expect(metrics.count('ConfigurationUnavailable')).toBe(2);
  });
});

describe('delivery-retry: no destination waits on another', () => {
  // Loaded before the clock runs: an import settles on the machine's time, not the test's clock.
  beforeAll(() => kindOf(config.destinations.ops).extras());
  const groupId = '0b0e8c1a-6c1e-4d2f-9a3b-5f7d1e2c3b4a';
  const closing = (destination: string) => ({ version: 2, kind: 'group_close', destination, groupId });

  it("a group's closing for one destination goes out at once while another works through a backlog; each keeps its pace", async () => {
    const { deps, batch, slack, clock, visibility } = setup();
    const times = postTimes(slack, clock);
    const groups = inMemoryGroupStore(clock.now);
    const storm = (n: number) => ({ key: `storm-${n}`, at: clock.now(), message: message(`storm ${n}`) });
    await groups.open('ops', groupId, storm(1), 10);
    const start = clock.now();
    const backlog = Array.from({ length: 6 }, (_, i) => record(job(`backlog ${i}`)));
    const result = await batch([...backlog, record(closing('ops'))], { ...deps, groups });

    // The closing went first, not after the backlog's paced posts.
    expect(times.get('storm 1')).toBe(start);
    // The backlog kept its webhook's pace: what fits the invocation's first seconds is posted,
    // the rest waits on the queue for its slot, one interval apart.
    const posted = backlog.filter((r) => times.has(JSON.parse(r.body).message.payload.title));
    expect(posted.length).toBeGreaterThan(0);
    expect(
      spacedBy(
        posted.map((r) => times.get(JSON.parse(r.body).message.payload.title)!),
        1_100,
      ),
    ).toBe(true);
    expect(clock.now() - start).toBeLessThanOrEqual(PACE_HOLD_MS);
    const waiting = backlog.slice(posted.length);
    expect(result.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(waiting.map((r) => r.messageId));
    // Each until its own slot, an interval after the one before (whole seconds, rounded up).
    expect(visibility.map((v) => v.seconds)).toEqual(waiting.map((_, i) => Math.ceil(((i + 1) * 1_100) / 1000)));
  });

  it('what went back to the queue comes back to its own slot: a record that arrived meanwhile waits behind it, and the pace holds', async () => {
    const { batch, comesBack, slack, clock } = setup();
    const times = postTimes(slack, clock);
    const first = Array.from({ length: 5 }, (_, i) => record(job(`first ${i}`)));
    const waiting = (await batch(first)).batchItemFailures.map((f) => first.find((r) => r.messageId === f.itemIdentifier)!);
    expect(waiting.length).toBeGreaterThan(1);
    // Another batch before they are back: its record books the slot after theirs.
    const later = record(job('later'));
    expect((await batch([later])).batchItemFailures).toEqual([{ itemIdentifier: later.messageId }]);
    for (const r of waiting) expect((await batch([comesBack(r)])).batchItemFailures).toEqual([]);
    expect((await batch([comesBack(later)])).batchItemFailures).toEqual([]);
    const order = [...times.entries()].sort((a, b) => a[1] - b[1]).map(([title]) => title);
    expect(order).toEqual([...first.map((_, i) => `first ${i}`), 'later']);
    expect(spacedBy(times.values(), 1_100)).toBe(true);
  });

  it('a receive that only sent a record back to wait for its slot is no attempt', async () => {
    const { batch, comesBack, deadLetters, slack } = setup([{ kind: 'delivered' }, { kind: 'delivered' }]);
    const last = record(job('third in line'));
    await batch([record(job('first')), record(job('second')), last]);
    slack.answer({ kind: 'refused', reason: 'channel_is_archived' });
    await batch([comesBack(last)]);
    // The relay's attempt and this one: two, though SQS handed the message out twice.
    expect(JSON.parse(deadLetters.parked[0]!.body)).toMatchObject({ attempt: 2, lastReason: 'channel_is_archived' });
  });

  it('the posts of every job go through the pace: a Retry-After from one holds the key for the rest', async () => {
    const { deps, batch, slack, clock, visibility } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 30_000 }]);
    const times = postTimes(slack, clock);
    const groups = inMemoryGroupStore(clock.now);
    await groups.open('default', groupId, { key: 'k', at: clock.now(), message: message('grouped') }, 10);
    const next = record(job('next'));
    await batch([record(closing('default')), next], { ...deps, groups });
    expect([...times.keys()]).toEqual(['grouped']);
    expect(visibility.find((v) => v.receiptHandle === next.receiptHandle)?.seconds).toBe(30);
  });
});

describe('the paced services delivery-retry posts through', () => {
  it('mark each post, so that the next to the same key waits an interval after it, whichever job made it', async () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    const slack = fakeChatService([], 1_100);
    const services = pacedServices(chatServices({ slack }), pacer, 2_000);
    const url = 'https://hooks.slack.com/services/T0/B0/aaa';
    expect(services.slack.minIntervalMs).toBe(2_000);
    await services.slack.post(url, { title: 'a digest part' }, { timeoutMs: 1_000 });
    expect(pacer.delayFor(url)).toBe(2_000);
    clock.advance(500);
    expect(pacer.delayFor(url)).toBe(1_500);
    expect(pacer.delayFor('https://hooks.slack.com/services/T0/B1/bbb')).toBe(0);
  });
});

describe('delivery-retry: a due escalation keeps the pace of the destination it goes to', () => {
  const ONCALL = 'https://hooks.slack.com/services/T0/B3/oncall';
  const escalating = relayConfigSchema.parse({
    auth: { method: 'none' },
    destinations: {
      default: { url: 'https://hooks.slack.com/services/T0/B0/aaa' },
      finops: { url: 'https://hooks.slack.com/services/T0/B2/finops', escalate: { afterMinutes: 1, to: 'oncall' } },
      oncall: { url: ONCALL },
    },
  });

  /** delivery-retry with escalations wired as in AWS, and one escalation due at `oncall`. */
  async function dueEscalation() {
    const s = setup([], { config: escalating });
    const ledger = memoryLedger(s.clock.now);
    const waiting: Array<{ job: EscalationJob; delaySeconds: number }> = [];
    const queue: EscalationQueue = { schedule: async (job, delaySeconds) => void waiting.push({ job, delaySeconds }) };
    const ports = { ledger, queue, logger: s.log.logger, now: s.clock.now };
    const held = escalationWatcher({ ...ports, windowSeconds: 86_400, typeOf: destinationType });
    const first = deliverOnce({ ledger, delivery: s.deps.delivery, logger: s.log.logger, now: s.clock.now, held });
    const target = targetOf('finops', escalating.destinations['finops']!, undefined);
    await first({ deliveryId: 'r1', target, message: message('nobody acknowledged it') }, budgetOf(10_000));
    const due = waiting.shift()!.job;
    s.clock.advance(2 * 60_000);
    // Another invocation, with all its time ahead of it.
    s.setRemaining(60_000 + 2 * 60_000);
    const times = postTimes(s.slack, s.clock);
    return { ...s, deps: { ...s.deps, escalations: { ledger, queue, held, first } }, due, waiting, times };
  }

  it('posts in its slot after a delivery to the same webhook in the same batch', async () => {
    const { deps, batch, due, times, slack } = await dueEscalation();
    expect(await batch([record(job('queued for oncall', 'oncall')), record(due)], deps)).toEqual({ batchItemFailures: [] });
    expect(slack.posts.filter((p) => p.url === ONCALL)).toHaveLength(2);
    expect(times.get('nobody acknowledged it')! - times.get('queued for oncall')!).toBeGreaterThanOrEqual(1_100);
  });

  it('two copies in one batch go in order: the second finds it escalated rather than leased', async () => {
    const { deps, batch, due, slack, waiting } = await dueEscalation();
    expect(await batch([record(due), record(due)], deps)).toEqual({ batchItemFailures: [] });
    expect(slack.posts.filter((p) => p.url === ONCALL)).toHaveLength(1);
    expect(waiting).toEqual([]);
  });

  it('goes back to wait while a Retry-After holds the webhook, its lease released', async () => {
    const { deps, batch, due, times, waiting, slack } = await dueEscalation();
    slack.answer({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 30_000 });
    await batch([record(job('throttled', 'oncall'))], deps);
    expect(await batch([record(due)], deps)).toEqual({ batchItemFailures: [] });
    expect([...times.keys()]).toEqual(['throttled']);
    expect(waiting).toEqual([{ job: due, delaySeconds: 30 }]);
  });
});
