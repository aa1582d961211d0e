import { randomUUID } from 'node:crypto';
import { type MessageRef, OPENING } from '../chat/service.js';
import { addressOf, destinationType, isSlackApp } from '../config/destination-type.js';
import { claimHoldSeconds } from '../dedup/ledger.js';
import type { RetryLedger } from '../dedup/once.js';
import { clampSeconds, retryDelaySeconds } from '../delivery/decide.js';
import type { Delivery, Target } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import { digestPostedMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import type { Sleep } from '../shared/sleep.js';
import { digestParts } from './digest.js';
import type { GroupCloseJob } from './job.js';
import { GROUP_CALL_BUDGET_MS } from './join.js';
import { slackDigest } from './slack-digest.js';
import type { GroupStore } from './store.js';

export interface CloseDependencies {
  store: GroupStore;
  delivery: Delivery;
  logger: Logger;
  metrics?: Metrics;
  /** Told that each grouped alert is delivered, and where an anomaly's opening message now is. */
  ledger?: RetryLedger;
  now: () => number;
  sleep: Sleep;
  /** Kept free after each post for the calls that record it. */
  reserveMs: number;
  postTimeoutMs: number;
}

export type CloseOutcome =
  /** Every message of the group is posted (or it had been, by an earlier closing). */
  | { kind: 'closed'; posts: number }
  /** Not finished: the closing job waits on the retry queue, and resumes after what is posted. */
  | { kind: 'retry'; reason: string; delaySeconds: number; retryAfterMs?: number }
  /** The chat service refused for good: the closing job is parked for a human. */
  | { kind: 'park'; reason: string };

const LEASE_LOST: CloseOutcome = { kind: 'retry', reason: 'lease_lost', delaySeconds: 1 };

/** How many grouped alerts' records are written side by side once the group is posted. */
const SETTLE_CONCURRENCY = 10;

/**
 * Closes a group: no alert can join it any more, its messages are posted in order (each
 * recorded, so a closing that is tried again posts nothing twice), and the alerts' text is
 * forgotten. The closer leases the group for as long as its invocation may run: a closing job
 * delivered twice at once finds the lease and tries again after it, and one whose closer died
 * takes over once the lease has ended. A retryable failure leaves the rest to the retry queue.
 */
export async function closeGroup(
  job: GroupCloseJob,
  target: Target,
  deps: CloseDependencies,
  budget: InvocationBudget,
): Promise<CloseOutcome> {
  const lease = { token: randomUUID(), holdSeconds: claimHoldSeconds(budget.remainingMs()) };
  const step = <T>(work: (signal: AbortSignal) => Promise<T>) => budget.step('dedup_table', GROUP_CALL_BUDGET_MS, work);
  const { token } = lease;
  const group = await step((signal) => deps.store.take(job.destination, job.groupId, lease, signal));
  if (group.kind === 'gone') return { kind: 'closed', posts: 0 };
  if (group.kind === 'leased') return { kind: 'retry', reason: 'closing_elsewhere', delaySeconds: clampSeconds(group.retryAfterSeconds) };
  // Stopping before the end: the closing job's next try takes the group at once. A release
  // that fails only makes that try wait for the lease to end.
  const later = async (outcome: CloseOutcome): Promise<CloseOutcome> => {
    await step((signal) => deps.store.release(job.destination, job.groupId, token, signal)).catch((error: unknown) =>
      deps.logger.warn('could not release a group; its next closing waits for the lease', {
        destination: job.destination,
        error: errorReason(error),
      }),
    );
    return outcome;
  };
  const service = isSlackApp(target.destination) ? 'slackApp' : destinationType(target.destination);
  const parts = digestParts(group.entries, service, deps.now(), (message) =>
    deps.delivery.serviceFor(target.destination).format(message, target.destination, OPENING),
  );
  const interval = deps.delivery.serviceFor(target.destination).minIntervalMs;
  let opened: MessageRef | undefined;
  for (let i = group.postedParts; i < parts.length; i++) {
    const part = parts[i]!;
    if (i > group.postedParts) {
      if (!budget.fits(interval + deps.postTimeoutMs + deps.reserveMs))
        return later({ kind: 'retry', reason: 'invocation_ending', delaySeconds: 1 });
      await deps.sleep(interval);
    }
    const outcome =
      service === 'slack' && part.digest
        ? await deps.delivery
            .serviceFor(target.destination)
            .post(
              addressOf(target.destination),
              slackDigest(
                part.digest.title,
                part.digest.lines,
                typeof target.destination.mention === 'string' ? target.destination.mention : undefined,
              ),
              { timeoutMs: Math.max(1, budget.ms(deps.postTimeoutMs, deps.reserveMs)) },
            )
        : await deps.delivery.attempt(target, part.message, budget, part.anomaly, part.digest ? undefined : { origin: part.origin });
    if (outcome.kind === 'refused') return { kind: 'park', reason: outcome.reason };
    if (outcome.kind === 'retryable') {
      return later({
        kind: 'retry',
        reason: outcome.reason,
        delaySeconds: retryDelaySeconds(outcome, 1),
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
      });
    }
    if (i === 0 && outcome.opened) opened = outcome.opened;
    // A closer that lost its lease stops: the one holding it now resumes after what is recorded.
    if (!(await step((signal) => deps.store.posted(job.destination, job.groupId, token, i + 1, signal)))) return LEASE_LOST;
    if (group.entries.length > 1) (deps.metrics ?? noMetrics).add(digestPostedMetric(destinationType(target.destination)));
  }
  const { ledger } = deps;
  if (ledger) {
    for (let i = 0; i < group.entries.length; i += SETTLE_CONCURRENCY) {
      await Promise.all(
        group.entries.slice(i, i + SETTLE_CONCURRENCY).map(({ message, anomaly }) =>
          ledger.settle(
            {
              message,
              destination: job.destination,
              outcome: 'delivered',
              ...(anomaly ? { anomaly } : {}),
              // An anomaly first seen in a digest threads its follow-ups under the digest's message.
              ...(opened && anomaly?.kind !== 'follow_up' ? { opened } : {}),
            },
            budget,
          ),
        ),
      );
    }
  }
  if (!(await step((signal) => deps.store.flushed(job.destination, job.groupId, token, signal)))) return LEASE_LOST;
  deps.logger.info('group closed', { destination: job.destination, alerts: group.entries.length, posts: parts.length - group.postedParts });
  return { kind: 'closed', posts: parts.length - group.postedParts };
}
