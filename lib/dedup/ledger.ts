import type { MessageRef } from '../chat/service.js';
import { TRIAGE, type TriageStateName } from '../vocabulary/triage.js';
import type { SummaryNote } from './summary-record.js';

/** What the ledger knows about one alert at one destination. */
export type ClaimOutcome =
  /** Nobody else has it: this attempt may post, and must record or release. */
  | { kind: 'claimed' }
  /** The destination took it, or it waits on the retry queue for it: do nothing again. */
  | { kind: 'done'; state: 'delivered' | 'queued' }
  /** Another live attempt holds a claim; it ends at the latest after `retryAfterSeconds`. */
  | { kind: 'in_progress'; retryAfterSeconds: number };

/**
 * A queued alert's later attempt (`claimQueued`) may also find that another copy of its own job
 * parked the alert: a stale copy, which must not post what waits for a human.
 */
export type QueuedClaimOutcome = ClaimOutcome | { kind: 'done'; state: 'parked' };

/**
 * Which job a queued alert's attempt belongs to, as its body says: every copy of one job (SQS's
 * duplicates, the job sent again as a new message) carries the time of its first attempt; another
 * job of the alert (the platform sent it again) has its own. A parked body carries its parking's
 * random `parkToken` too, and so does its redrive.
 */
export interface QueuedJob {
  firstAttemptAt: string;
  parkToken?: string | undefined;
}

/** A parking of a job, as its parked body says. */
export type Parking = Required<QueuedJob>;

/**
 * A parked record is done for a stale copy of the job that parked it: the same job, without the
 * parked body's token. Free for any other job of the alert, and for the parked body's redrive.
 */
export const staleCopy = (parked: Parking | undefined, job: QueuedJob): boolean =>
  parked !== undefined && parked.firstAttemptAt === job.firstAttemptAt && parked.parkToken !== job.parkToken;

/** What the table knows of an anomaly at one destination: ids and times, never its text. */
export interface AnomalyState {
  /** Epoch seconds of its opening. */
  firstSeen: number;
  /** Follow-ups delivered so far. */
  followUps: number;
  /** Epoch seconds of its last follow-up delivered here, where the table says. */
  lastUpdate?: number;
  /** Where its opening message is (Slack app destinations), once it is posted. */
  opening?: MessageRef;
  /** What someone decided about it here (lib/triage); absent while nobody has. */
  triage?: AnomalyTriage;
  /**
   * Its escalation here (lib/escalation), where the item says: `escalated` once it escalated (or
   * nothing more can come of it), `unscheduled` while its opening's wait could not be set.
   */
  escalation?: 'escalated' | 'unscheduled';
}

/** The triage state on an anomaly's item, as the triage function writes it: names and times, no alert text. */
export interface AnomalyTriage {
  state: TriageStateName;
  by?: string;
  /** Epoch seconds of the change. */
  at?: number;
  /** Epoch seconds when a snooze ends: nothing is posted here before. */
  until?: number;
}

/** A snooze holds until its end; after that the anomaly is open again without anyone writing it. */
export const snoozeHolds = (triage: AnomalyTriage | undefined, nowSeconds: number): boolean =>
  triage?.state === TRIAGE.snooze.state && (triage.until ?? 0) > nowSeconds;

/**
 * A snooze of the anomaly here has ended and nothing of it was delivered here since: its next post
 * is the first after the snooze (a pager's alert is still acknowledged from it, so it pages again).
 */
export function snoozeEndedUnposted(state: AnomalyState, nowSeconds: number): boolean {
  const { triage } = state;
  if (triage?.state !== TRIAGE.snooze.state || triage.until === undefined || triage.until > nowSeconds) return false;
  return (state.lastUpdate ?? state.firstSeen) < triage.until;
}

/**
 * The first delivery of an anomaly opens it; any other finds its state. An opening may find
 * what someone decided already (a click on an older message of the anomaly), so that a snooze
 * holds for it too.
 */
export type AnomalyStart =
  /** `firstSeen`: the epoch seconds the opening wrote, where the table says (an escalation's wait starts there). */
  { kind: 'opened'; triage?: AnomalyTriage; firstSeen?: number } | { kind: 'existing'; state: AnomalyState };

/** An anomaly's item as either writer leaves it: the triage function may write one before the relay opens it. */
export type StoredAnomaly = Partial<AnomalyState>;

/**
 * The one rule for reading an anomaly's item: only an opening sets `firstSeen`. An item
 * without it (triage state written on an anomaly whose record had expired, or an opening that
 * was forgotten) has no opening in flight, so the delivery that finds it opens the anomaly,
 * keeping what was decided. Read otherwise, it would wait for an opening that never comes.
 */
