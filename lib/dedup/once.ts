import { randomUUID } from 'node:crypto';
import { destinationType } from '../delivery/chat-service.js';
import { SAFETY_MARGIN_MS, type AttemptResult, type Delivery, type DeliveryResult, type FirstAttempt, type Target } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import type { WebhookMessage } from '../message/schema.js';
import { dedupUnavailableMetric, deliveryMetric, noMetrics, type Metrics } from '../metrics/metrics.js';
import { budget, withDeadline } from '../shared/deadline.js';
import { errorName } from '../shared/errors.js';
import { deliveryRecordId } from './fingerprint.js';
import { claimHoldSeconds, LEDGER_CALL_BUDGET_MS, type ClaimOutcome, type DeliveryLedger } from './ledger.js';

export interface OnceDependencies {
  ledger: DeliveryLedger;
  delivery: Delivery;
  logger: Logger;
  metrics?: Metrics;
}

/** What the ledger learns from the first attempt: kept when the destination has the alert or its queue does. */
const recorded = (result: AttemptResult): 'delivered' | 'queued' | undefined =>
  result.kind === 'delivered' || result.kind === 'queued' ? result.kind : undefined;

/**
 * The relay's first attempt, at most once per alert and destination: a re-sent alert that a
 * destination already took (or that waits on the retry queue for it) is neither posted nor
 * queued again, and identical deliveries arriving together post once. A ledger that fails
 * never costs an alert: the attempt goes ahead, and at-least-once stays the floor.
 */
export function deliverOnce(deps: OnceDependencies): FirstAttempt {
  const { ledger, delivery, logger } = deps;
  const metrics = deps.metrics ?? noMetrics;
  const callBudget = (remainingTimeMs: () => number) => budget(remainingTimeMs, LEDGER_CALL_BUDGET_MS, SAFETY_MARGIN_MS);
  const unavailable = (error: unknown, destination: string) => {
    logger.warn('dedup table unavailable; delivering without it', { reason: 'dedup_unavailable', error: errorName(error), destination });
    metrics.add(dedupUnavailableMetric());
  };

  return async (deliveryId: string, target: Target, message: WebhookMessage, remainingTimeMs: () => number): Promise<DeliveryResult> => {
    const id = deliveryRecordId(message, target.name);
    const token = randomUUID();
    let claim: ClaimOutcome | undefined;
    try {
      const hold = { token, holdSeconds: claimHoldSeconds(remainingTimeMs()) };
      claim = await withDeadline('dedup_table', callBudget(remainingTimeMs), (signal) => ledger.claim(id, hold, signal));
    } catch (error) {
      unavailable(error, target.name);
    }
    if (claim?.kind === 'done') {
      logger.info('duplicate delivery: this destination already has it', { destination: target.name, state: claim.state, outcome: 'duplicate' });
      metrics.add(deliveryMetric('duplicate', destinationType(target.destination)));
      return { kind: 'duplicate', state: claim.state };
    }
    if (claim?.kind === 'in_progress') {
      logger.info('duplicate delivery: another attempt holds this destination', { destination: target.name, outcome: 'in_progress' });
      return { kind: 'in_progress', retryAfterSeconds: claim.retryAfterSeconds };
    }

    const result = await delivery.first(deliveryId, target, message, remainingTimeMs);
    if (claim) {
      const state = recorded(result);
      try {
        await withDeadline('dedup_table', callBudget(remainingTimeMs), (signal) =>
          state ? ledger.record(id, state, signal) : ledger.release(id, token, signal),
        );
      } catch (error) {
        // A claim left behind expires by itself (claimHoldSeconds); a lost record only means a re-send posts again.
        unavailable(error, target.name);
      }
    }
    return result;
  };
}

/** For delivery-retry: what became of a queued alert, so that a re-send knows. */
export function retryLedger(deps: { ledger: DeliveryLedger; logger: Logger; metrics?: Metrics }) {
  const metrics = deps.metrics ?? noMetrics;
  const settle = async (message: WebhookMessage, destination: string, outcome: 'delivered' | 'parked', remainingTimeMs: () => number) => {
    const id = deliveryRecordId(message, destination);
    try {
      await withDeadline('dedup_table', budget(remainingTimeMs, LEDGER_CALL_BUDGET_MS, SAFETY_MARGIN_MS), (signal) =>
        outcome === 'delivered' ? deps.ledger.record(id, 'delivered', signal) : deps.ledger.release(id, undefined, signal),
      );
    } catch (error) {
      deps.logger.warn('dedup table unavailable; a re-send of this alert may post it again', { reason: 'dedup_unavailable', error: errorName(error), destination });
      metrics.add(dedupUnavailableMetric());
    }
  };
  return { settle };
}
export type RetryLedger = ReturnType<typeof retryLedger>;
