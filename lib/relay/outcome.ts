import type { PostResult } from '../slack/post.js';
import type { HttpResponse } from '../http/types.js';
import { jsonResponse } from '../http/response.js';

/** What became of one destination: Slack's answer, or where the message is held now. */
export type DeliveryResult =
  | PostResult
  | { kind: 'queued'; reason: string }
  | { kind: 'queue_failed'; reason: string };

export interface DestinationResult {
  destination: string;
  result: DeliveryResult;
}

export type DeliveryOutcome = 'delivered' | 'queued' | 'retryable' | 'refused';

const isUnheld = (r: DestinationResult) =>
  r.result.kind === 'rate_limited' || r.result.kind === 'transient' || r.result.kind === 'queue_failed';

/**
 * One answer for the whole fan-out. 503 when some destination has neither taken the message
 * nor had it stored for later (a retry by the sender can still help); 502 when Slack refused
 * for good; 202 when the rest waits on the durable queue; 200 only when every destination
 * took it. Destinations are named, never their URLs.
 */
export function summarise(results: readonly DestinationResult[]): { outcome: DeliveryOutcome; response: HttpResponse } {
  const unheld = results.filter(isUnheld);
  if (unheld.length > 0) {
    const waits = unheld.map((r) => (r.result.kind === 'rate_limited' ? r.result.retryAfterMs : 0));
    const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    return {
      outcome: 'retryable',
      response: jsonResponse(
        503,
        {
          error: 'slack_unavailable',
          message: 'Slack could not take the message right now; send it again later.',
          destinations: unheld.map((r) => r.destination),
        },
        { 'retry-after': String(retryAfterSeconds) },
      ),
    };
  }
  const refused = results.filter((r) => r.result.kind === 'permanent');
  if (refused.length > 0) {
    return {
      outcome: 'refused',
      response: jsonResponse(502, {
        error: 'slack_refused',
        message: 'Slack refused the message for good; check the named destinations.',
        destinations: refused.map((r) => ({ name: r.destination, reason: reasonOf(r.result) })),
      }),
    };
  }
  const queued = results.filter((r) => r.result.kind === 'queued');
  if (queued.length > 0) {
    return {
      outcome: 'queued',
      response: jsonResponse(202, {
        delivered: results.filter((r) => r.result.kind === 'delivered').map((r) => r.destination),
        queued: queued.map((r) => r.destination),
      }),
    };
  }
  return { outcome: 'delivered', response: jsonResponse(200, { delivered: results.map((r) => r.destination) }) };
}

export function reasonOf(result: DeliveryResult): string {
  switch (result.kind) {
    case 'delivered':
      return 'delivered';
    case 'rate_limited':
      return 'rate_limited';
    default:
      return result.reason;
  }
}