export function anomalyStartOf(stored: StoredAnomaly | undefined): AnomalyStart {
  if (stored?.firstSeen === undefined) return { kind: 'opened', ...(stored?.triage ? { triage: stored.triage } : {}) };
  return {
    kind: 'existing',
    state: {
      firstSeen: stored.firstSeen,
      followUps: stored.followUps ?? 0,
      ...(stored.lastUpdate !== undefined ? { lastUpdate: stored.lastUpdate } : {}),
      ...(stored.opening ? { opening: stored.opening } : {}),
      ...(stored.triage ? { triage: stored.triage } : {}),
      ...(stored.escalation ? { escalation: stored.escalation } : {}),
    },
  };
}

/** One attempt's claim: its own token, and how long it may hold the destination at most. */
export interface Claim {
  /** Unique per attempt, so that a claim whose write succeeded but whose answer was lost is still recognised as ours. */
  token: string;
  holdSeconds: number;
}

/**
 * Memory of deliveries already made, keyed by `deliveryRecordId`. A claim expires, so a
 * crashed attempt never blocks an alert for good; a record expires after the window.
 */
export interface DeliveryLedger {
  claim(id: string, claim: Claim, signal?: AbortSignal): Promise<ClaimOutcome>;
  /**
   * The claim of a queued alert's later attempt (delivery-retry) by its job `claim.job`: free when
   * the alert waits on the queue (`queued`), when its record is gone (expired), when a claim
   * outlived its attempt, or when it is parked but for a stale copy of the parked job (`staleCopy`).
   * SQS may hand one job to two workers at once: the other one finds this claim (`in_progress`),
   * the alert delivered (`done`), or parked by this copy's twin (`done`, `parked`).
   */
  claimQueued(id: string, claim: Claim & { job: QueuedJob }, signal?: AbortSignal): Promise<QueuedClaimOutcome>;
  record(id: string, state: 'delivered' | 'queued', signal?: AbortSignal): Promise<void>;
  /**
   * The alert waits in the dead-letter queue, parked as its body says. A first attempt (the
   * platform sending it again) finds the record free, and so does that body's redrive; a stale
   * copy of the job finds it done. It expires as any record does.
   */
  park(id: string, parking: Parking, signal?: AbortSignal): Promise<void>;
  /**
   * Forgets a claim, a queued or a parked record, so that the next send tries again; a delivered record
   * stays. With a token, only that attempt's own claim is forgotten, never a later attempt's.
   */
  release(id: string, token?: string, signal?: AbortSignal): Promise<void>;
  /**
   * Opens the anomaly `id` (an `anomalyRecordId`) when nobody has: one conditional write, so of
   * two deliveries arriving together exactly one opens it. `summary`, for a destination with a
   * weekly summary only: what the summary shows of it, kept on its item, which then lives at
   * least SUMMARY_KEEP_SECONDS (a later delivery refreshes the origin its link leads to).
   */
  startAnomaly(id: string, signal?: AbortSignal, summary?: SummaryNote): Promise<AnomalyStart>;
  /** Where the opening message now is (a first opening, or one that replaced a lost message). */
  anomalyOpened(id: string, opening: MessageRef, signal?: AbortSignal): Promise<void>;
  /** One more follow-up delivered; the anomaly is remembered for another window. */
  anomalyFollowedUp(id: string, signal?: AbortSignal): Promise<void>;
  /**
   * An opening that no destination has (refused, not held, or snoozed): the next delivery opens
   * again. What someone decided about the anomaly stays.
   */
  forgetAnomaly(id: string, signal?: AbortSignal): Promise<void>;
  /**
   * The anomaly's state as it stands, without changing it: undefined when it has none (never
   * opened, or expired). For a queued follow-up whose post depends on what was decided meanwhile.
   */
  readAnomaly(id: string, signal?: AbortSignal): Promise<AnomalyState | undefined>;
  /** The escalation half (lib/escalation), which the DynamoDB adapter loads on first use like the anomaly's. */
  escalations(): Promise<EscalationLedger>;
}

/** One attempt's lease on an anomaly's escalation, as `claimEscalation` asks for it. */
export interface EscalationClaim extends Claim {
  /** The opening the job waits on: a later opening of the anomaly has its own job. */
  firstSeen: number;
  /** The follow-ups the job's content had seen; undefined once the job gave a newer one its turn. */
  updates?: number | undefined;
  /**
   * Its opening was not posted yet when the job was sent (it waited in a group or on the retry
   * queue): it escalates only once the opening was shown with a way to triage (`openingShown`).
   */
  unposted?: true | undefined;
}

