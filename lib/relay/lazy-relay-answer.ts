// Imported with import() by relay.ts when a delivery is not answered 200 (answer.ts, settledAnswer),
// and bundled on its own (a lazy-*.ts module): the answers of a delivery that fails or waits.
import type { DeliveryResult } from '../delivery/deliver.js';
import { jsonResponse } from '../inbound/response.js';
import type { HttpResponse } from '../inbound/types.js';
import {
  type DeliveryOutcome,
  type DestinationResult,
  ESCALATION_UNSCHEDULED,
  type FailedDestination,
  names,
  nonEmpty,
  settledAnswer,
} from './answer.js';

/** What a re-send for an escalation that could not be set waiting waits: the queue's own retries have passed by then. */
export const ESCALATION_RETRY_SECONDS = 30;

/** Seconds the sender should wait before a re-send can help this destination; undefined when it needs none. */
function waitSeconds(result: DeliveryResult): number | undefined {
  if (result.kind === 'in_progress') return result.retryAfterSeconds;
  if (result.kind === 'unheld') return (result.retryAfterMs ?? 0) / 1000;
  if (result.escalationUnscheduled) return ESCALATION_RETRY_SECONDS;
  return undefined;
}

/**
 * One answer for the whole fan-out. 503 when some destination has neither taken the alert
 * nor had it stored for later (the sender trying again can still help), including one that
 * another live attempt is posting to right now, or one whose escalation could not be set
 * waiting (its re-send sets it, and posts nothing again); 502 when a destination refused for
 * good; 202 only when the rest waits on the durable queue; 200 when every destination has it.
 * Every answer but 200 names each failed destination with its class; never a URL.
 */
export function answerFor(results: readonly DestinationResult[]): { outcome: DeliveryOutcome; response: HttpResponse } {
  return settledAnswer(results) ?? unsettledAnswer(results);
}

function unsettledAnswer(results: readonly DestinationResult[]): { outcome: DeliveryOutcome; response: HttpResponse } {
  const failed: FailedDestination[] = [];
  for (const r of results) {
    if (r.result.kind === 'unheld') failed.push({ name: r.destination, class: 'retryable', reason: r.result.reason });
    else if (r.result.kind === 'refused') failed.push({ name: r.destination, class: 'refused', reason: r.result.reason });
    else if (r.result.escalationUnscheduled) failed.push({ name: r.destination, class: 'retryable', reason: ESCALATION_UNSCHEDULED });
  }
  // A destination that already had this alert counts as delivered; one waiting on the retry queue as queued.
  const has = names(
    results.filter((r) => r.result.kind === 'delivered' || (r.result.kind === 'duplicate' && r.result.state === 'delivered')),
  );
  const held = names(results.filter((r) => r.result.kind === 'queued' || (r.result.kind === 'duplicate' && r.result.state === 'queued')));
  const duplicates = names(results.filter((r) => r.result.kind === 'duplicate'));
  const grouped = names(results.filter((r) => r.result.kind === 'grouped'));
  const snoozed = names(results.filter((r) => r.result.kind === 'snoozed'));
  const inProgress = results.filter((r) => r.result.kind === 'in_progress');
  const unheld = results.filter((r) => r.result.kind === 'unheld');
  const unscheduled = results.filter((r) => r.result.escalationUnscheduled);
  const where = {
    ...nonEmpty('delivered', has),
    ...nonEmpty('queued', held),
    ...nonEmpty('grouped', grouped),
    ...nonEmpty('duplicate', duplicates),
    ...nonEmpty('snoozed', snoozed),
  };

  if (unheld.length > 0 || inProgress.length > 0 || unscheduled.length > 0) {
    const waiting = [...unheld, ...inProgress, ...unscheduled];
    const waits = waiting.map((r) => waitSeconds(r.result) ?? 0);
    const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...waits)));
    const outcome: 'retryable' | 'in_progress' | typeof ESCALATION_UNSCHEDULED =
      unheld.length > 0 ? 'retryable' : inProgress.length > 0 ? 'in_progress' : ESCALATION_UNSCHEDULED;
    const why = {
      retryable: { error: 'chat_unavailable', message: 'A destination could not take the alert right now; send it again later.' },
      in_progress: {
        error: 'in_progress',
        message: 'Another attempt is delivering this alert right now; send it again after Retry-After.',
      },
      escalation_unscheduled: {
        error: ESCALATION_UNSCHEDULED,
        message:
          'Every destination has the alert or holds it, but an escalation could not be set waiting; send it again (nothing is posted twice).',
      },
    }[outcome];
    return {
      outcome,
      response: jsonResponse(
        503,
        {
          ...why,
          destinations: names(waiting),
          ...nonEmpty('failed', failed),
          ...nonEmpty('in_progress', names(inProgress)),
          ...where,
        },
        { 'retry-after': String(retryAfterSeconds) },
      ),
    };
  }
  if (failed.length > 0) {
    return {
      outcome: 'refused',
      response: jsonResponse(502, {
        error: 'chat_refused',
        message: 'A destination refused the alert for good; check the named destinations.',
        destinations: failed.map(({ name, reason }) => ({ name, reason })),
        failed,
        ...where,
      }),
    };
  }
  // What settledAnswer does not answer with 200 and is neither a 503 nor a 502: the rest waits on the queue or in a group.
  return { outcome: 'queued', response: jsonResponse(202, { delivered: has, queued: held, ...where }) };
}
