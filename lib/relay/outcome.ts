import type { PostResult } from '../slack/post.js';
import type { HttpResponse } from '../http/types.js';
import { jsonResponse } from '../http/response.js';

export interface DestinationResult {
  destination: string;
  result: PostResult;
}

export type DeliveryOutcome = 'delivered' | 'retryable' | 'refused';

/**
 * One answer for the whole fan-out: 200 only when every destination took it; 503 when a
 * retry by the sender could still help; 502 when Slack refused for good. Destinations are
 * named, never their URLs.
 */
export function summarise(results: readonly DestinationResult[]): { outcome: DeliveryOutcome; response: HttpResponse } {
  const failed = results.filter((r) => r.result.kind !== 'delivered');
  if (failed.length === 0) {
    return {
      outcome: 'delivered',
      response: jsonResponse(200, { delivered: results.map((r) => r.destination) }),
    };
  }
  const retryable = failed.filter((r) => r.result.kind === 'rate_limited' || r.result.kind === 'transient');
  if (retryable.length > 0) {
    const waits = retryable.map((r) => (r.result.kind === 'rate_limited' ? r.result.retryAfterMs : 0));
    const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    return {
      outcome: 'retryable',
      response: jsonResponse(
        503,
        {
          error: 'slack_unavailable',
          message: 'Slack could not take the message right now; send it again later.',
          destinations: retryable.map((r) => r.destination),
        },
        { 'retry-after': String(retryAfterSeconds) },
      ),
    };
  }
  return {
    outcome: 'refused',
    response: jsonResponse(502, {
      error: 'slack_refused',
      message: 'Slack refused the message for good; check the named destinations.',
      destinations: failed.map((r) => ({ name: r.destination, reason: reasonOf(r.result) })),
    }),
  };
}

export function reasonOf(result: PostResult): string {
  switch (result.kind) {
    case 'delivered':
      return 'delivered';
    case 'rate_limited':
      return 'rate_limited';
    default:
      return result.reason;
  }
}