/** What an anomaly's item says of one escalation job. */
export type EscalationClaimOutcome =
  /** This attempt escalates, and must then call `escalated` or `releaseEscalation`. */
  | { kind: 'claimed' }
  /** Nothing to escalate: the opening is gone (or replaced by a later one), it escalated already, or someone triaged it. */
  | { kind: 'gone' | 'escalated' | 'triaged' }
  /** A job with later content (more follow-ups) exists and is due at the same time. */
  | { kind: 'newer' }
  /** An `unposted` job's opening still waits to be shown (its group to close, its retry to post): nobody here has seen it. */
  | { kind: 'unshown' }
  /** Another attempt holds the lease, for at most `retryAfterSeconds`. */
  | { kind: 'held'; retryAfterSeconds: number };

/**
 * An escalation's state on its anomaly's item at the destination where it waits: a lease, so that
 * a job delivered twice or two jobs of one anomaly escalate once, and when it escalated. Times
 * and a random token only.
 */
export interface EscalationLedger {
  /** Keeps the item of this opening until at least `untilSeconds`, so that its state is there when its escalation is due. */
  keepAnomaly(id: string, firstSeen: number, untilSeconds: number, signal?: AbortSignal): Promise<void>;
  /**
   * One conditional write: the lease when the opening is still there, untriaged, not escalated,
   * not leased, (with `updates`) has seen no more follow-ups and (`unposted`) was shown since; otherwise why not.
   */
  claimEscalation(id: string, claim: EscalationClaim, signal?: AbortSignal): Promise<EscalationClaimOutcome>;
  /** The anomaly escalated (or nothing more can come of it): no other job of this opening does. The lease ends. */
  escalated(id: string, firstSeen: number, signal?: AbortSignal): Promise<void>;
  /**
   * This opening, which waited in a group or on the retry queue, is now posted with a way to triage
   * it: its `unposted` escalation job may claim it. Never on another opening.
   */
  openingShown(id: string, firstSeen: number, signal?: AbortSignal): Promise<void>;
  /** Ends this attempt's own lease without escalating, so that the job may try again. */
  releaseEscalation(id: string, token: string, signal?: AbortSignal): Promise<void>;
  /**
   * What the item says of this opening's waiting jobs: the most follow-ups one of them has seen, as
   * `escalationWaiting` recorded it (0 when none was recorded, or the item is not this opening's),
   * and until when the item lives, where it expires and is this opening's. A read that may lag
   * behind a write a little.
   */
  waitingEscalation(id: string, firstSeen: number, signal?: AbortSignal): Promise<WaitingEscalation>;
  /** A job of this opening that has seen `updates` follow-ups is on the queue again: recorded when no other has seen more. */
  escalationWaiting(id: string, firstSeen: number, updates: number, signal?: AbortSignal): Promise<void>;
  /**
   * This opening's wait could not be set when it was posted: said on its item (AnomalyState's
   * `escalation`), so that a re-send of the alert sets it. Never on another opening.
   */
  escalationUnscheduled(id: string, firstSeen: number, signal?: AbortSignal): Promise<void>;
  /** Its wait is set after all: a later re-send sets nothing more. */
  escalationScheduled(id: string, firstSeen: number, signal?: AbortSignal): Promise<void>;
}

/** What an anomaly's item says of the jobs that wait on its opening (`waitingEscalation`). */
export interface WaitingEscalation {
  /** The most follow-ups a job that waits has seen. */
  updates: number;
  /** Epoch seconds the item lives until; absent where nothing expires. */
  expiresAt?: number;
}

/**
 * Added to an attempt's remaining time to make its claim: Lambda ends the attempt by then, so a
 * claim outlives a crashed attempt only by this much, while clocks of two containers may differ a little.
 */
export const CLAIM_MARGIN_SECONDS = 5;

/** How long an attempt with `remainingMs` left may hold a destination. */
export const claimHoldSeconds = (remainingMs: number): number => Math.max(1, Math.ceil(remainingMs / 1000)) + CLAIM_MARGIN_SECONDS;

/** The most one ledger call may take; it sits before the post, and on failure the alert is delivered anyway. */
export const LEDGER_CALL_BUDGET_MS = 1_000;

/** The anomaly half of the ledger, which the DynamoDB adapter loads on first use. */
export type AnomalyTable = Pick<DeliveryLedger, 'startAnomaly' | 'anomalyOpened' | 'anomalyFollowedUp' | 'forgetAnomaly' | 'readAnomaly'> &
  EscalationLedger;
