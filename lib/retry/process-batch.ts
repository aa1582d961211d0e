import { randomUUID } from 'node:crypto';
import type { LoadedConfig } from '../config/load.js';
import type { RelayConfigStore } from '../config/store.js';
import { CONFIG_READ_BUDGET_MS } from '../config/store.js';
import { type CostEventJob, type CostEventWriter, parseCostEventJob } from '../cost-events/events.js';
import { type AnomalyHeld, followUpDelivered, type RetryLedger } from '../dedup/once.js';
import { clampSeconds, MAX_DELAY_SECONDS } from '../delivery/decide.js';
import type { Delivery, FirstAttempt, Target } from '../delivery/deliver.js';
import { QUEUE_CALL_BUDGET_MS, targetOf } from '../delivery/deliver.js';
import type { DeliveryJob } from '../delivery/job.js';
import { parseDeliveryJob } from '../delivery/job-schema.js';
import { type EscalationJob, parseEscalationJob } from '../escalation/job-schema.js';
import { type EscalationPorts, processEscalation } from '../escalation/process.js';
import { closeGroup } from '../group/close.js';
import { type GroupCloseJob, parseGroupCloseJob } from '../group/job.js';
import type { GroupStore } from '../group/store.js';
import type { Logger } from '../log/logger.js';
import { anomalyRecordId } from '../message/anomaly.js';
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
  /**
   * Posts through the chat services as `pacedServices(services, pacer)` wraps them, so that every
   * post tells the pacer it went out and a Retry-After holds its key, whatever job it belongs to.
   */
  delivery: Delivery;
  messages: QueueMessageOps;
  /** The container's pacer: each webhook's slots, holds and the slots of records waiting on the queue. */
  pacer: Pacer;
  /** Attempts in all (the relay's first one included) before an alert is parked. */
  maxAttempts: number;
  postTimeoutMs: number;
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
  /** The clock: escalations are due by it, and a batch's waits are measured on it; Date.now by default. */
  now?: () => number;
}

export type BatchResult = { batchItemFailures: Array<{ itemIdentifier: string }> };

/** `resent`: the job waits on the queue as a new message, so the one received is done. */
type RecordOutcome = 'delivered' | 'retry_later' | 'parked' | 'not_attempted' | 'resent';

/** A record that fails unexpectedly this many times fails the same way every time: park it with the reason. */
export const UNEXPECTED_FAILURES_BEFORE_PARKING = 3;

/** Kept free after a post (besides the answer's reserve): the queue call that settles the record, and the ledger's. */
const AFTER_POST_MS = QUEUE_CALL_BUDGET_MS + 500;

/**
 * How far into an invocation a record may still wait for its webhook's next slot. Lambda hands
 * a container its next batch only once this one is answered, so every second spent waiting on
 * one webhook's pace is a second that other destinations' work in the next batches waits too
 * (a group's closing, an escalation). A record whose slot comes later goes back to the queue
 * until then, its slot booked (lib/retry/pacer.ts).
 */
export const PACE_HOLD_MS = 2_000;

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

/** A job as it goes back to the queue as a new message: its body, and its message's attributes. */
interface Resend {
  body: string;
  attributes: Record<string, string | undefined>;
}

/**
 * A record's job as a new message, with the attempts it made: what its body carried in, and this
 * message's receives but `waits`, those that were no attempt (a wait for its slot, this one included).
 */
type Again = (waits: number) => Resend;

/** Where a record posts, for the records that post to a destination: they keep its pace in order. */
interface Pace {
  key: string;
  intervalMs: number;
  destination: string;
  again: Again;
}

/**
 * What a record comes to before anything is posted: an outcome already, or work to run. Work
 * with the same `lane` runs in order: a pace key's records, or the copies of one escalation.
 */
type Planned = { outcome: RecordOutcome } | { lane?: string; pace?: Pace; run: Run };

