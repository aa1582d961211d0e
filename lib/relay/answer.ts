import type { DeliveryResult } from '../delivery/deliver.js';
import { jsonResponse } from '../http/response.js';
import type { HttpResponse } from '../http/types.js';

export interface DestinationResult {
  destination: string;
  result: DeliveryResult;
}

export type DeliveryOutcome = 'delivered' | 'queued' | 'retryable' | 'refused';

const names = (results: readonly DestinationResult[]) => results.map((r) => r.destination);

/**
 * One answer for the whole fan-out. 503 when some destination has neither taken the alert
 * nor had it stored for later (the sender trying again can still help); 502 when a chat
 * service refused for good; 202 when the rest waits on the durable queue; 200 only when every
 * destination took it. Destinations are named, never their URLs.
 */
export function answerFor(results: readonly DestinationResult[]): { outcome: DeliveryOutcome; response: HttpResponse } {
  const unheld = results.filter((r) => r.result.kind === 'unheld');
  if (unheld.length > 0) {
    const waits = unheld.map((r) => (r.result.kind === 'unheld' ? (r.result.retryAfterMs ?? 0) : 0));
    const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    return {
      outcome: 'retryable',
      response: jsonResponse(
        503,
        {
          error: 'chat_unavailable',
          message: 'A chat service could not take the alert right now; send it again later.',
          destinations: names(unheld),
        },
        { 'retry-after': String(retryAfterSeconds) },
      ),
    };
  }
  const refused = results.filter((r) => r.result.kind === 'refused');
  if (refused.length > 0) {
    return {
      outcome: 'refused',
      response: jsonResponse(502, {
        error: 'chat_refused',
        message: 'A chat service refused the alert for good; check the named destinations.',
        destinations: refused.map((r) => ({ name: r.destination, reason: reasonOf(r.result) })),
      }),
    };
  }
  const queued = results.filter((r) => r.result.kind === 'queued');
  if (queued.length > 0) {
    return {
      outcome: 'queued',
      response: jsonResponse(202, { delivered: names(results.filter((r) => r.result.kind === 'delivered')), queued: names(queued) }),
    };
  }
  return { outcome: 'delivered', response: jsonResponse(200, { delivered: names(results) }) };
}

export function reasonOf(result: DeliveryResult): string {
  return result.kind === 'delivered' ? 'delivered' : result.reason;
}
