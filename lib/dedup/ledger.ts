/** What the ledger knows about one alert at one destination. */
export type ClaimOutcome =
  /** Nobody has it: this attempt may post, and must record or release. */
  | { kind: 'claimed' }
  /** The destination took it, or it waits on the retry queue for it: do nothing again. */
  | { kind: 'done'; state: 'delivered' | 'queued' }
  /** Another attempt holds a live claim right now. */
  | { kind: 'in_progress' };

/**
 * Memory of deliveries already made, keyed by `deliveryRecordId`. A claim expires, so a
 * crashed attempt never blocks an alert for good; a record expires after the window.
 */
export interface DeliveryLedger {
  claim(id: string, signal?: AbortSignal): Promise<ClaimOutcome>;
  record(id: string, state: 'delivered' | 'queued', signal?: AbortSignal): Promise<void>;
  /** Forgets a claim or a queued record, so that the next send tries again; a delivered record stays. */
  release(id: string, signal?: AbortSignal): Promise<void>;
}

/** How long a claim holds: longer than the relay's 15 s timeout, short enough for a platform retry. */
export const CLAIM_SECONDS = 60;
/** The most one ledger call may take; it sits before the post, and on failure the alert is delivered anyway. */
export const LEDGER_CALL_BUDGET_MS = 1_000;
