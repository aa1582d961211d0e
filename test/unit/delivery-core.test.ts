import { describe, expect, it } from 'vitest';
import type { PostOutcome } from '../../lib/chat/service.js';
import { createDelivery, type DeliveryPorts } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { DeadlineExceededError } from '../../lib/shared/deadline.js';
import { budgetOf } from '../helpers/budget.js';
import {
  capturedLogger,
  chatServices,
  fakeChatService,
  manualClock,
  memoryDeadLetters,
  memoryRetryQueue,
} from '../helpers/fake-delivery-ports.js';
import { settledWithin } from '../helpers/timer-clock.js';

const URL = 'https://hooks.slack.com/services/T0/B0/secret-part';
const message = webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title: 'EC2 spend up' } });
const target = { name: 'finops', destination: { url: URL, mention: '<!here>' } };
const plenty = budgetOf(10_000);

function setup(script: PostOutcome[], options: { queue?: boolean; queueFails?: boolean; deadLetters?: boolean; dlqFails?: boolean } = {}) {
  const slack = fakeChatService(script);
  const clock = manualClock();
  const log = capturedLogger();
  const retryQueue = memoryRetryQueue(options.queueFails ? new Error('QueueDoesNotExist') : undefined);
  const deadLetters = memoryDeadLetters(options.dlqFails ? new Error('AccessDenied') : undefined);
  const ports: DeliveryPorts = {
    services: chatServices({ slack }),
    postTimeoutMs: 5_000,
    logger: log.logger,
    now: clock.now,
    sleep: clock.sleep,
    ...(options.queue || options.queueFails ? { retryQueue } : {}),
    ...(options.deadLetters !== false ? { deadLetters } : {}),
  };
  return { delivery: createDelivery(ports), ports, slack, clock, log, retryQueue, deadLetters };
}

describe("the relay's first attempt", () => {
  it("tells a formatter that asks which anomaly at the destination the post belongs to: the anomaly's record id", async () => {
    const slack = fakeChatService([]);
    const asked: string[] = [];
    const format = slack.format;
    slack.format = (alert, destination, anomaly, triage, context) => {
      asked.push(context?.anomalyId ?? '');
      return format(alert, destination, anomaly, triage, context);
    };
    const delivery = createDelivery({ ...setup([]).ports, services: chatServices({ slack }) });
    await delivery.first({ deliveryId: 'req-1', target, message }, plenty);
    expect(asked).toEqual([anomalyRecordId(message, 'finops')]);
  });

  it('formats for the destination (its mention included) and posts once', async () => {
    const { delivery, slack } = setup([]);
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({ kind: 'delivered' });
    expect(slack.posts).toEqual([{ url: URL, payload: { title: 'EC2 spend up', mention: '<!here>' }, timeoutMs: 5_000 }]);
  });

  it('gives the post no more time than the invocation has left, keeping room for a queue call and the answer', async () => {
    const withQueues = setup([]);
    await withQueues.delivery.first({ deliveryId: 'req-1', target: target, message: message }, budgetOf(6_000));
    expect(withQueues.slack.posts[0]?.timeoutMs).toBe(3_500);
    const bare = setup([], { deadLetters: false });
    await bare.delivery.first({ deliveryId: 'req-1', target: target, message: message }, budgetOf(2_000));
    expect(bare.slack.posts[0]?.timeoutMs).toBe(1_500);
  });

  it('a retry queue that hangs is given up on in time: the destination is unheld, the answer not late', async () => {
    const clock = manualClock();
    const slack = fakeChatService([{ kind: 'retryable', reason: 'http_500' }]);
    let queueSignal: AbortSignal | undefined;
    const delivery = createDelivery({
      services: chatServices({ slack }),
      postTimeoutMs: 5_000,
      retryQueue: {
        enqueue: (_job, _delay, signal) => {
          queueSignal = signal;
          return new Promise<void>(() => {});
        },
      },
      logger: capturedLogger().logger,
      now: clock.now,
      sleep: clock.sleep,
    });
    // One second left: the queue call gets what remains after the answer's reserve, 500 ms on
    // the timer clock, and the answer must be there when they are up.
    expect(
      await settledWithin(500, () => delivery.first({ deliveryId: 'req-1', target: target, message: message }, budgetOf(1_000))),
    ).toEqual({
      kind: 'unheld',
      reason: 'http_500',
    });
    expect(queueSignal?.aborted).toBe(true);
    expect(queueSignal?.reason).toBeInstanceOf(DeadlineExceededError);
    expect(queueSignal?.reason).toMatchObject({ reason: 'retry_queue_deadline' });
  });

  it('queues a retryable failure with its delay and answers queued; no second post', async () => {
    const { delivery, slack, retryQueue } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 30_000 }], { queue: true });
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({
      kind: 'queued',
      reason: 'rate_limited',
    });
    expect(slack.posts).toHaveLength(1);
    expect(retryQueue.jobs).toEqual([
      { job: expect.objectContaining({ version: 2, deliveryId: 'req-1', destination: 'finops', attempt: 1, message }), delaySeconds: 30 },
    ]);
    expect(JSON.stringify(retryQueue.jobs)).not.toContain('secret-part');
  });

  it('a queue that cannot take the job leaves the destination unheld, with the wait the service asked for', async () => {
    const { delivery, log } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 4_000 }], { queueFails: true });
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({
      kind: 'unheld',
      reason: 'rate_limited',
      retryAfterMs: 4_000,
    });
    expect(log.records()).toContainEqual(expect.objectContaining({ level: 'error', destination: 'finops', error: 'Error' }));
  });

  it('without a queue, waits out a Retry-After that fits and posts once more', async () => {
    const { delivery, slack, clock } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 1_000 }]);
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({ kind: 'delivered' });
    expect(slack.posts).toHaveLength(2);
    expect(clock.slept).toEqual([1_000]);
  });

  it('without a queue, does not wait past the invocation: unheld instead', async () => {
    const { delivery, slack, clock } = setup([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 9_000 }]);
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toMatchObject({
      kind: 'unheld',
      reason: 'rate_limited',
    });
    expect(slack.posts).toHaveLength(1);
    expect(clock.slept).toEqual([]);
  });

  it('without a queue, a failure with no Retry-After is not retried in the invocation', async () => {
    const { delivery, slack } = setup([{ kind: 'retryable', reason: 'http_503' }]);
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({
      kind: 'unheld',
      reason: 'http_503',
    });
    expect(slack.posts).toHaveLength(1);
  });

  it('parks a refusal in the dead-letter queue with reason and destination, never the URL', async () => {
    const { delivery, deadLetters, log } = setup([{ kind: 'refused', reason: 'channel_is_archived' }], { queue: true });
    expect(await delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({
      kind: 'refused',
      reason: 'channel_is_archived',
    });
    expect(deadLetters.parked).toHaveLength(1);
    expect(deadLetters.parked[0]).toMatchObject({ reason: 'channel_is_archived', destination: 'finops' });
    expect(JSON.parse(deadLetters.parked[0]!.body)).toMatchObject({ message, destination: 'finops' });
    expect(deadLetters.parked[0]!.body + log.lines.join('\n')).not.toContain('secret-part');
  });

  it('a refusal is still a refusal when it cannot be parked; the log says so', async () => {
    const noDlq = setup([{ kind: 'refused', reason: 'invalid_payload' }], { deadLetters: false });
    expect(await noDlq.delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({
      kind: 'refused',
      reason: 'invalid_payload',
    });
    expect(noDlq.log.lines.join('\n')).toContain('no dead-letter queue is configured');

    const broken = setup([{ kind: 'refused', reason: 'invalid_payload' }], { dlqFails: true });
    expect(await broken.delivery.first({ deliveryId: 'req-1', target: target, message: message }, plenty)).toEqual({
      kind: 'refused',
      reason: 'invalid_payload',
    });
    expect(broken.log.lines.join('\n')).toContain('could not park');
  });
});

