import type { DeliveryResult } from '../delivery/deliver.js';
import { jsonResponse } from '../http/response.js';
import type { HttpResponse } from '../http/types.js';

export interface DestinationResult {
  destination: string;
  result: DeliveryResult;
}

export type DeliveryOutcome = 'delivered' | 'queued' | 'retryable' | 'refused' | 'duplicate';

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
  // A destination that already had this alert counts as delivered; one that another attempt
  // holds right now, or that waits on the retry queue, counts as queued.
  const has = results.filter((r) => r.result.kind === 'delivered' || (r.result.kind === 'duplicate' && r.result.state === 'delivered'));
  const duplicates = names(results.filter((r) => r.result.kind === 'duplicate'));
  const seen = duplicates.length ? { duplicate: duplicates } : {};
  const queued = results.filter((r) => r.result.kind === 'queued' || r.result.kind === 'in_progress' || (r.result.kind === 'duplicate' && r.result.state === 'queued'));
  const everyOneARepeat = duplicates.length === results.length && results.length > 0;
  if (queued.length > 0 && !everyOneARepeat) {
    return { outcome: 'queued', response: jsonResponse(202, { delivered: names(has), queued: names(queued), ...seen }) };
  }
  // A re-send that every destination already has (delivered or waiting on the queue) is done: 200.
  return {
    outcome: everyOneARepeat ? 'duplicate' : 'delivered',
    response: jsonResponse(200, { delivered: names(results), ...seen }),
  };
}

export function reasonOf(result: DeliveryResult): string {
  if (result.kind === 'duplicate' || result.kind === 'in_progress') return result.kind;
  return result.kind === 'delivered' ? 'delivered' : result.reason;
}
