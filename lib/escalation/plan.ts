import type { AnomalyStart, EscalationClaimOutcome } from '../dedup/ledger.js';
import type { DeliveryResult } from '../delivery/deliver.js';
import type { EscalationOutcome } from '../metrics/metrics.js';
import type { EscalateOptions } from '../notify/options.js';

// The decisions of an escalation, as pure functions of what the table, the configuration and the
// clock say: when it is due, how long a job waits, and what each answer means for it.

/** SQS delays a message by 15 minutes at the most: a longer wait is several hops. */
export const MAX_HOP_SECONDS = 900;
/**
 * How long past its due time an anomaly's record is kept for its escalation, so that a job that
 * comes late (a lease, a deferral, a worker that could not read the configuration) still finds it.
 */
export const KEEP_AFTER_DUE_SECONDS = 3_600;
/** A job that found one with later content waits this long: the later one, due at the same time, goes first. */
export const DEFER_SECONDS = 60;
/** A due job whose destination could not take it nor hold it tries again after this long, unless the service said. */
export const AGAIN_SECONDS = 30;
/**
 * A posted escalation whose mark could not be written comes back this soon to write it: well
 * within its lease, so that no other job of the opening takes the lease and posts again.
 */
export const MARK_AGAIN_SECONDS = 5;

/** Epoch seconds when an opening's escalation is due. */
export const dueAt = (firstSeen: number, afterMinutes: number): number => firstSeen + afterMinutes * 60;

/** Whole seconds from `nowMs` until `due` (epoch seconds), rounded up; zero or less once it is due. */
export const secondsLeft = (due: number, nowMs: number): number => Math.ceil((due * 1000 - nowMs) / 1000);

/** One hop of a wait: what is left, at most what SQS delays a message by. */
export const hopSeconds = (left: number): number => Math.min(MAX_HOP_SECONDS, Math.max(0, left));

/** An escalation to wait for: the opening it belongs to, how far its content got, and its first hop. */
export interface EscalationPlan {
  firstSeen: number;
  updates: number;
  delaySeconds: number;
  /** Whether the anomaly's opening starts the wait (a follow-up replaces a job already waiting). */
  opening: boolean;
  /** Epoch seconds the anomaly's record must last to; absent when its own expiry already covers it. */
  keepUntil?: number;
  /**
   * The opening waits to be posted (in a group, on the retry queue): its job escalates only once
   * it was shown with a way to triage, which the closing or the retry that posts it says.
   */
  unposted?: true;
}

/**
 * What a post of an anomaly that a destination with `escalate` now holds sets waiting: an
 * opening, a job; a follow-up delivered before the anomaly escalated, a job with its later
 * content that replaces the one waiting (due at once when the wait is over, so that the job
 * waiting there lets it go first). Nothing once someone triaged the anomaly (a triage action
 * before its opening included) or it escalated, nor for a follow-up that is only queued.
 *
 * `windowSeconds`: how long the table keeps an anomaly's record after this post; undefined where
 * nothing expires.
 */
export function planEscalation(
  escalate: EscalateOptions,
  start: AnomalyStart,
  held: 'delivered' | 'queued',
  nowMs: number,
  windowSeconds?: number,
): EscalationPlan | undefined {
  const nowSeconds = Math.floor(nowMs / 1000);
  let firstSeen: number;
  let updates: number;
  if (start.kind === 'opened') {
    if (start.triage) return undefined;
    firstSeen = start.firstSeen ?? nowSeconds;
    updates = 0;
  } else {
    if (held !== 'delivered' || start.state.triage || start.state.escalation === 'escalated') return undefined;
    firstSeen = start.state.firstSeen;
    updates = start.state.followUps + 1;
  }
  const due = dueAt(firstSeen, escalate.afterMinutes);
  const left = secondsLeft(due, nowMs);
  const keepUntil = due + KEEP_AFTER_DUE_SECONDS;
  return {
    firstSeen,
    updates,
    delaySeconds: hopSeconds(left),
    opening: start.kind === 'opened',
    ...(start.kind === 'opened' && held === 'queued' ? { unposted: true as const } : {}),
    ...(windowSeconds !== undefined && keepUntil > nowSeconds + windowSeconds ? { keepUntil } : {}),
  };
}

