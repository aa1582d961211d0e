import type { MessageRef, PostOutcome } from '../chat/service.js';

/** SQS delays and visibility timeouts are whole seconds up to 15 minutes. */
export const MAX_DELAY_SECONDS = 900;
/** First wait after a retryable failure without Retry-After; doubles per attempt up to the maximum. */
export const BASE_RETRY_SECONDS = 5;

export const clampSeconds = (seconds: number): number => Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

/**
 * How long a delivery waits before its next attempt: the service's Retry-After when it gave
 * one, otherwise exponential backoff. With 20 attempts this spans about three hours.
 */
export function retryDelaySeconds(outcome: { retryAfterMs?: number }, attempt: number): number {
  if (outcome.retryAfterMs !== undefined) return clampSeconds(outcome.retryAfterMs / 1000);
  return clampSeconds(BASE_RETRY_SECONDS * 2 ** Math.max(0, attempt - 1));
}

/** `failure` is the chat service's own reason; `reason` says why the alert is parked or waits. */
export type Decision =
  | { kind: 'delivered'; opened?: MessageRef }
  | { kind: 'retry'; reason: string; failure: string; delaySeconds: number; retryAfterMs?: number }
  | { kind: 'park'; reason: string; failure: string };

/**
 * What happens after attempt number `attempts` (the relay's first post is 1): a refusal is
 * parked with its reason, a retryable failure waits, unless the attempts are used up.
 */
export function decide(outcome: PostOutcome, attempts: number, maxAttempts: number = Number.POSITIVE_INFINITY): Decision {
  switch (outcome.kind) {
    case 'delivered':
      return outcome;
    case 'refused':
      return { kind: 'park', reason: outcome.reason, failure: outcome.reason };
    case 'retryable':
      if (attempts >= maxAttempts) return { kind: 'park', reason: `attempts_exhausted:${outcome.reason}`, failure: outcome.reason };
      return {
        kind: 'retry',
        reason: outcome.reason,
        failure: outcome.reason,
        delaySeconds: retryDelaySeconds(outcome, attempts),
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
      };
  }
}
