import { randomUUID } from 'node:crypto';
// A delivery that a destination could not take yet (lib/delivery/job.ts): posted again in its
// destination's slot, once it holds the alert's claim.
import { followUpDelivered } from '../../dedup/once.js';
import type { Target } from '../../delivery/deliver.js';
import type { DeliveryJob } from '../../delivery/job.js';
import { parseDeliveryJob } from '../../delivery/job-schema.js';
import { deliveryMetric, retryAttemptMetric } from '../../metrics/metrics.js';
import { destinationType, kindOf } from '../../notify/kinds.js';
import { type Again, type QueueRecord, type RecordOutcome, type RetryDependencies, retryJobKind } from '../job-kind.js';
import { handBack, metrics, parked, posting, receivesOf, resend } from '../record.js';

export const deliveries = retryJobKind({
  name: 'delivery',
  parse: parseDeliveryJob,
  // Every container that reads the queue delivers.
  ports: () => ({}),
  plan(job, _ports, record, deps) {
    const again: Again = (waits) => resend({ ...job, attempt: job.attempt + receivesOf(record) - waits }, { destination: job.destination });
    return posting(record, job.destination, again, deps, job.quiet, (target, wentBack) =>
      deliverRecord(record, job, target, wentBack, again, deps),
    );
  },
});

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
  const settlement = { message: job.message, destination: job.destination, ...(job.anomaly ? { anomaly: job.anomaly } : {}) };
  // An anomaly's opening (a queued job keeps only a follow-up's place) where its escalation waits for it to be shown.
  const opening = job.anomaly === undefined && target.destination.escalate !== undefined;

  if (decision.kind === 'delivered') {
    log.info('delivered from the retry queue', { attempts });
    metrics(deps).add(deliveryMetric(job.anomaly?.kind === 'follow_up' ? 'follow_up' : 'delivered', type));
    await deps.ledger?.settle({ ...settlement, outcome: 'delivered', ...(decision.opened ? { opened: decision.opened } : {}) }, budget);
    // An opening posted at last: its escalation, which waited for it, may go (lib/escalation/plan.ts, `unposted`).
    if (opening) await deps.ledger?.shown(settlement, budget);
    await followUpDelivered(
      deps.escalations?.held,
      { deliveryId: job.deliveryId, target, message: job.message, anomaly: job.anomaly, origin: job.origin, costCenters: job.costCenters },
      budget,
    );
    return 'delivered';
  }
  const updated = { ...job, attempt: attempts, lastReason: decision.failure };
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
