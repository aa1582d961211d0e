import { describe, expect, it } from 'vitest';
import type { PostOutcome } from '../../lib/chat/service.js';
import { ConfigUnavailableError } from '../../lib/config/errors.js';
import { createDelivery, QUEUE_CALL_BUDGET_MS } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { googleChatService } from '../../lib/notify/googlechat/service.js';
import { teamsService } from '../../lib/notify/teams/service.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch, type QueueRecord } from '../../lib/retry/process-batch.js';
import { ANSWER_RESERVE_MS } from '../../lib/shared/deadline.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService, manualClock, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { settledWithin } from '../helpers/timer-clock.js';

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

function setup(script: PostOutcome[] = [], options: { remainingMs?: number; configError?: boolean; dlqFails?: boolean } = {}) {
  const clock = manualClock();
  const slack = fakeChatService(script, 1_100);
  const deadLetters = memoryDeadLetters(options.dlqFails ? new Error('AccessDenied') : undefined);
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const visibility: Array<{ receiptHandle: string; seconds: number }> = [];
  const store = memoryConfigStore(options.configError ? new ConfigUnavailableError('down', 'ResourceNotFoundException') : { config });
  let remaining = options.remainingMs ?? 60_000;
  const started = clock.now();
  const deps = {
    config: store,
    delivery: createDelivery({
      services: chatServices({ slack }),
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
      },
    } as QueueMessageOps,
    pacer: createPacer(clock.now, clock.sleep),
    maxAttempts: 5,
    postTimeoutMs: 5_000,
    logger: log.logger,
    metrics,
    budget: budgetOf(() => remaining - (clock.now() - started)),
  };
  return { deps, slack, deadLetters, visibility, clock, log, metrics, setRemaining: (ms: number) => (remaining = ms) };
}

