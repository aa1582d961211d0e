import type { LoadedConfig } from '../config/load.js';
import type { RelayConfigStore } from '../config/store.js';
import { CONFIG_READ_BUDGET_MS } from '../config/store.js';
import { type CostEventJob, type CostEventWriter, parseCostEventJob } from '../cost-events/events.js';
import { type AnomalyHeld, followUpDelivered, type RetryLedger } from '../dedup/once.js';
import type { Delivery, Target } from '../delivery/deliver.js';
import { QUEUE_CALL_BUDGET_MS, targetOf } from '../delivery/deliver.js';
import { parseDeliveryJob } from '../delivery/job-schema.js';
import { type EscalationJob, parseEscalationJob } from '../escalation/job-schema.js';
import { type EscalationPorts, processEscalation } from '../escalation/process.js';
import { closeGroup } from '../group/close.js';
import { type GroupCloseJob, parseGroupCloseJob } from '../group/job.js';
import type { GroupStore } from '../group/store.js';
import type { Logger } from '../log/logger.js';
import {
  configurationUnavailableMetric,
  costEventMetric,
  deliveryMetric,
  type Metrics,
  noMetrics,
  retryAttemptMetric,
} from '../metrics/metrics.js';
import { addressOf, destinationType, kindOf } from '../notify/kinds.js';
import type { QueueMessageOps } from '../queue/sqs.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { type Sleep, sleep } from '../shared/sleep.js';
import type { Pacer } from './pacer.js';

/** The fields of an SQS record this function reads (Lambda's SQSRecord has them all). */
export interface QueueRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount?: string };
}

export interface RetryDependencies {
  config: RelayConfigStore;
  delivery: Delivery;
  messages: QueueMessageOps;
  pacer: Pacer;
  /** Attempts in all (the relay's first one included) before an alert is parked. */
  maxAttempts: number;
  postTimeoutMs: number;
  /** Overrides every chat service's own pace when set. */
  minIntervalMs?: number;
  logger: Logger;
  metrics?: Metrics;
  /** Tells the dedup table what became of a queued alert; without it nothing is remembered. */
  ledger?: RetryLedger;
  budget: InvocationBudget;
  /** Where grouped alerts wait (the dedup table); without it a closing job is parked as malformed. */
  groups?: GroupStore;
  /**
   * What escalations waiting on the queue need (lib/escalation); without them an escalation job is
   * parked as malformed. `held`: the relay's watcher, told of a follow-up delivered from here.
   */
  escalations?: Pick<EscalationPorts, 'ledger' | 'first' | 'queue'> & { held: AnomalyHeld };
  /** Writes the cost events the triage function queued (lib/cost-events); without it such a job is parked as malformed. */
  costEvents?: CostEventWriter;
  sleep?: Sleep;
  /** The clock escalations are due by; Date.now by default. */
  now?: () => number;
}

export type BatchResult = { batchItemFailures: Array<{ itemIdentifier: string }> };

type RecordOutcome = 'delivered' | 'retry_later' | 'parked' | 'not_attempted';

/** A record that fails unexpectedly this many times fails the same way every time: park it with the reason. */
export const UNEXPECTED_FAILURES_BEFORE_PARKING = 3;

/** Kept free after a post (besides the answer's reserve): the queue call that settles the record, and the ledger's. */
const AFTER_POST_MS = QUEUE_CALL_BUDGET_MS + 500;

/**
 * Works through one SQS batch in order. Each record is either done (delivered or parked in
 * the dead-letter queue: SQS deletes it) or reported as a batch item failure with its
 * visibility set to when it should be tried again. A post a chat service accepted is never retried.
 */
export async function processBatch(records: readonly QueueRecord[], deps: RetryDependencies): Promise<BatchResult> {
  const failures: Array<{ itemIdentifier: string }> = [];
  for (const record of records) {
    let outcome: RecordOutcome;
    try {
      outcome = await processRecord(record, deps);
    } catch (error) {
      deps.logger.error('retry failed unexpectedly', { messageId: record.messageId, reason: errorReason(error) });
      const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
      outcome =
        receives >= UNEXPECTED_FAILURES_BEFORE_PARKING
          ? parked(await deps.delivery.park({ body: record.body, reason: `unexpected_error:${errorReason(error)}` }, deps.budget))
          : 'retry_later';
    }
    if (outcome === 'retry_later' || outcome === 'not_attempted') failures.push({ itemIdentifier: record.messageId });
  }
  return { batchItemFailures: failures };
}

const metrics = (deps: RetryDependencies): Metrics => deps.metrics ?? noMetrics;

const parked = (done: boolean): RecordOutcome => (done ? 'parked' : 'retry_later');

/** A visibility change that cannot hang the batch: a late one only means SQS's own visibility timeout applies. */
function changeVisibility(deps: RetryDependencies, record: QueueRecord, seconds: number): Promise<void> {
  return deps.budget.step('retry_queue', QUEUE_CALL_BUDGET_MS, (signal) =>
    deps.messages.changeVisibility(record.receiptHandle, seconds, signal),
  );
}

