// An anomaly's escalation (lib/escalation): sent again while it is not due, and when due posted
// to the destination it goes to, in that destination's slot.
import type { FirstAttempt } from '../../delivery/deliver.js';
import { QUEUE_CALL_BUDGET_MS } from '../../delivery/deliver.js';
import { type EscalationJob, parseEscalationJob } from '../../escalation/job-schema.js';
import { processEscalation } from '../../escalation/process.js';
import { anomalyRecordId } from '../../message/anomaly.js';
import { addressOf } from '../../notify/kinds.js';
import { type QueueRecord, type RecordOutcome, type RetryDependencies, retryJobKind } from '../job-kind.js';
import { AFTER_POST_MS, settleVisibility } from '../record.js';

type EscalationWork = NonNullable<RetryDependencies['escalations']>;

export const escalations = retryJobKind({
  name: 'escalation',
  parse: parseEscalationJob,
  // An escalation reads and leases its anomaly in the dedup table: without it none can be done.
  ports: (deps) => deps.escalations,
  // Copies of one escalation go in order, so that a later one finds it escalated rather than leased.
  plan: async (escalation, ports, record, deps, { holdUntil }) => ({
    lane: anomalyRecordId(escalation.message, escalation.from),
    run: () => escalationRecord(record, escalation, deps, ports, holdUntil),
  }),
});

/**
 * An anomaly's escalation: sent again with the time left while it is not due; when due, posted to
 * the destination it goes to, in that destination's slot. Done either way, unless the
 * configuration cannot be read.
 */
async function escalationRecord(
  record: QueueRecord,
  job: EscalationJob,
  deps: RetryDependencies,
  ports: EscalationWork,
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