/** How many times SQS has handed this message out, this time included. */
const receivesOf = (record: QueueRecord): number => Number(record.attributes.ApproximateReceiveCount ?? '1');

/** A job's body as a new message, with its message's attributes. */
const resend = (job: object, attributes: Resend['attributes']): Resend => ({ body: JSON.stringify(job), attributes });

/** A record's work; `wentBack`: how many of its receives only sent it back to wait for its slot. */
type Run = (wentBack: number) => Promise<RecordOutcome>;

/**
 * Works through one SQS batch. Each record is either done (delivered, parked in the dead-letter
 * queue, or sent again as a new message: SQS deletes it) or reported as a batch item failure with
 * its visibility set to when it should be tried again. Records that post to one pace key (a webhook, a
 * Google Chat space, a Slack channel) go in order at that key's pace; different keys, and
 * escalations, go side by side, so that no destination waits on another's pace or Retry-After.
 * A post a chat service accepted is never retried.
 */
export async function processBatch(records: readonly QueueRecord[], deps: RetryDependencies): Promise<BatchResult> {
  const now = deps.now ?? Date.now;
  const holdUntil = now() + PACE_HOLD_MS;
  const planned = await Promise.all(
    records.map((record) =>
      plan(record, deps, holdUntil).catch(async (error: unknown) => ({ outcome: await unexpected(record, deps, error) })),
    ),
  );
  const outcomes: RecordOutcome[] = [];
  const lanes = new Map<string, Array<{ record: QueueRecord; index: number; pace?: Pace; run: Run }>>();
  planned.forEach((step, index) => {
    if ('outcome' in step) {
      outcomes[index] = step.outcome;
      return;
    }
    const record = records[index]!;
    const key = step.pace?.key ?? step.lane ?? record.messageId;
    const lane = lanes.get(key) ?? [];
    lane.push({ record, index, ...(step.pace ? { pace: step.pace } : {}), run: step.run });
    lanes.set(key, lane);
  });
  await Promise.all(
    [...lanes.values()].map(async (lane) => {
      // Records sent back to wait for their slots: booked in order, their visibility set side by side.
      const waiting: Array<Promise<void>> = [];
      for (const { record, index, pace, run } of lane) {
        if (pace && !slotInTime(record, pace, deps, holdUntil)) {
          waiting.push(
            waitForSlot(record, pace, deps).then((outcome) => {
              outcomes[index] = outcome;
            }),
          );
          continue;
        }
        outcomes[index] = await settled(record, deps, async () =>
          run(pace ? await deps.pacer.wait(pace.key, pace.intervalMs, record.messageId) : 0),
        );
      }
      await Promise.all(waiting);
    }),
  );
  return {
    batchItemFailures: records
      .filter((_, index) => outcomes[index] === 'retry_later' || outcomes[index] === 'not_attempted')
      .map((record) => ({ itemIdentifier: record.messageId })),
  };
}

/** Whether a record's slot comes soon enough in this invocation, with time for its post after it. */
function slotInTime(record: QueueRecord, pace: Pace, deps: RetryDependencies, holdUntil: number): boolean {
  const now = deps.now ?? Date.now;
  const wait = deps.pacer.delayFor(pace.key, record.messageId);
  return now() + wait <= holdUntil && deps.budget.fits(wait + deps.postTimeoutMs + AFTER_POST_MS);
}

/** Back to the queue, unposted, until its slot, which it books now: a record after it in its lane books the next. */
function waitForSlot(record: QueueRecord, pace: Pace, deps: RetryDependencies): Promise<RecordOutcome> {
  const seconds = Math.max(1, Math.ceil(deps.pacer.book(pace.key, pace.intervalMs, record.messageId) / 1000));
  deps.logger.debug('waits on the queue for its slot', { messageId: record.messageId, destination: pace.destination, seconds });
  return handBack(record, seconds, () => pace.again(deps.pacer.wentBack(pace.key, record.messageId)), deps);
}

