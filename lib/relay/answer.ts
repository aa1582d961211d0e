import type { DeliveryResult } from '../delivery/deliver.js';
import { jsonResponse } from '../inbound/response.js';
import type { HttpResponse } from '../inbound/types.js';

export interface DestinationResult {
  destination: string;
  result: DeliveryResult;
}

export type DeliveryOutcome = 'delivered' | 'queued' | 'retryable' | 'in_progress' | 'escalation_unscheduled' | 'refused' | 'duplicate';

/** A destination that has not got the alert: retryable when sending it again can help, refused when only a human can. */
export interface FailedDestination {
  name: string;
  class: 'retryable' | 'refused';
  reason: string;
}

/** The one answer for a relay whose environment or configuration cannot be used; the log says why. */
export const configurationUnavailable = (): HttpResponse =>
  jsonResponse(503, { error: 'configuration_unavailable', message: 'The relay is not configured correctly; its operator has been told.' });

/** The reason a destination that has the alert is named in a 503: its escalation's wait is not set. */
export const ESCALATION_UNSCHEDULED = 'escalation_unscheduled';

export const names = (results: readonly DestinationResult[]) => results.map((r) => r.destination);
export const nonEmpty = (field: string, list: readonly unknown[]) => (list.length ? { [field]: list } : {});

/**
 * The answer when every destination has the alert, had it already or has its anomaly snoozed:
 * 200, naming the repeats and the snoozed. Undefined for every other answer, which
 * lazy-relay-answer.ts gives: a delivery that fails or waits loads it, one that succeeds never does.
 */
export function settledAnswer(results: readonly DestinationResult[]): { outcome: DeliveryOutcome; response: HttpResponse } | undefined {
  // A re-send that every destination already has (delivered or waiting on the queue) is done: 200.
  const everyOneARepeat = results.length > 0 && results.every((r) => r.result.kind === 'duplicate');
  const settled = results.every(
    ({ result }) =>
      !result.escalationUnscheduled &&
      (result.kind === 'delivered' ||
        result.kind === 'snoozed' ||
        (result.kind === 'duplicate' && (everyOneARepeat || result.state === 'delivered'))),
  );
  if (!settled) return undefined;
  return {
    outcome: everyOneARepeat ? 'duplicate' : 'delivered',
    response: jsonResponse(200, {
      delivered: names(results.filter((r) => r.result.kind !== 'snoozed')),
      ...nonEmpty('duplicate', names(results.filter((r) => r.result.kind === 'duplicate'))),
      ...nonEmpty('snoozed', names(results.filter((r) => r.result.kind === 'snoozed'))),
    }),
  };
}

export function reasonOf(result: DeliveryResult): string {
  if (result.escalationUnscheduled) return ESCALATION_UNSCHEDULED;
  if (result.kind === 'duplicate' || result.kind === 'in_progress' || result.kind === 'grouped' || result.kind === 'snoozed')
    return result.kind;
  return result.kind === 'delivered' ? 'delivered' : result.reason;
}
