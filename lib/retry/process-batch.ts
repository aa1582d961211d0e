import type { RefreshingCache } from '../config/cache.js';
import type { LoadedConfig } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import { parseDeliveryJob, type DeliveryJob } from '../queue/job.js';
import type { DeadLetterQueue, QueueMessageOps } from '../queue/sqs.js';
import type { PostResult, SlackPoster } from '../slack/post.js';
import { retryDelaySeconds } from './backoff.js';
import type { Pacer } from './pacer.js';

/** The fields of an SQS record this function reads (Lambda's SQSRecord has them all). */
export interface QueueRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount?: string };
}

export interface RetryDependencies {
  config: RefreshingCache<LoadedConfig>;
  post: SlackPoster;
  postTimeoutMs: number;
  messages: QueueMessageOps;
  deadLetters?: DeadLetterQueue;
  pacer: Pacer;
  maxAttempts: number;
  logger: Logger;
  remainingTimeMs: () => number;
}

type RecordOutcome = 'delivered' | 'retry_later' | 'parked' | 'not_attempted';

const SAFETY_MARGIN_MS = 1_000;

/**
 * Works through one SQS batch in order. Each record is either done (delivered or parked in
 * the dead-letter queue: SQS deletes it) or reported as a batch item failure with its
 * visibility set to when it should be tried again. A post Slack accepted is never retried.
 */
export async function processBatch(
  records: readonly QueueRecord[],
  deps: RetryDependencies,
): Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const failures: Array<{ itemIdentifier: string }> = [];
  for (const record of records) {
    let outcome: RecordOutcome;
    try {
      outcome = await processRecord(record, deps);
    } catch (error) {
      deps.logger.error('retry failed unexpectedly', { messageId: record.messageId, reason: (error as Error).name });
      outcome = 'retry_later';
    }
    if (outcome === 'retry_later' || outcome === 'not_attempted') failures.push({ itemIdentifier: record.messageId });
  }
  return { batchItemFailures: failures };
}

async function park(deps: RetryDependencies, body: string, reason: string, destination?: string): Promise<RecordOutcome> {
  if (!deps.deadLetters) {
    // Without a dead-letter queue of our own, the queue's redrive policy moves it after maxReceiveCount.
    deps.logger.error('message cannot be delivered and no dead-letter queue is configured', { reason, destination });
    return 'retry_later';
  }
  try {
    await deps.deadLetters.park(body, reason, destination);
  } catch (error) {
    deps.logger.error('could not park a message in the dead-letter queue', { reason: (error as Error).name, destination });
    return 'retry_later';
  }
  deps.logger.error('message parked in the dead-letter queue', { reason, destination });
  return 'parked';
}

async function processRecord(record: QueueRecord, deps: RetryDependencies): Promise<RecordOutcome> {
  const job = parseDeliveryJob(record.body);
  if (!job) return park(deps, record.body, 'malformed_message');
  const log = deps.logger.child({ deliveryId: job.deliveryId, destination: job.destination });

  let loaded: LoadedConfig;
  try {
    loaded = (await deps.config.get()).value;
  } catch (error) {
    log.error('relay configuration is unavailable; will retry', { reason: (error as Error).name });
    return 'retry_later';
  }
  const destination = loaded.config.destinations[job.destination];
  if (!destination) return park(deps, record.body, 'destination_not_configured', job.destination);

  // Leave what cannot be finished to a later invocation rather than be cut off mid-post.
  const wait = deps.pacer.delayFor(destination.url);
  if (wait + deps.postTimeoutMs + SAFETY_MARGIN_MS > deps.remainingTimeMs()) {
    await deps.messages.changeVisibility(record.receiptHandle, Math.ceil(wait / 1000) + 1);
    return 'not_attempted';
  }
  await deps.pacer.wait(destination.url);
  const result = await deps.post(destination.url, job.payload);
  const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
  const attempts = job.attempt + receives;
  return settle(record, job, result, attempts, destination.url, deps, log);
}

async function settle(
  record: QueueRecord,
  job: DeliveryJob,
  result: PostResult,
  attempts: number,
  url: string,
  deps: RetryDependencies,
  log: Logger,
): Promise<RecordOutcome> {
  if (result.kind === 'delivered') {
    log.info('delivered from the retry queue', { attempts });
    return 'delivered';
  }
  const reason = result.kind === 'rate_limited' ? 'rate_limited' : result.reason;
  const updated = JSON.stringify({ ...job, attempt: attempts, lastReason: reason });
  if (result.kind === 'permanent') return park(deps, updated, reason, job.destination);
  if (attempts >= deps.maxAttempts) return park(deps, updated, `attempts_exhausted:${reason}`, job.destination);

  const delay = retryDelaySeconds(result, attempts);
  if (result.kind === 'rate_limited') deps.pacer.holdFor(url, result.retryAfterMs);
  await deps.messages.changeVisibility(record.receiptHandle, delay);
  log.warn('delivery will be retried', { attempts, reason, delaySeconds: delay });
  return 'retry_later';
}
