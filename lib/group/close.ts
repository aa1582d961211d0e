import { randomUUID } from 'node:crypto';
import { type MessageRef, OPENING } from '../chat/service.js';
import { claimHoldSeconds } from '../dedup/ledger.js';
import { type AnomalyHeld, followUpDelivered, type RetryLedger } from '../dedup/once.js';
import { clampSeconds, retryDelaySeconds } from '../delivery/decide.js';
import type { Delivery, Target } from '../delivery/deliver.js';
import { newJob } from '../delivery/job.js';
import type { Logger } from '../log/logger.js';
import { deliveryMetric, digestPostedMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { addressOf, destinationType, kindOf } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import type { Sleep } from '../shared/sleep.js';
import { type DigestPage, digestParts } from './digest.js';
import type { GroupCloseJob } from './job.js';
import { GROUP_CALL_BUDGET_MS } from './join.js';
import type { GroupEntry, GroupStore } from './store.js';

export interface CloseDependencies {
  store: GroupStore;
  delivery: Delivery;
  logger: Logger;
  metrics?: Metrics;
  /** Told what became of each grouped alert (delivered, or parked), and where an anomaly's opening message now is. */
  ledger?: RetryLedger;
  /** The relay's escalation watcher, told of each follow-up the group delivered, as the relay tells it of one it delivers. */
  held?: AnomalyHeld;
  /** Where a refused closing parks each alert; the delivery's dead-letter queue unless given. */
  park?: Delivery['park'];
  now: () => number;
  sleep: Sleep;
  /** Kept free after each post for the calls that record it. */
  reserveMs: number;
  postTimeoutMs: number;
}

export type CloseOutcome =
  /** Every message of the group is posted (or it had been, by an earlier closing). */
  | { kind: 'closed'; posts: number }
  /**
   * Not finished: the closing job waits on the retry queue, and resumes after what is posted.
   * `attempted`: a post failed, and this was an attempt; otherwise it only waits (for another
   * closer's lease, or an invocation with time left).
   */
  | { kind: 'retry'; reason: string; delaySeconds: number; retryAfterMs?: number; attempted?: true }
  /** The chat service refused for good: each alert not yet posted is parked as its own delivery, and the group is flushed. */
  | { kind: 'parked'; reason: string; alerts: number };

const LEASE_LOST: CloseOutcome = { kind: 'retry', reason: 'lease_lost', delaySeconds: 1 };

/** How many grouped alerts' records (or dead letters) are written side by side. */
const SIDE_BY_SIDE = 10;

async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += SIDE_BY_SIDE) results.push(...(await Promise.all(items.slice(i, i + SIDE_BY_SIDE).map(work))));
  return results;
}

/** Which attempt at a closing this is, counted as a queued alert's are (the first is 1), and the most it gets. */
export interface CloseAttempt {
  attempt: number;
  maxAttempts: number;
}

/**
 * Closes a group: no alert can join it any more, its messages are posted in order (each
 * recorded, so a closing that is tried again posts nothing twice), and the alerts' text is
 * forgotten. The closer leases the group for as long as its invocation may run: a closing job
 * delivered twice at once finds the lease and tries again after it, and one whose closer died
 * takes over once the lease has ended. A retryable failure leaves the rest to the retry queue,
 * backing off as a queued alert does; a refusal, or a failure on the last attempt, parks every
 * alert not yet posted as its own delivery, which a redrive posts.
 */