/**
 * How often a due job whose opening nobody was shown yet asks again: its group's closing or its
 * retry may wait for the chat a while (a throttle, a backoff).
 */
export const UNSHOWN_AGAIN_SECONDS = 30;

/** What a due job does after its claim on the anomaly's item. */
export type ClaimStep =
  | { kind: 'deliver' }
  | { kind: 'drop'; outcome: Extract<EscalationOutcome, 'cancelled' | 'dropped'>; reason: string }
  /** Back on the queue for `delaySeconds`; `deferred` when it let a job with later content go first. */
  | { kind: 'again'; delaySeconds: number; deferred?: true };

/**
 * `overdueSeconds`: how long past its due time the job is. An opening that was not shown by the
 * time its record may expire (its closing or its retry was lost) never escalates.
 */
export function afterClaim(claim: EscalationClaimOutcome, overdueSeconds = 0): ClaimStep {
  switch (claim.kind) {
    case 'claimed':
      return { kind: 'deliver' };
    case 'triaged':
      return { kind: 'drop', outcome: 'cancelled', reason: 'triaged' };
    case 'gone':
      return { kind: 'drop', outcome: 'dropped', reason: 'opening_gone' };
    case 'escalated':
      return { kind: 'drop', outcome: 'dropped', reason: 'escalated_already' };
    case 'held':
      return { kind: 'again', delaySeconds: hopSeconds(claim.retryAfterSeconds + 1) };
    case 'newer':
      return { kind: 'again', delaySeconds: DEFER_SECONDS, deferred: true };
    case 'unshown':
      if (overdueSeconds >= KEEP_AFTER_DUE_SECONDS) return { kind: 'drop', outcome: 'dropped', reason: 'never_shown' };
      return { kind: 'again', delaySeconds: UNSHOWN_AGAIN_SECONDS };
  }
}

/** What a claimed escalation does after its first attempt at the destination it goes to. */
export type DeliveredStep =
  /** Done: the anomaly is marked escalated, so that no other job of its opening posts again. */
  | { kind: 'escalated'; outcome: Exclude<EscalationOutcome, 'scheduled' | 'unscheduled'>; reason?: string }
  /**
   * Neither posted nor held there, or held there without the wait of its own escalation there: the
   * lease ends and the job comes back (to find it there, and set that wait). `posted` when it
   * was posted this time.
   */
  | { kind: 'again'; delaySeconds: number; reason: string; posted?: true };

export function afterDelivery(result: DeliveryResult): DeliveredStep {
  if (result.escalationUnscheduled) {
    return {
      kind: 'again',
      delaySeconds: AGAIN_SECONDS,
      reason: 'escalation_unscheduled',
      ...(result.kind === 'duplicate' ? {} : { posted: true as const }),
    };
  }
  switch (result.kind) {
    case 'delivered':
    case 'queued':
    case 'grouped':
      return { kind: 'escalated', outcome: 'posted' };
    case 'duplicate':
      return { kind: 'escalated', outcome: 'dropped', reason: 'already_there' };
    case 'snoozed':
      return { kind: 'escalated', outcome: 'cancelled', reason: 'snoozed_there' };
    case 'refused':
      return { kind: 'escalated', outcome: 'failed', reason: result.reason };
    case 'unheld':
      return {
        kind: 'again',
        delaySeconds: hopSeconds(result.retryAfterMs === undefined ? AGAIN_SECONDS : Math.ceil(result.retryAfterMs / 1000)),
        reason: result.reason,
      };
    case 'in_progress':
      return { kind: 'again', delaySeconds: hopSeconds(result.retryAfterSeconds), reason: 'in_progress' };
  }
}