async function processRecord(record: QueueRecord, deps: RetryDependencies): Promise<RecordOutcome> {
  const { delivery, budget } = deps;
  const job = parseDeliveryJob(record.body);
  const closing = job || !deps.groups ? undefined : parseGroupCloseJob(record.body);
  if (closing && deps.groups) return closeRecord(record, closing, deps, deps.groups);
  const escalation = job || closing || !deps.escalations ? undefined : parseEscalationJob(record.body);
  if (escalation && deps.escalations) return escalationRecord(record, escalation, deps, deps.escalations);
  const costEvent = job || closing || escalation || !deps.costEvents ? undefined : parseCostEventJob(record.body);
  if (costEvent && deps.costEvents) return costEventRecord(record, costEvent, deps, deps.costEvents);
  if (!job) return parked(await delivery.park({ body: record.body, reason: 'malformed_message' }, budget));
  const log = deps.logger.child({ deliveryId: job.deliveryId, destination: job.destination });

  const found = await configuredTarget(record, job.destination, deps, job.quiet);
  if ('outcome' in found) return found.outcome;
  const { target } = found;
  const { destination } = target;
  // A kind whose follow-ups depend on what was decided meanwhile (a pager: nothing after Expected) reads it again.
  if (job.anomaly?.kind === 'follow_up' && kindOf(destination).followUpsReadTriage && deps.ledger) {
    job.anomaly = await deps.ledger.followUpNow(job.message, job.destination, job.anomaly, budget);
  }
  const service = delivery.serviceFor(destination);
  const key = service.paceKey(addressOf(destination));

  // Leave what cannot be finished to a later invocation rather than be cut off mid-post.
  const wait = deps.pacer.delayFor(key);
  if (!budget.fits(wait + deps.postTimeoutMs + AFTER_POST_MS)) {
    await changeVisibility(deps, record, Math.ceil(wait / 1000) + 1).catch(() => undefined);
    return 'not_attempted';
  }
  await deps.pacer.wait(key, deps.minIntervalMs ?? service.minIntervalMs);
  const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
  const attempts = job.attempt + receives;
  const type = destinationType(destination);
  metrics(deps).add(retryAttemptMetric(type));
  const decision = await delivery.again({ job, target, attempts, maxAttempts: deps.maxAttempts }, budget);

  if (decision.kind === 'delivered') {
    log.info('delivered from the retry queue', { attempts });
    metrics(deps).add(deliveryMetric(job.anomaly?.kind === 'follow_up' ? 'follow_up' : 'delivered', type));
    await deps.ledger?.settle(
      {
        message: job.message,
        destination: job.destination,
        outcome: 'delivered',
        ...(job.anomaly ? { anomaly: job.anomaly } : {}),
        ...(decision.opened ? { opened: decision.opened } : {}),
      },
      budget,
    );
    await followUpDelivered(
      deps.escalations?.held,
      { deliveryId: job.deliveryId, target, message: job.message, anomaly: job.anomaly, origin: job.origin, costCenters: job.costCenters },
      budget,
    );
    return 'delivered';
  }
  const updated = JSON.stringify({ ...job, attempt: attempts, lastReason: decision.failure });
  if (decision.kind === 'park') {
    metrics(deps).add(deliveryMetric('parked', type));
    // Forgotten, so that the platform sending it again tries this destination again.
    await deps.ledger?.settle(
      { message: job.message, destination: job.destination, outcome: 'parked', ...(job.anomaly ? { anomaly: job.anomaly } : {}) },
      budget,
    );
    return parked(await delivery.park({ body: updated, reason: decision.reason, destination: job.destination }, budget));
  }
  metrics(deps).add(deliveryMetric('queued', type));

  if (decision.retryAfterMs !== undefined) deps.pacer.holdFor(key, decision.retryAfterMs);
  await changeVisibility(deps, record, decision.delaySeconds).catch((error: unknown) =>
    log.warn('could not set when to retry; the queue visibility timeout applies', { error: errorReason(error) }),
  );
  log.warn('delivery will be retried', { attempts, reason: decision.reason, delaySeconds: decision.delaySeconds });
  return 'retry_later';
}

/**
 * The destination a queued record names, as configured now, with what posting to it takes (a
 * quiet test delivery stays quiet); or what becomes of the record when there is none: handed
 * back while the configuration cannot be read, parked when it no longer names the destination.
 */
async function configuredTarget(
  record: QueueRecord,
  name: string,
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
    return { outcome: 'retry_later' };
  }
  if (!Object.hasOwn(loaded.config.destinations, name)) {
    const reason = 'destination_not_configured';
    return { outcome: parked(await deps.delivery.park({ body: record.body, reason, destination: name }, deps.budget)) };
  }
  return { target: targetOf(name, loaded.config.destinations[name]!, loaded.config.slack, quiet, loaded.config.platform) };
}

