import type { SlackMessage } from '../format/slack-message.js';
import type { DeadLetterQueue, RetryQueue } from '../queue/sqs.js';
import type { DeliveryJob } from '../queue/job.js';
import { retryDelaySeconds } from '../retry/backoff.js';
import type { PostResult, SlackPoster } from '../slack/post.js';
import type { Logger } from '../log/logger.js';
import type { DeliveryResult } from './outcome.js';

export interface DeliverOptions {
  post: SlackPoster;
  sleep: (ms: number) => Promise<void>;
  /** Time left for this invocation; a 429 wait must fit inside it together with one more post. */
  remainingTimeMs: () => number;
  /** Time one post may take at the most (the Slack request timeout). */
  postTimeoutMs: number;
  retryQueue?: RetryQueue;
  deadLetters?: DeadLetterQueue;
  logger: Logger;
  now: () => number;
}

const SAFETY_MARGIN_MS = 500;

/** Posts once; after a 429, waits the Retry-After and posts once more when there is time for it. */
export async function postWithOneRetry(url: string, message: SlackMessage, options: DeliverOptions): Promise<PostResult> {
  const first = await options.post(url, message);
  if (first.kind !== 'rate_limited') return first;
  const needed = first.retryAfterMs + options.postTimeoutMs + SAFETY_MARGIN_MS;
  if (needed > options.remainingTimeMs()) return first;
  await options.sleep(first.retryAfterMs);
  return options.post(url, message);
}

export interface Delivery {
  deliveryId: string;
  destination: string;
  url: string;
  message: SlackMessage;
}

/**
 * One destination's whole first attempt. With a retry queue, a failure that may pass is
 * stored for the retry function instead of waiting here (the queue paces Slack's rate
 * limit better than a Lambda sleeping); a refusal is parked in the dead-letter queue.
 */
export async function deliver(delivery: Delivery, options: DeliverOptions): Promise<DeliveryResult> {
  const { retryQueue, deadLetters } = options;
  const result = retryQueue
    ? await options.post(delivery.url, delivery.message)
    : await postWithOneRetry(delivery.url, delivery.message, options);
  if (result.kind === 'delivered') return result;

  const job: DeliveryJob = {
    version: 1,
    deliveryId: delivery.deliveryId,
    destination: delivery.destination,
    attempt: 1,
    firstAttemptAt: new Date(options.now()).toISOString(),
    lastReason: result.kind === 'rate_limited' ? 'rate_limited' : result.reason,
    payload: { ...delivery.message },
  };

  if (result.kind === 'permanent') {
    if (deadLetters) {
      await deadLetters.park(JSON.stringify(job), result.reason, delivery.destination).catch((error: unknown) =>
        options.logger.error('could not park a refused message in the dead-letter queue', {
          destination: delivery.destination,
          reason: (error as Error).name,
        }),
      );
    }
    return result;
  }

  if (!retryQueue) return result;
  try {
    await retryQueue.enqueue(job, retryDelaySeconds(result, 1));
    return { kind: 'queued', reason: job.lastReason ?? 'unknown' };
  } catch (error) {
    options.logger.error('could not queue a message for a later attempt', {
      destination: delivery.destination,
      reason: (error as Error).name,
    });
    return { kind: 'queue_failed', reason: job.lastReason ?? 'unknown' };
  }
}
