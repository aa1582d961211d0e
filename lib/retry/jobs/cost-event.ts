// A cost event the triage function could not write in time (lib/cost-events): written, or
// deleted, on the platform now.
import { COST_EVENT_CALL_MS, type CostEventJob, type CostEventWriter, parseCostEventJob } from '../../cost-events/events.js';
import { costEventMetric } from '../../metrics/metrics.js';
import { errorReason } from '../../shared/errors.js';
import { type QueueRecord, type RecordOutcome, type RetryDependencies, retryJobKind } from '../job-kind.js';
import { AFTER_POST_MS, metrics, parked, settleVisibility } from '../record.js';

export const costEvents = retryJobKind({
  name: 'cost_event',
  parse: parseCostEventJob,
  // Configured only where the stack names the platform's login (lib/retry/from-environment.ts).
  ports: (deps) => deps.costEvents,
  // One after another: the platform's rate limit counts them all, whatever account they are for.
  plan: async (job, writer, record, deps) => ({ lane: 'all', run: () => costEventRecord(record, job, deps, writer) }),
});

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
