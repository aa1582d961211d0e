import { randomUUID } from 'node:crypto';
import { destinationType } from '../config/destination-type.js';
import type { AttemptResult, Delivery, DeliveryResult, FirstAttempt } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import type { WebhookMessage } from '../message/schema.js';
import { dedupUnavailableMetric, deliveryMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { deliveryRecordId } from './fingerprint.js';
import { type ClaimOutcome, claimHoldSeconds, type DeliveryLedger, LEDGER_CALL_BUDGET_MS } from './ledger.js';

interface LedgerDependencies {
  ledger: DeliveryLedger;
  logger: Logger;
  metrics?: Metrics;
}

export interface OnceDependencies extends LedgerDependencies {
  delivery: Delivery;
}

/**
 * One ledger call within its step's time. A ledger that fails never costs an alert: the
 * failure is logged with `consequence`, counted, and the call's value is undefined.
 */
function ledgerStep(deps: LedgerDependencies, consequence: string) {
  const metrics = deps.metrics ?? noMetrics;
  return async <T>(budget: InvocationBudget, destination: string, work: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> => {
    try {
      return await budget.step('dedup_table', LEDGER_CALL_BUDGET_MS, work);
    } catch (error) {
      deps.logger.warn(consequence, { reason: 'dedup_unavailable', error: errorReason(error), destination });
      metrics.add(dedupUnavailableMetric());
      return undefined;
    }
  };
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
  const step = ledgerStep(deps, 'dedup table unavailable; delivering without it');

  return async (alert, budget): Promise<DeliveryResult> => {
    const { target } = alert;
    const id = deliveryRecordId(alert.message, target.name);
    const token = randomUUID();
    const hold = { token, holdSeconds: claimHoldSeconds(budget.remainingMs()) };
    const claim: ClaimOutcome | undefined = await step(budget, target.name, (signal) => ledger.claim(id, hold, signal));
    if (claim?.kind === 'done') {
      logger.info('duplicate delivery: this destination already has it', {
        destination: target.name,
        state: claim.state,
        outcome: 'duplicate',
      });
      metrics.add(deliveryMetric('duplicate', destinationType(target.destination)));
      return { kind: 'duplicate', state: claim.state };
    }
    if (claim?.kind === 'in_progress') {
      logger.info('duplicate delivery: another attempt holds this destination', { destination: target.name, outcome: 'in_progress' });
      return { kind: 'in_progress', retryAfterSeconds: claim.retryAfterSeconds };
    }

    const result = await delivery.first(alert, budget);
    if (claim) {
      const state = recorded(result);
      // A claim left behind expires by itself (claimHoldSeconds); a lost record only means a re-send posts again.
      await step(budget, target.name, (signal) => (state ? ledger.record(id, state, signal) : ledger.release(id, token, signal)));
    }
    return result;
  };
}

/** What became of a queued alert at one destination, as delivery-retry tells the ledger. */
export interface Settlement {
  message: WebhookMessage;
  destination: string;
  outcome: 'delivered' | 'parked';
}

/** For delivery-retry: what became of a queued alert, so that a re-send knows. */
export function retryLedger(deps: LedgerDependencies) {
  const step = ledgerStep(deps, 'dedup table unavailable; a re-send of this alert may post it again');
  const settle = async ({ message, destination, outcome }: Settlement, budget: InvocationBudget): Promise<void> => {
    const id = deliveryRecordId(message, destination);
    await step(budget, destination, (signal) =>
      outcome === 'delivered' ? deps.ledger.record(id, 'delivered', signal) : deps.ledger.release(id, undefined, signal),
    );
  };
  return { settle };
}
export type RetryLedger = ReturnType<typeof retryLedger>;