/** A group's closing job: post what the group holds, as one message or digests, like any alert. */
async function closeRecord(record: QueueRecord, job: GroupCloseJob, deps: RetryDependencies, store: GroupStore): Promise<RecordOutcome> {
  const { delivery, budget } = deps;
  const found = await configuredTarget(record, job.destination, deps);
  if ('outcome' in found) return found.outcome;
  const { target } = found;
  const { destination } = target;
  const key = delivery.serviceFor(destination).paceKey(addressOf(destination));
  const wait = deps.pacer.delayFor(key);
  if (!budget.fits(wait + deps.postTimeoutMs + AFTER_POST_MS)) {
    await settleVisibility(deps, record, Math.ceil(wait / 1000) + 1);
    return 'not_attempted';
  }
  await deps.pacer.wait(key, deps.minIntervalMs ?? delivery.serviceFor(destination).minIntervalMs);
  const closeDeps = {
    store,
    delivery,
    logger: deps.logger,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    ...(deps.ledger ? { ledger: deps.ledger } : {}),
    ...(deps.escalations ? { held: deps.escalations.held } : {}),
    now: Date.now,
    sleep: deps.sleep ?? sleep,
    reserveMs: AFTER_POST_MS,
    postTimeoutMs: deps.postTimeoutMs,
  };
  const outcome = await closeGroup(job, target, closeDeps, budget);
  if (outcome.kind === 'closed') return 'delivered';
  // Each alert is parked as its own delivery job; the closing job itself is done.
  if (outcome.kind === 'parked') return 'parked';
  if (outcome.retryAfterMs !== undefined) deps.pacer.holdFor(key, outcome.retryAfterMs);
  await settleVisibility(deps, record, outcome.delaySeconds);
  deps.logger.warn('group closing will be retried', {
    destination: job.destination,
    reason: outcome.reason,
    delaySeconds: outcome.delaySeconds,
  });
  return 'retry_later';
}

/**
 * An anomaly's escalation: sent again with the time left while it is not due; when due, posted to
 * the destination it goes to. Done either way, unless the configuration cannot be read.
 */
async function escalationRecord(
  record: QueueRecord,
  job: EscalationJob,
  deps: RetryDependencies,
  ports: NonNullable<RetryDependencies['escalations']>,
): Promise<RecordOutcome> {
  // Left to a later invocation rather than cut off between its lease and its post.
  if (!deps.budget.fits(deps.postTimeoutMs + AFTER_POST_MS + QUEUE_CALL_BUDGET_MS)) {
    await settleVisibility(deps, record, 1);
    return 'not_attempted';
  }
  const outcome = await processEscalation(
    job,
    { ...ports, config: deps.config, logger: deps.logger, ...(deps.metrics ? { metrics: deps.metrics } : {}), now: deps.now ?? Date.now },
    deps.budget,
    record.messageId,
  );
  return outcome === 'done' ? 'delivered' : 'retry_later';
}

/** What one queued cost event may take: a token, the directory, a claim, the platform's answer and its record. */
export const COST_EVENT_CALL_MS = 10_000;
/** A cost event the platform could not take yet waits this long after its first failure, doubling up to SQS's longest delay. */
const COST_EVENT_BACKOFF_SECONDS = 30;
const LONGEST_DELAY_SECONDS = 900;

/**
 * A cost event the triage function could not write in time: written (or deleted) now; tried again
 * later while the platform cannot take it, and parked for a human after `maxAttempts` receives.
 */
async function costEventRecord(
  record: QueueRecord,
  job: CostEventJob,
  deps: RetryDependencies,
  writer: CostEventWriter,
): Promise<RecordOutcome> {
  if (!deps.budget.fits(COST_EVENT_CALL_MS + AFTER_POST_MS)) {
    await settleVisibility(deps, record, 1);
    return 'not_attempted';
  }
  const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
  try {
    const outcome = await deps.budget.step(
      'cost_event',
      COST_EVENT_CALL_MS,
      (signal) => writer.apply(job.change, job.subject, signal),
      AFTER_POST_MS,
    );
    metrics(deps).add(costEventMetric(outcome));
    deps.logger.info('cost event', { change: job.change, outcome, attempt: receives + 1 });
    return 'delivered';
  } catch (error) {
    const reason = errorReason(error);
    if (receives + 1 >= deps.maxAttempts) {
      deps.logger.error('cost event parked after its last attempt', { change: job.change, reason });
      const done = await deps.delivery.park({ body: record.body, reason: `cost_event_failed:${reason}` }, deps.budget);
      if (done) metrics(deps).add(costEventMetric('parked'));
      return parked(done);
    }
    const delay = Math.min(LONGEST_DELAY_SECONDS, COST_EVENT_BACKOFF_SECONDS * 2 ** (receives - 1));
    deps.logger.warn('cost event will be retried', { change: job.change, reason, delaySeconds: delay });
    await settleVisibility(deps, record, delay);
    return 'retry_later';
  }
}

/** A late visibility change only means SQS's own visibility timeout applies. */
async function settleVisibility(deps: RetryDependencies, record: QueueRecord, seconds: number): Promise<void> {
  try {
    await changeVisibility(deps, record, seconds);
  } catch {
    // The queue's visibility timeout brings the record back instead.
  }
}
