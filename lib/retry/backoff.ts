import type { PostResult } from '../slack/post.js';
import { clampSeconds } from '../queue/sqs.js';

/** First wait after a transient failure; doubles per attempt up to SQS's 15-minute maximum. */
export const BASE_RETRY_SECONDS = 5;

/**
 * How long a delivery waits before its next attempt: Slack's Retry-After when it gave one,
 * otherwise exponential backoff. With 20 attempts this spans about three hours.
 */
export function retryDelaySeconds(result: PostResult, attempt: number): number {
  if (result.kind === 'rate_limited') return clampSeconds(result.retryAfterMs / 1000);
  return clampSeconds(BASE_RETRY_SECONDS * 2 ** Math.max(0, attempt - 1));
}