describe('a later attempt', () => {
  const job = newJob('req-1', 'finops', message, 'http_500', 0);

  it('decides from the post and the attempts made', async () => {
    const { delivery } = setup([
      { kind: 'retryable', reason: 'http_500' },
      { kind: 'retryable', reason: 'http_500' },
      { kind: 'delivered' },
    ]);
    expect(await delivery.again({ job: job, target: target, attempts: 2, maxAttempts: 3 }, plenty)).toMatchObject({
      kind: 'retry',
      delaySeconds: 10,
    });
    expect(await delivery.again({ job: job, target: target, attempts: 3, maxAttempts: 3 }, plenty)).toEqual({
      kind: 'park',
      reason: 'attempts_exhausted:http_500',
      failure: 'http_500',
    });
    expect(await delivery.again({ job: job, target: target, attempts: 4, maxAttempts: 3 }, plenty)).toEqual({ kind: 'delivered' });
  });

  it('formats with the destination as configured now (a changed mention applies to queued alerts)', async () => {
    const { delivery, slack } = setup([]);
    await delivery.again(
      { job, target: { name: 'finops', destination: { url: URL, mention: '<!channel>' } }, attempts: 2, maxAttempts: 20 },
      plenty,
    );
    expect(slack.posts[0]?.payload.mention).toBe('<!channel>');
  });

  it('names the cost centers the alert arrived with, as its first attempt did', async () => {
    const { delivery, slack } = setup([]);
    const withOwners = newJob('req-2', 'finops', message, 'http_500', 0, undefined, undefined, false, [{ id: 'cc-1', name: 'Data' }]);
    await delivery.again({ job: withOwners, target, attempts: 2, maxAttempts: 20 }, plenty);
    await delivery.again({ job, target, attempts: 2, maxAttempts: 20 }, plenty);
    expect(slack.posts.map((p) => p.payload.costCenters)).toEqual([['Data'], undefined]);
  });
});
