import { randomUUID } from 'node:crypto';
import type { LoadedConfig } from '../config/load.js';
import { CONFIG_READ_BUDGET_MS, type RelayConfigStore } from '../config/store.js';
import { claimHoldSeconds, type DeliveryLedger, LEDGER_CALL_BUDGET_MS } from '../dedup/ledger.js';
import { type FirstAttempt, QUEUE_CALL_BUDGET_MS, targetOf } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import { anomalyRecordId } from '../message/anomaly.js';
import { configurationUnavailableMetric, type EscalationOutcome, escalationMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { destinationType } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import type { EscalationJob } from './job.js';
import { afterClaim, afterDelivery, dueAt, hopSeconds, KEEP_AFTER_DUE_SECONDS, MARK_AGAIN_SECONDS, secondsLeft } from './plan.js';
import type { EscalationQueue } from './queue.js';

export interface EscalationPorts {
  config: RelayConfigStore;
  /** The table the anomaly's state is in: the escalation's lease and its end are written there. */
  ledger: DeliveryLedger;
  /**
   * The first attempt at the destination it goes to, as the relay makes one (lib/dedup's
   * deliverOnce): the dedup claim, the anomaly's opening there and a snooze there, the retry queue
   * when it cannot take it yet, the dead-letter queue when it refuses it, and that destination's
   * own escalation.
   */
  first: FirstAttempt;
  /** Where a job that is not due yet, or must try again, goes back to. */
  queue: EscalationQueue;
  logger: Logger;
  metrics?: Metrics;
  now: () => number;
}

/** `retry_later`: the configuration cannot be read; the job stays where it is and comes back. */
export type EscalationRecordOutcome = 'done' | 'retry_later';

/**
 * One escalation job: back on the queue with the time left while it is not due; when it is, a
 * lease on the anomaly's item at the destination where it waited, then its first attempt at the
 * destination it goes to, marked as an escalation, and the anomaly marked escalated. Due time and
 * destination are read from the configuration as it is now. A job that fails (the table or the
 * queue cannot be used) is counted failed and thrown, so that the queue hands it out again.
 */
export async function processEscalation(
  job: EscalationJob,
  ports: EscalationPorts,
  budget: InvocationBudget,
  deliveryId: string,
): Promise<EscalationRecordOutcome> {
  const metrics = ports.metrics ?? noMetrics;
  const where = { type: 'unknown' };
  try {
    return await escalationStep(job, ports, budget, deliveryId, where);
  } catch (error) {
    metrics.add(escalationMetric('failed', where.type));
    throw error;
  }
}

async function escalationStep(
  job: EscalationJob,
  ports: EscalationPorts,
  budget: InvocationBudget,
  deliveryId: string,
  where: { type: string },
): Promise<EscalationRecordOutcome> {
  const metrics = ports.metrics ?? noMetrics;
  const log = ports.logger.child({ deliveryId, destination: job.from });
  const id = anomalyRecordId(job.message, job.from);
  const again = async (next: EscalationJob, delaySeconds: number) =>
    budget.step('retry_queue', QUEUE_CALL_BUDGET_MS, (signal) => ports.queue.schedule(next, delaySeconds, signal));
  if (job.settled) {
    // Settled where it goes and counted already: only the mark is left, whatever the configuration says now.
    try {
      await budget.step('dedup_table', LEDGER_CALL_BUDGET_MS, async (signal) =>
        (await ports.ledger.escalations()).escalated(id, job.firstSeen, signal),
      );
      log.info('anomaly marked escalated');
    } catch (error) {
      log.warn('could not mark the anomaly escalated; the job comes back to mark it', { error: errorReason(error) });
      await again(job, MARK_AGAIN_SECONDS);
    }
    return 'done';
  }
  let loaded: LoadedConfig;
  try {
    loaded = await budget.stepIfPending('configuration', CONFIG_READ_BUDGET_MS, ports.config.current());
  } catch {
    metrics.add(configurationUnavailableMetric());
    return 'retry_later';
  }
  const { config } = loaded;
  const from = Object.hasOwn(config.destinations, job.from) ? config.destinations[job.from] : undefined;
  const type = from ? destinationType(from) : 'none';
  where.type = type;
  const count = (outcome: EscalationOutcome) => metrics.add(escalationMetric(outcome, type));
  const escalate = from?.escalate;
  if (!escalate) {
    log.info('escalation dropped: the destination no longer escalates', { outcome: 'dropped', reason: 'not_configured' });
    count('dropped');
    return 'done';
  }

  const due = dueAt(job.firstSeen, escalate.afterMinutes);
  const left = secondsLeft(due, ports.now());
  if (left > 0) {
    // Each follow-up sends a job with its content: one that a job with later content has
    // replaced ends here, rather than hop until it is due only to be dropped then. A table that
    // cannot say leaves the job hopping, as it did before anyone asked.
    const waiting = <T>(work: (signal: AbortSignal) => Promise<T>, consequence: string) =>
      budget.step('dedup_table', LEDGER_CALL_BUDGET_MS, work).catch((error: unknown) => {
        log.warn(consequence, { error: errorReason(error) });
        return undefined;
      });
    const found = await waiting(
      async (signal) => (await ports.ledger.escalations()).waitingEscalation(id, job.firstSeen, signal),
      'could not tell whether a later escalation job waits; this one waits on',
    );
    const latest = found?.updates;
    if (typeof latest === 'number' && latest > job.updates) {
      log.info('escalation not posted', { to: escalate.to, outcome: 'dropped', reason: 'replaced' });
      count('dropped');
      return 'done';
    }
    // The item must outlive the due time as the configuration says it now: a wait made longer
    // since it was set (or a keep that failed then) would otherwise find the opening gone.
    const keepUntil = due + KEEP_AFTER_DUE_SECONDS;
    if (found?.expiresAt !== undefined && found.expiresAt < keepUntil) {
      await waiting(
        async (signal) => (await ports.ledger.escalations()).keepAnomaly(id, job.firstSeen, keepUntil, signal),
        'the anomaly may expire before its escalation is due',
      );
    }
    await again(job, hopSeconds(left));
    // Recorded once it is on the queue again, so that only a job that waits replaces the others.
    if (typeof latest === 'number' && job.updates > latest) {
      await waiting(
        async (signal) => (await ports.ledger.escalations()).escalationWaiting(id, job.firstSeen, job.updates, signal),
        'could not record that an escalation job with later content waits; older ones wait on',
      );
    }
    log.debug('escalation not due yet', { secondsLeft: left });
    return 'done';
  }

  const escalations = await budget.step('dedup_table', LEDGER_CALL_BUDGET_MS, () => ports.ledger.escalations());
  const token = randomUUID();
  const claim = await budget.step('dedup_table', LEDGER_CALL_BUDGET_MS, (signal) =>
    escalations.claimEscalation(
      id,
      {
        token,
        holdSeconds: claimHoldSeconds(budget.remainingMs()),
        firstSeen: job.firstSeen,
        ...(job.deferred ? {} : { updates: job.updates }),
        ...(job.unposted ? { unposted: job.unposted } : {}),
      },
      signal,
    ),
  );
  const step = afterClaim(claim, -secondsLeft(due, ports.now()));
  if (step.kind === 'drop') {
    log.info('escalation not posted', { to: escalate.to, outcome: step.outcome, reason: step.reason });
    count(step.outcome);
    return 'done';
  }
  if (step.kind === 'again') {
    await again(step.deferred ? { ...job, deferred: true } : job, step.delaySeconds);
    log.info('escalation waits its turn', { to: escalate.to, reason: claim.kind, delaySeconds: step.delaySeconds });
    return 'done';
  }

  const { to } = escalate;
  const target = targetOf(to, config.destinations[to]!, config.slack, false, config.platform);
  const result = await ports.first(
    {
      deliveryId,
      target,
      message: job.message,
      origin: job.origin,
      costCenters: job.costCenters,
      escalation: { from: job.from, afterMinutes: escalate.afterMinutes },
    },
    budget,
  );
  const next = afterDelivery(result);
  if (next.kind === 'again') {
    // The lease ends; one that cannot be released ends by itself (claimHoldSeconds).
    await budget
      .step('dedup_table', LEDGER_CALL_BUDGET_MS, (signal) => escalations.releaseEscalation(id, token, signal))
      .catch((error: unknown) => log.warn('could not end the lease; it ends by itself', { to, error: errorReason(error) }));
    if (next.posted) {
      log.info('anomaly escalated', { to, outcome: 'posted', waitedMinutes: escalate.afterMinutes });
      count('posted');
    }
    await again(job, next.delaySeconds);
    log.warn('escalation will be tried again', { to, reason: next.reason, delaySeconds: next.delaySeconds });
    return 'done';
  }
  // Without the mark, another job of this opening would post once the lease ends: one that cannot
  // be written keeps the lease and comes back at once to write it.
  const marked = await budget
    .step('dedup_table', LEDGER_CALL_BUDGET_MS, (signal) => escalations.escalated(id, job.firstSeen, signal))
    .then(
      () => true,
      (error: unknown) => {
        log.warn('could not mark the anomaly escalated; the job comes back to mark it', { to, error: errorReason(error) });
        return false;
      },
    );
  const level = next.outcome === 'failed' ? 'error' : 'info';
  log[level](next.outcome === 'posted' ? 'anomaly escalated' : 'escalation not posted', {
    to,
    outcome: next.outcome,
    ...(next.reason ? { reason: next.reason } : {}),
    waitedMinutes: escalate.afterMinutes,
  });
  count(next.outcome);
  if (!marked) await again({ ...job, settled: true }, MARK_AGAIN_SECONDS);
  return 'done';
}
