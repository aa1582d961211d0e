import { type DeliveryLedger, LEDGER_CALL_BUDGET_MS } from '../dedup/ledger.js';
import type { AnomalyHeld } from '../dedup/once.js';
import type { Logger } from '../log/logger.js';
import { anomalyRecordId } from '../message/anomaly.js';
import { escalationMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { errorReason } from '../shared/errors.js';
import { escalationJob } from './job.js';
import { planEscalation } from './plan.js';
import type { EscalationQueue } from './queue.js';

export interface WatchPorts {
  ledger: DeliveryLedger;
  /** Where the wait goes; none where there is neither a retry queue nor `npm start`'s timer. */
  queue: EscalationQueue | undefined;
  logger: Logger;
  metrics?: Metrics;
  now: () => number;
  /** How long the table keeps an anomaly's record after a post (DEDUP_WINDOW_SECONDS); undefined where nothing expires. */
  windowSeconds?: number | undefined;
  /** The destination's type for the metric: the cold path's own, handed over so that a lazy bundle carries no second copy of the kinds. */
  typeOf: (destination: object) => string;
}

/** The most a queue call of the wait may take, as the delivery core gives its own. */
const SCHEDULE_CALL_BUDGET_MS = 2_000;

/**
 * Sets an escalation waiting when a destination with `escalate` holds an anomaly's opening, and
 * replaces it when a follow-up with later content is delivered there before the job escalates.
 * The post is done by then: a wait that cannot be set is logged, never the alert's failure; false
 * for an opening's, which the caller marks and counts so that a re-send sets it. One that cannot
 * wait here at all (no queue) is counted failed: no re-send would help.
 */
export function escalationWatcher(ports: WatchPorts): AnomalyHeld {
  const metrics = ports.metrics ?? noMetrics;
  return async (alert, start, held, budget) => {
    const { target } = alert;
    const escalate = target.destination.escalate;
    if (!escalate) return true;
    const plan = planEscalation(escalate, start, held, ports.now(), ports.windowSeconds);
    if (!plan) return true;
    const type = ports.typeOf(target.destination);
    const where = { destination: target.name, to: escalate.to };
    const { queue } = ports;
    if (!queue) {
      ports.logger.warn('escalation cannot wait here: it needs the retry queue and the dedup table', where);
      if (plan.opening) metrics.add(escalationMetric('failed', type));
      return true;
    }
    const job = escalationJob(alert, plan.firstSeen, plan.updates, plan.unposted);
    const id = anomalyRecordId(alert.message, target.name);
    const { keepUntil } = plan;
    const [scheduled, kept] = await Promise.allSettled([
      budget.step('retry_queue', SCHEDULE_CALL_BUDGET_MS, (signal) => queue.schedule(job, plan.delaySeconds, signal)),
      keepUntil === undefined
        ? undefined
        : budget.step('dedup_table', LEDGER_CALL_BUDGET_MS, async (signal) =>
            (await ports.ledger.escalations()).keepAnomaly(id, plan.firstSeen, keepUntil, signal),
          ),
    ]);
    if (kept.status === 'rejected') {
      ports.logger.warn('the anomaly may expire before its escalation is due', { ...where, error: errorReason(kept.reason) });
    }
    if (scheduled.status === 'rejected') {
      ports.logger.error('escalation could not be scheduled', { ...where, error: errorReason(scheduled.reason) });
      return !plan.opening;
    }
    ports.logger.info(plan.opening ? 'escalation scheduled' : 'escalation rescheduled with the latest content', {
      ...where,
      updates: plan.updates,
      dueInSeconds: escalate.afterMinutes * 60 - (Math.floor(ports.now() / 1000) - plan.firstSeen),
    });
    if (plan.opening) metrics.add(escalationMetric('scheduled', type));
    return true;
  };
}