describe('delivery-retry, one batch', () => {
  it('delivers good jobs and reports only the ones that must come back', async () => {
    const { deps, slack, visibility } = setup([{ kind: 'delivered' }, { kind: 'retryable', reason: 'http_502' }]);
    const records = [record(job('one')), record(job('two', 'ops'))];
    expect(await processBatch(records, deps)).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.messageId }] });
    expect(slack.posts.map((p) => p.payload.title)).toEqual(['one', 'two']);
    // attempt 1 by the relay + this receive = 2 attempts: 10 s backoff.
    expect(visibility).toEqual([{ receiptHandle: records[1]!.receiptHandle, seconds: 10 }]);
  });

  it('paces by each service: Teams four a second per webhook, Google Chat one a second per space', async () => {
    const { deps, clock } = setup();
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
      services: chatServices({ teams, googlechat: chat }),
      postTimeoutMs: 5_000,
      logger: deps.logger,
      now: clock.now,
      sleep: clock.sleep,
    });
    await processBatch([record(job('a', 'teams')), record(job('b', 'teams')), record(job('c', 'chatOne')), record(job('d', 'chatTwo'))], {
      ...deps,
      config: store,
      delivery,
    });
    // Two webhooks in one space share Google's per-space limit.
    expect(clock.slept).toEqual([260, 1_100]);
    expect(teams.posts).toHaveLength(2);
    expect(chat.posts.map((p) => p.url)).toEqual([`${space}?key=K&token=ONE`, `${space}?key=K&token=TWO`]);
  });

  it('paces posts to one webhook by the service interval, and holds it for a Retry-After', async () => {
    const { deps, slack, clock } = setup([
      { kind: 'delivered' },
      { kind: 'retryable', reason: 'rate_limited', retryAfterMs: 4_000 },
      { kind: 'delivered' },
    ]);
    await processBatch([record(job('a')), record(job('b'))], deps);
    expect(clock.slept).toEqual([1_100]);
    await processBatch([record(job('c'))], deps);
    // b was throttled for 4 s; c waits for that, not just the 1.1 s interval.
    expect(clock.slept[1]).toBeGreaterThanOrEqual(4_000 - 1);
    expect(slack.posts).toHaveLength(3);
  });

  it('uses a Retry-After as the visibility delay', async () => {
    const { deps, visibility } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 42_000 }]);
    await processBatch([record(job('a'))], deps);
    expect(visibility[0]?.seconds).toBe(42);
  });

  it('hands back, unposted, what would not finish before the invocation ends', async () => {
    const { deps, slack, visibility } = setup([], { remainingMs: 5_500 });
    const r = record(job('late'));
    expect(await processBatch([r], deps)).toEqual({ batchItemFailures: [{ itemIdentifier: r.messageId }] });
    expect(slack.posts).toHaveLength(0);
    expect(visibility).toEqual([{ receiptHandle: r.receiptHandle, seconds: 1 }]);
  });

  it('parks a refusal with its reason and the attempts made, and deletes it from the queue', async () => {
    const { deps, deadLetters } = setup([{ kind: 'refused', reason: 'channel_is_archived' }]);
    const r = record(job('gone'), 2);
    expect(await processBatch([r], deps)).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked).toEqual([{ body: expect.any(String), reason: 'channel_is_archived', destination: 'default' }]);
    expect(JSON.parse(deadLetters.parked[0]!.body)).toMatchObject({ attempt: 3, lastReason: 'channel_is_archived' });
  });

  it('parks when the attempts run out, naming the last failure', async () => {
    const { deps, deadLetters } = setup([{ kind: 'retryable', reason: 'timeout' }]);
    await processBatch([record(job('tired'), 4)], deps);
    expect(deadLetters.parked[0]).toMatchObject({ reason: 'attempts_exhausted:timeout' });
  });

  it.each([
    ['malformed JSON', '{', 'malformed_message'],
    ['a job with fields for Slack added by a sender', { ...job('x'), username: 'CEO', channel: '#general' }, 'malformed_message'],
    ['a removed destination', job('x', 'removed'), 'destination_not_configured'],
    ['a destination named like an Object property', job('x', 'constructor'), 'destination_not_configured'],
    ['a destination named __proto__', job('x', '__proto__'), 'destination_not_configured'],
  ])('parks %s without posting', async (_name, body, reason) => {
    const { deps, slack, deadLetters } = setup();
    expect(await processBatch([record(body)], deps)).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked[0]?.reason).toBe(reason);
    expect(slack.posts).toHaveLength(0);
  });

  it('keeps a message on the queue when it can be neither delivered nor parked', async () => {
    const { deps } = setup([{ kind: 'refused', reason: 'invalid_payload' }], { dlqFails: true });
    const r = record(job('stuck'));
    expect(await processBatch([r], deps)).toEqual({ batchItemFailures: [{ itemIdentifier: r.messageId }] });
  });

  it('keeps every message when the configuration cannot be read', async () => {
    const { deps, slack } = setup([], { configError: true });
    const records = [record(job('a')), record(job('b'))];
    expect((await processBatch(records, deps)).batchItemFailures).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
  });

  it('hands every message back when the configuration read never settles, within the invocation', async () => {
    // Little time left, so the read's deadline (real time) is short.
    const { deps, slack, metrics } = setup([], { remainingMs: ANSWER_RESERVE_MS + 50 });
    deps.config = { ...deps.config, current: () => new Promise<never>(() => {}) };
    const records = [record(job('a')), record(job('b'))];
    expect((await processBatch(records, deps)).batchItemFailures).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
    expect(metrics.count('ConfigurationUnavailable')).toBe(2);
  });

  it('an unexpected failure on one record does not lose the others', async () => {
    const { deps, slack, log } = setup();
    const format = slack.format;
    slack.format = (message, destination) => {
      if (message.payload.title === 'x') throw new TypeError('boom');
      return format(message, destination);
    };
    const records = [record(job('x')), record(job('y', 'ops'))];
    expect(await processBatch(records, deps)).toEqual({ batchItemFailures: [{ itemIdentifier: records[0]!.messageId }] });
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
    const { deps, slack, deadLetters } = setup();
    slack.format = () => {
      throw new RangeError('formatter bug');
    };
    const body = job('poison');
    expect((await processBatch([record(body, 1)], deps)).batchItemFailures).toHaveLength(1);
    expect((await processBatch([record(body, 2)], deps)).batchItemFailures).toHaveLength(1);
    expect(await processBatch([record(body, 3)], deps)).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked.map((p) => p.reason)).toEqual(['unexpected_error:RangeError']);
  });

  it('counts every attempt and what came of it, by destination type; a parked alert by its reason', async () => {
    const { deps, metrics } = setup([
      { kind: 'delivered' },
      { kind: 'retryable', reason: 'http_502' },
      { kind: 'refused', reason: 'channel_not_found' },
    ]);
    await processBatch([record(job('a')), record(job('b')), record(job('c'))], deps);
    expect(metrics.count('RetryAttempts', { destinationType: 'slack' })).toBe(3);
    expect(metrics.count('Deliveries', { outcome: 'delivered', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'queued', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'parked', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('AlertsParked', { reason: 'channel_not_found' })).toBe(1);
  });

  it('a worker that cannot read its configuration counts it on every record, which the blocked-worker alarm watches', async () => {
    const { deps, metrics, slack } = setup([], { configError: true });
    const result = await processBatch([record(job('a')), record(job('b'))], deps);
    expect(result.batchItemFailures).toHaveLength(2);
    expect(slack.posts).toHaveLength(0);
    expect(metrics.count('ConfigurationUnavailable')).toBe(2);
  });
});