/**
 * Back to the queue until `seconds` from now: by its visibility while SQS has handed the message
 * out fewer than HAND_BACK_RECEIVES times, else as a new message (`again`), so that SQS's redrive
 * never takes it. A visibility change that fails only means the queue's visibility timeout applies.
 */
async function handBack(
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

/** A record's work, with what an unexpected failure of it comes to. */
async function settled(record: QueueRecord, deps: RetryDependencies, work: () => Promise<RecordOutcome>): Promise<RecordOutcome> {
  try {
    return await work();
  } catch (error) {
    return unexpected(record, deps, error);
  }
}

async function unexpected(record: QueueRecord, deps: RetryDependencies, error: unknown): Promise<RecordOutcome> {
  deps.logger.error('retry failed unexpectedly', { messageId: record.messageId, reason: errorReason(error) });
  return receivesOf(record) >= UNEXPECTED_FAILURES_BEFORE_PARKING
    ? parked(await deps.delivery.park({ body: record.body, reason: `unexpected_error:${errorReason(error)}` }, deps.budget))
    : 'retry_later';
}

/**
 * What a record is, read before anything is posted; the configuration names where it goes. A job
 * that posts counts its attempts as its message's receives (but waits), plus what it carried in.
 */
async function plan(record: QueueRecord, deps: RetryDependencies, holdUntil: number): Promise<Planned> {
  const receives = receivesOf(record);
  const job = parseDeliveryJob(record.body);
  const closing = job || !deps.groups ? undefined : parseGroupCloseJob(record.body);
  if (closing && deps.groups) {
    const store = deps.groups;
    const again: Again = (waits) =>
      resend({ ...closing, attempt: (closing.attempt ?? 0) + receives - waits }, { destination: closing.destination });
    return posting(record, closing.destination, again, deps, false, (target, wentBack) =>
      closeRecord(record, closing, wentBack, again, target, deps, store),
    );
  }
  const escalation = job || closing || !deps.escalations ? undefined : parseEscalationJob(record.body);
  if (escalation && deps.escalations) {
    const ports = deps.escalations;
    // Copies of one escalation go in order, so that a later one finds it escalated rather than leased.
    const lane = `escalation:${anomalyRecordId(escalation.message, escalation.from)}`;
    return { lane, run: () => escalationRecord(record, escalation, deps, ports, holdUntil) };
  }
  const costEvent = job || closing || escalation || !deps.costEvents ? undefined : parseCostEventJob(record.body);
  if (costEvent && deps.costEvents) {
    const writer = deps.costEvents;
    // One after another: the platform's rate limit counts them all, whatever account they are for.
    return { lane: 'cost_events', run: () => costEventRecord(record, costEvent, deps, writer) };
  }
  if (!job) return { outcome: parked(await deps.delivery.park({ body: record.body, reason: 'malformed_message' }, deps.budget)) };
  const again: Again = (waits) => resend({ ...job, attempt: job.attempt + receives - waits }, { destination: job.destination });
  return posting(record, job.destination, again, deps, job.quiet, (target, wentBack) =>
    deliverRecord(record, job, target, wentBack, again, deps),
  );
}

/** A record that posts to a configured destination, at that destination's pace. */
async function posting(
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

const metrics = (deps: RetryDependencies): Metrics => deps.metrics ?? noMetrics;

const parked = (done: boolean): RecordOutcome => (done ? 'parked' : 'retry_later');

/** A visibility change that cannot hang the batch: a late one only means SQS's own visibility timeout applies. */
function changeVisibility(deps: RetryDependencies, record: QueueRecord, seconds: number): Promise<void> {
  return deps.budget.step('retry_queue', QUEUE_CALL_BUDGET_MS, (signal) =>
    deps.messages.changeVisibility(record.receiptHandle, seconds, signal),
  );
}

/**
 * A queued alert's next attempt, in its slot, once it holds the alert's claim: a copy of its job
 * that SQS handed to another worker too finds the claim and waits, or finds the alert delivered.
 */
async function deliverRecord(
  record: QueueRecord,
  job: DeliveryJob,
  target: Target,
  wentBack: number,
  again: Again,
  deps: RetryDependencies,
): Promise<RecordOutcome> {
  const { delivery, budget } = deps;
  const log = deps.logger.child({ deliveryId: job.deliveryId, destination: job.destination });
  const type = destinationType(target.destination);
  const claim = deps.ledger ? await deps.ledger.claim(job.message, job.destination, job, budget) : undefined;
  if (claim?.kind === 'done' && claim.state === 'parked') {
    // Its twin ran out of attempts and parked it: what waits for a human is not posted behind its back.
    log.info('duplicate delivery: another copy of this job parked it', { attempt: job.attempt, outcome: 'duplicate' });
    metrics(deps).add(deliveryMetric('duplicate', type));
    return 'delivered';
  }
  if (claim?.kind === 'done') {
    log.info('duplicate delivery: this destination already has it', { state: claim.state, outcome: 'duplicate' });
    metrics(deps).add(deliveryMetric('duplicate', type));
    return 'delivered';
  }
  if (claim?.kind === 'in_progress') {
    log.info('duplicate delivery: another attempt holds this destination', { outcome: 'in_progress' });
    return handBack(record, claim.retryAfterSeconds, () => again(wentBack + 1), deps, log);
  }
  // A kind whose follow-ups depend on what was decided meanwhile (a pager: nothing after Expected) reads it again.
  if (job.anomaly?.kind === 'follow_up' && kindOf(target.destination).followUpsReadTriage && deps.ledger) {
    job.anomaly = await deps.ledger.followUpNow(job.message, job.destination, job.anomaly, budget);
  }
  // Each receive is an attempt, but those that only sent it back to wait for its slot.
  const attempts = job.attempt + receivesOf(record) - wentBack;
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
  const updated = { ...job, attempt: attempts, lastReason: decision.failure };
  const settlement = { message: job.message, destination: job.destination, ...(job.anomaly ? { anomaly: job.anomaly } : {}) };
  if (decision.kind === 'park') {
    metrics(deps).add(deliveryMetric('parked', type));
    const parking = { firstAttemptAt: job.firstAttemptAt, parkToken: randomUUID() };
    const body = JSON.stringify({ ...updated, parkToken: parking.parkToken });
    const done = await delivery.park({ body, reason: decision.reason, destination: job.destination }, budget);
    // Parked as the body says: a stale copy of this job finds it so and posts nothing, while the
    // platform sending it again and a redrive of this body try this destination again. Not
    // parked, it waits on the queue again, and its claim is given back for its next receive.
    await deps.ledger?.settle(done ? { ...settlement, outcome: 'parked', parked: parking } : { ...settlement, outcome: 'queued' }, budget);
    return parked(done);
  }
  metrics(deps).add(deliveryMetric('queued', type));
  // It waits on the queue again: the claim is given back, for its next attempt or a copy of its job.
  await deps.ledger?.settle({ ...settlement, outcome: 'queued' }, budget);
  // A Retry-After holds the key already: the paced services told the pacer of the answer.
  const outcome = await handBack(
    record,
    decision.delaySeconds,
    () => ({ body: JSON.stringify(updated), attributes: { destination: job.destination } }),
    deps,
    log,
  );
  log.warn('delivery will be retried', { attempts, reason: decision.reason, delaySeconds: decision.delaySeconds });
  return outcome;
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
    const reason = 'destination_not_configured';
    return { outcome: parked(await deps.delivery.park({ body: record.body, reason, destination: name }, deps.budget)) };
  }
  return { target: targetOf(name, loaded.config.destinations[name]!, loaded.config.slack, quiet, loaded.config.platform) };
}

/**
 * A group's closing job, in its slot: post what the group holds, as one message or digests, like
 * any alert, and like one's, its attempts counted: the last one parks each alert not posted.
 */
async function closeRecord(
  record: QueueRecord,
  job: GroupCloseJob,
  wentBack: number,
  again: Again,
  target: Target,
  deps: RetryDependencies,
  store: GroupStore,
): Promise<RecordOutcome> {
  const { delivery, budget } = deps;
  const closeDeps = {
    store,
    delivery,
    logger: deps.logger,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    ...(deps.ledger ? { ledger: deps.ledger } : {}),
    ...(deps.escalations ? { held: deps.escalations.held } : {}),
    now: deps.now ?? Date.now,
    sleep: deps.sleep ?? sleep,
    reserveMs: AFTER_POST_MS,
    postTimeoutMs: deps.postTimeoutMs,
  };
  const attempt = (job.attempt ?? 0) + receivesOf(record) - wentBack;
  const outcome = await closeGroup(job, target, closeDeps, budget, { attempt, maxAttempts: deps.maxAttempts });
  if (outcome.kind === 'closed') return 'delivered';
  // Each alert is parked as its own delivery job; the closing job itself is done.
  if (outcome.kind === 'parked') return 'parked';
  deps.logger.warn('group closing will be retried', {
    destination: job.destination,
    reason: outcome.reason,
    delaySeconds: outcome.delaySeconds,
    ...(outcome.attempted ? { attempt } : {}),
  });
  // A closing that only waited (for another closer's lease, an invocation with time left) made no attempt.
  return handBack(record, outcome.delaySeconds, () => again(wentBack + (outcome.attempted ? 0 : 1)), deps);
}

/**
 * An anomaly's escalation: sent again with the time left while it is not due; when due, posted to
 * the destination it goes to, in that destination's slot. Done either way, unless the
 * configuration cannot be read.
 */
async function escalationRecord(
  record: QueueRecord,
  job: EscalationJob,
  deps: RetryDependencies,
  ports: NonNullable<RetryDependencies['escalations']>,
  holdUntil: number,
): Promise<RecordOutcome> {
  // Left to a later invocation rather than cut off between its lease and its post.
  if (!deps.budget.fits(deps.postTimeoutMs + AFTER_POST_MS + QUEUE_CALL_BUDGET_MS)) {
    await settleVisibility(deps, record, 1);
    return 'not_attempted';
  }
  const outcome = await processEscalation(
    job,
    {
      ...ports,
      first: pacedFirst(ports.first, deps, holdUntil),
      config: deps.config,
      logger: deps.logger,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      now: deps.now ?? Date.now,
    },
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

/**
 * An escalation's first attempt at the destination it goes to, in that destination's next slot
 * like any post there. A slot too far off for this invocation sends the escalation back to wait
 * for it (its lease ends; lib/escalation's `unheld`).
 */
function pacedFirst(first: FirstAttempt, deps: RetryDependencies, holdUntil: number): FirstAttempt {
  const now = deps.now ?? Date.now;
  return async (alert, budget) => {
    const { destination } = alert.target;
    const service = deps.delivery.serviceFor(destination);
    const key = service.paceKey(addressOf(destination));
    const wait = deps.pacer.delayFor(key);
    if (now() + wait > holdUntil || !budget.fits(wait + deps.postTimeoutMs + AFTER_POST_MS)) {
      return { kind: 'unheld', reason: 'paced', retryAfterMs: Math.max(1_000, wait) };
    }
    await deps.pacer.wait(key, service.minIntervalMs);
    return first(alert, budget);
  };
}

/** A late visibility change only means SQS's own visibility timeout applies. */
async function settleVisibility(deps: RetryDependencies, record: QueueRecord, seconds: number): Promise<void> {
  try {
    await changeVisibility(deps, record, seconds);
  } catch {
    // The queue's visibility timeout brings the record back instead.
  }
}
