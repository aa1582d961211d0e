// A group's closing (lib/group): what the group holds, posted in its destination's slot as one
// message or digests, its attempts counted like an alert's.
import type { Target } from '../../delivery/deliver.js';
import { closeGroup } from '../../group/close.js';
import { type GroupCloseJob, parseGroupCloseJob } from '../../group/job.js';
import type { GroupStore } from '../../group/store.js';
import { sleep } from '../../shared/sleep.js';
import { type Again, type QueueRecord, type RecordOutcome, type RetryDependencies, retryJobKind } from '../job-kind.js';
import { AFTER_POST_MS, handBack, posting, receivesOf, resend } from '../record.js';

export const groupClosings = retryJobKind({
  name: 'group_close',
  parse: parseGroupCloseJob,
  // The group's alerts wait in the dedup table: without it there is nothing to close.
  ports: (deps) => deps.groups,
  plan(closing, store, record, deps) {
    const again: Again = (waits) =>
      resend({ ...closing, attempt: (closing.attempt ?? 0) + receivesOf(record) - waits }, { destination: closing.destination });
    return posting(record, closing.destination, again, deps, false, (target, wentBack) =>
      closeRecord(record, closing, wentBack, again, target, deps, store),
    );
  },
});

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