export async function closeGroup(
  job: GroupCloseJob,
  target: Target,
  deps: CloseDependencies,
  budget: InvocationBudget,
  tries: CloseAttempt = { attempt: 1, maxAttempts: Number.POSITIVE_INFINITY },
): Promise<CloseOutcome> {
  const { destination } = job;
  const metrics = deps.metrics ?? noMetrics;
  const type = destinationType(target.destination);
  const lease = { token: randomUUID(), holdSeconds: claimHoldSeconds(budget.remainingMs()) };
  const step = <T>(work: (signal: AbortSignal) => Promise<T>) => budget.step('dedup_table', GROUP_CALL_BUDGET_MS, work);
  const { token } = lease;
  const group = await step((signal) => deps.store.take(destination, job.groupId, lease, signal));
  if (group.kind === 'gone') return { kind: 'closed', posts: 0 };
  if (group.kind === 'leased') return { kind: 'retry', reason: 'closing_elsewhere', delaySeconds: clampSeconds(group.retryAfterSeconds) };
  // Stopping before the end: the closing job's next try takes the group at once. A release
  // that fails only makes that try wait for the lease to end.
  const later = async (outcome: CloseOutcome): Promise<CloseOutcome> => {
    await step((signal) => deps.store.release(destination, job.groupId, token, signal)).catch((error: unknown) =>
      deps.logger.warn('could not release a group; its next closing waits for the lease', { destination, error: errorReason(error) }),
    );
    return outcome;
  };
  const flush = () => step((signal) => deps.store.flushed(destination, job.groupId, token, signal));

  const delivered = async (entries: readonly GroupEntry[], openedAt: (key: string) => MessageRef | undefined) => {
    const { ledger } = deps;
    if (!ledger) return;
    await inBatches(entries, async ({ key, message, anomaly, origin, costCenters }) => {
      const opened = openedAt(key);
      await ledger.settle(
        {
          message,
          destination,
          outcome: 'delivered',
          ...(anomaly ? { anomaly } : {}),
          // An anomaly first seen in a digest threads its follow-ups under the digest's message.
          ...(opened && anomaly?.kind !== 'follow_up' ? { opened } : {}),
        },
        budget,
      );
      await followUpDelivered(deps.held, { deliveryId: key, target, message, anomaly, origin, costCenters }, budget);
    });
  };

  // As delivery-retry parks a single alert: its own delivery job in the dead-letter queue, and
  // parked as that body says in the ledger, so that the platform sending it again is posted, and
  // so is a redrive of the body. Not parked, it stays in the group, its record as it was.
  const parkOne = async ({ key, message, anomaly, origin, costCenters }: GroupEntry, reason: string): Promise<boolean> => {
    metrics.add(deliveryMetric('parked', type));
    const job = { ...newJob(key, destination, message, reason, deps.now(), anomaly, origin, false, costCenters), parkToken: randomUUID() };
    const done = await (deps.park ?? deps.delivery.park)({ body: JSON.stringify(job), reason, destination }, budget);
    if (done) {
      const parked = { firstAttemptAt: job.firstAttemptAt, parkToken: job.parkToken };
      await deps.ledger?.settle({ message, destination, outcome: 'parked', parked, ...(anomaly ? { anomaly } : {}) }, budget);
    }
    return done;
  };

  const kind = kindOf(target.destination);
  // Only chats take a group (the configuration refuses it elsewhere), and every chat plans its digests.
  if (!kind.chat) throw new Error(`a ${kind.type} destination takes no group`);
  const plan = (await kind.extras()).digest(target.destination);
  // A digest has a thread of its own where the kind threads (Google Chat): the group's, so that its
  // parts and its page's notes read together, and no earlier digest's thread takes it in.
  const thread = kind.threadOf && group.entries.length > 1 ? `cost-alert-digest-${job.groupId}` : undefined;
  // A digest links to the page of its anomalies on the origin the latest of its alerts arrived on.
  const origin = group.entries.findLast((entry) => entry.origin !== undefined)?.origin;
  const sign = group.entries.length > 1 && origin !== undefined ? deps.delivery.digestLinks?.(target, origin, thread) : undefined;
  const page: DigestPage | undefined = sign && origin !== undefined ? { origin, destination, thread } : undefined;
  const parts = digestParts(
    group.entries,
    plan,
    deps.now(),
    (message, link) => {
      const payload = deps.delivery
        .serviceFor(target.destination)
        .format(message, target.destination, OPENING, link ? { link } : undefined, { anomalyId: '', destination, thread });
      return plan.sent ? plan.sent(payload) : payload;
    },
    page,
  );

  // An anomaly escalates only from where someone could have triaged it, and a grouped opening's
  // escalation waits for the closing (lib/escalation/plan.ts, `unposted`): the openings of a part
  // posted with a way to triage may escalate now; those of a digest posted without its link (none
  // could be signed, or the destination offers none) never do. A parked opening is forgotten
  // (settle), so that its escalation finds it gone.
  /** `withdrawn`: why nobody could triage them, which the log says; absent when they were shown with a way. */
  const escalations = async (keys: Iterable<string>, withdrawn?: string) => {
    const { ledger } = deps;
    if (!ledger || !target.destination.escalate) return;
    const of = new Set(keys);
    const openings = group.entries.filter(
      (entry) => of.has(entry.key) && entry.anomaly?.kind !== 'follow_up' && entry.firstSeen !== undefined,
    );
    if (openings.length === 0) return;
    await inBatches(openings, ({ message, firstSeen }) =>
      (withdrawn ? ledger.untriageable : ledger.shown)({ message, destination, firstSeen: firstSeen! }, budget),
    );
    if (withdrawn) deps.logger.info(withdrawn, { destination, anomalies: openings.length });
  };

  /** Part `from` was refused: the alerts of the parts before it are delivered, every other one is parked. */
  const refused = async (from: number, reason: string, opened: (key: string) => MessageRef | undefined): Promise<CloseOutcome> => {
    const unposted = new Set(parts.slice(from).flatMap((part) => part.keys));
    const rest = group.entries.filter((entry) => unposted.has(entry.key));
    const parked = await inBatches(rest, (entry) => parkOne(entry, reason));
    // What could not be parked stays in the group, and the closing is tried again.
    if (!parked.every(Boolean)) {
      return later({ kind: 'retry', reason: 'dead_letter_unavailable', delaySeconds: retryDelaySeconds({}, 1), attempted: true });
    }
    await delivered(
      group.entries.filter((entry) => !unposted.has(entry.key)),
      opened,
    );
    if (!(await flush())) return LEASE_LOST;
    deps.logger.warn('group refused; its alerts are parked', { destination, reason, alerts: rest.length });
    return { kind: 'parked', reason, alerts: rest.length };
  };

  const interval = deps.delivery.serviceFor(target.destination).minIntervalMs;
  // Where each anomaly first seen in a digest now is: the message of the part that named it.
  const openings = new Map<string, MessageRef>();
  const opened = (key: string) => openings.get(key);
  for (let i = group.postedParts; i < parts.length; i++) {
    const part = parts[i]!;
    if (i > group.postedParts) {
      if (!budget.fits(interval + deps.postTimeoutMs + deps.reserveMs))
        return later({ kind: 'retry', reason: 'invocation_ending', delaySeconds: 1 });
      await deps.sleep(interval);
    }
    const link = sign && part.anomalies ? await sign(part.anomalies, budget) : undefined;
    const outcome =
      plan.build && part.digest
        ? await deps.delivery
            .serviceFor(target.destination)
            .post(addressOf(target.destination), plan.build(part.digest.title, part.digest.lines, link), {
              timeoutMs: Math.max(1, budget.ms(deps.postTimeoutMs, deps.reserveMs)),
            })
        : await deps.delivery.attempt(
            target,
            part.message,
            budget,
            part.anomaly,
            part.digest
              ? { controls: link ? { link } : undefined, ...(thread ? { thread } : {}) }
              : { origin: part.origin, ...(part.costCenters ? { costCenters: part.costCenters } : {}) },
          );
    if (outcome.kind === 'refused') return refused(i, outcome.reason, opened);
    if (outcome.kind === 'retryable') {
      // As for a single alert: out of attempts, each alert not posted waits for a human with the
      // reason, rather than the closing job for SQS's redrive, which keeps no reason and no alert.
      if (tries.attempt >= tries.maxAttempts) return refused(i, `attempts_exhausted:${outcome.reason}`, opened);
      return later({
        kind: 'retry',
        reason: outcome.reason,
        delaySeconds: retryDelaySeconds(outcome, tries.attempt),
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
        attempted: true,
      });
    }
    if (outcome.opened) for (const key of part.keys) openings.set(key, outcome.opened);
    await escalations(
      part.keys,
      part.digest && !link ? 'escalation withdrawn: the digest offered no way to triage its anomalies' : undefined,
    );
    // A closer that lost its lease stops: the one holding it now resumes after what is recorded.
    if (!(await step((signal) => deps.store.posted(destination, job.groupId, token, i + 1, signal)))) return LEASE_LOST;
    if (group.entries.length > 1) metrics.add(digestPostedMetric(type));
  }
  await delivered(group.entries, opened);
  if (!(await flush())) return LEASE_LOST;
  deps.logger.info('group closed', { destination, alerts: group.entries.length, posts: parts.length - group.postedParts });
  return { kind: 'closed', posts: parts.length - group.postedParts };
}
