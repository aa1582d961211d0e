// Apart from post-json.ts, so that a kind's lazily bundled poster takes the rule without the transport.
import { parseRetryAfterMs } from '../shared/retry-after.js';
import type { PostOutcome } from './service.js';

/**
 * The status rule that every kind but Slack shares: 2xx delivered; 429, 408 and 5xx retryable
 * (the service's limit, timeout or trouble, not a judgement on the message), after the answer's
 * Retry-After where it gives one (a 503 may say when to come back as a 429 does), else the
 * core's backoff; any other status refused, for an operator to act on.
 */
export function outcomeOfStatus(status: number, reason: string, retryAfter: string | null): PostOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status !== 429 && status !== 408 && status < 500) return { kind: 'refused', reason };
  const retryAfterMs = parseRetryAfterMs(retryAfter);
  return { kind: 'retryable', reason, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}
