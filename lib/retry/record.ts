// What every kind of job on the retry queue (lib/retry/jobs/) works with: how its record goes
// back to the queue, waits for its destination's pace, or is parked as it came.
import type { LoadedConfig } from '../config/load.js';
import { CONFIG_READ_BUDGET_MS } from '../config/store.js';
import { clampSeconds, MAX_DELAY_SECONDS } from '../delivery/decide.js';
import type { Target } from '../delivery/deliver.js';
import { QUEUE_CALL_BUDGET_MS, targetOf } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import { configurationUnavailableMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { addressOf } from '../notify/kinds.js';
import { errorReason } from '../shared/errors.js';
import type { Again, Planned, QueueRecord, RecordOutcome, Resend, RetryDependencies } from './job-kind.js';

/** Kept free after a post (besides the answer's reserve): the queue call that settles the record, and the ledger's. */
export const AFTER_POST_MS = QUEUE_CALL_BUDGET_MS + 500;

/**
 * The receives of one message after which delivery-retry no longer hands it back to SQS (its
 * visibility set until it should come back) but sends its job again as a new message, which
 * carries the attempts made. SQS counts every receive, waits for a slot or a lease included, and
 * once a message had the queue's maxReceiveCount (template.yaml, well above this) its redrive
 * moves it to the dead-letter queue without a reason, and a group's closing without its alerts,
 * which only the group's item holds. The margin is for receives our code never settles (an
 * invocation that fails, a message SQS hands out twice). A new message only this late, because
 * SQS's two copies of one message come back as one, while two new messages would be two jobs.
 */
export const HAND_BACK_RECEIVES = 20;

/** How many times SQS has handed this message out, this time included. */
export const receivesOf = (record: QueueRecord): number => Number(record.attributes.ApproximateReceiveCount ?? '1');

/** A job's body as a new message, with its message's attributes. */
export const resend = (job: object, attributes: Resend['attributes']): Resend => ({ body: JSON.stringify(job), attributes });

export const metrics = (deps: RetryDependencies): Metrics => deps.metrics ?? noMetrics;

/** Parked when the dead-letter queue took it; else it stays on the retry queue. */
export const parked = (done: boolean): RecordOutcome => (done ? 'parked' : 'retry_later');

/** Parks the record as it came, with the reason: a job no kind reads, or one its kind cannot do here. */
export async function parkAsReceived(
  record: QueueRecord,
  reason: string,
  deps: RetryDependencies,
  destination?: string,
): Promise<RecordOutcome> {
  return parked(await deps.delivery.park({ body: record.body, reason, ...(destination ? { destination } : {}) }, deps.budget));
}

/** A visibility change that cannot hang the batch: a late one only means SQS's own visibility timeout applies. */
function changeVisibility(deps: RetryDependencies, record: QueueRecord, seconds: number): Promise<void> {
  return deps.budget.step('retry_queue', QUEUE_CALL_BUDGET_MS, (signal) =>
    deps.messages.changeVisibility(record.receiptHandle, seconds, signal),
  );
}

/** A late visibility change only means SQS's own visibility timeout applies. */
export async function settleVisibility(deps: RetryDependencies, record: QueueRecord, seconds: number): Promise<void> {
  try {
    await changeVisibility(deps, record, seconds);
  } catch {
    // The queue's visibility timeout brings the record back instead.
  }
}

/**
 * Back to the queue until `seconds` from now: by its visibility while SQS has handed the message
 * out fewer than HAND_BACK_RECEIVES times, else as a new message (`again`), so that SQS's redrive
 * never takes it. A visibility change that fails only means the queue's visibility timeout applies.
 */
export async function handBack(
  record: QueueRecord,
  seconds: number,
  again: () => Resend,
  deps: RetryDependencies,
  log: Logger = deps.logger,
): Promise<RecordOutcome> {
  if (receivesOf(record) >= HAND_BACK_RECEIVES) return sendAgain(record, seconds, again(), deps);
  await changeVisibility(deps, record, seconds).catch((error: unknown) =>
    log.warn('could not set when to retry; the queue visibility timeout applies', { error: errorReason(error) }),
  );
  return 'retry_later';
}

/** Its job as a new message visible in `seconds`, the one received done; handed back by its visibility when the queue cannot take it. */
async function sendAgain(record: QueueRecord, seconds: number, again: Resend, deps: RetryDependencies): Promise<RecordOutcome> {
  try {
    await deps.budget.step('retry_queue', QUEUE_CALL_BUDGET_MS, (signal) =>
      deps.messages.send(again.body, clampSeconds(seconds), again.attributes, signal),
    );
  } catch (error) {
    deps.logger.warn('could not send a job again as a new message; it comes back by its visibility', {
      messageId: record.messageId,
      error: errorReason(error),
    });
    await settleVisibility(deps, record, seconds);
    return 'retry_later';
  }
  deps.logger.info('sent again as a new message', { messageId: record.messageId, receives: receivesOf(record), delaySeconds: seconds });
  return 'resent';
}

/**
 * A record that cannot be worked on now (the configuration cannot be read) is left to the queue's
 * visibility timeout; from HAND_BACK_RECEIVES on it waits as a new message instead.
 */
function leftToTheQueue(record: QueueRecord, again: () => Resend, deps: RetryDependencies): Promise<RecordOutcome> {
  return receivesOf(record) >= HAND_BACK_RECEIVES ? sendAgain(record, MAX_DELAY_SECONDS, again(), deps) : Promise.resolve('retry_later');
}

/** A record that posts to a configured destination, at that destination's pace. */
export async function posting(
  record: QueueRecord,
  name: string,
  again: Again,
  deps: RetryDependencies,
  quiet: boolean | undefined,
  run: (target: Target, wentBack: number) => Promise<RecordOutcome>,
): Promise<Planned> {
  // Were it left to the queue, this receive would be no attempt.
  const found = await configuredTarget(record, name, () => again(1), deps, quiet);
  if ('outcome' in found) return found;
  const { target } = found;
  const service = deps.delivery.serviceFor(target.destination);
  return {
    pace: { key: service.paceKey(addressOf(target.destination)), intervalMs: service.minIntervalMs, destination: name, again },
    run: (wentBack) => run(target, wentBack),
  };
}

/**
 * The destination a queued record names, as configured now, with what posting to it takes (a
 * quiet test delivery stays quiet); or what becomes of the record when there is none: handed
 * back while the configuration cannot be read, parked when it no longer names the destination.
 */
async function configuredTarget(
  record: QueueRecord,
  name: string,
  again: () => Resend,
  deps: RetryDependencies,
  quiet = false,
): Promise<{ target: Target } | { outcome: RecordOutcome }> {
  let loaded: LoadedConfig;
  try {
    loaded = await deps.budget.stepIfPending('configuration', CONFIG_READ_BUDGET_MS, deps.config.current());
  } catch {
    // The store has logged why; the message stays on the queue until the configuration is
    // fixed. The metric is what the "retry worker blocked" alarm watches: handing records
    // back is not an error Lambda would count.
    metrics(deps).add(configurationUnavailableMetric());
    return { outcome: await leftToTheQueue(record, again, deps) };
  }
  if (!Object.hasOwn(loaded.config.destinations, name)) {
    return { outcome: await parkAsReceived(record, 'destination_not_configured', deps, name) };
  }
  return { target: targetOf(name, loaded.config.destinations[name]!, loaded.config.slack, quiet, loaded.config.platform) };
}
