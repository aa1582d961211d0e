import { randomUUID } from 'node:crypto';
import { type AnomalyPost, type MessageRef, OPENING, type TriageMark } from '../chat/service.js';
import type { AlertForTarget, Delivery, DeliveryResult, FirstAttempt, FirstResult } from '../delivery/deliver.js';
import { isoSeconds } from '../format/alert.js';
import type { Logger } from '../log/logger.js';
import { anomalyRecordId, isReport } from '../message/anomaly.js';
import type { WebhookMessage } from '../message/schema.js';
import { dedupUnavailableMetric, deliveryMetric, escalationMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { destinationType, kindOf } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { isMarked } from '../vocabulary/triage.js';
import { deliveryRecordId } from './fingerprint.js';
import {
  type AnomalyStart,
  type AnomalyState,
  type AnomalyTriage,
  claimHoldSeconds,
  type DeliveryLedger,
  LEDGER_CALL_BUDGET_MS,
  type Parking,
  type QueuedClaimOutcome,
  type QueuedJob,
  snoozeEndedUnposted,
  snoozeHolds,
} from './ledger.js';

interface LedgerDependencies {
  ledger: DeliveryLedger;
  logger: Logger;
  metrics?: Metrics;
}

export interface OnceDependencies extends LedgerDependencies {
  delivery: Delivery;
  now?: () => number;
  /** Told of each anomaly post that a destination with `escalate` now holds (lib/escalation waits on them). */
  held?: AnomalyHeld;
}

/**
 * An anomaly's post that its destination now has or holds for it (`queued` also when it waits in a
 * group), with what the table said of the anomaly before it. False when the escalation its opening
 * starts could not be set waiting, so that only trying again can set it. Never throws.
 */
export type AnomalyHeld = (
  alert: AlertForTarget,
  start: AnomalyStart,
  held: 'delivered' | 'queued',
  budget: InvocationBudget,
) => Promise<boolean>;

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
/** A grouped alert waits for its group's closing as a queued one waits for its retry. */
const recorded = (result: FirstResult): 'delivered' | 'queued' | undefined =>
  result.kind === 'delivered' ? 'delivered' : result.kind === 'queued' || result.kind === 'grouped' ? 'queued' : undefined;

/**
 * How long a follow-up for a Slack app destination waits for its opening's message to be known
 * (another attempt is posting it); after that the opening is taken for lost and the follow-up
 * is posted as a new message, which then becomes the one that is edited.
 */
export const OPENING_PENDING_SECONDS = 60;
/** What a follow-up that waits for its opening asks the sender to wait. */
export const OPENING_WAIT_SECONDS = 5;

/** What its follow-ups say someone decided: acknowledged or expected; a reopened or lapsed snooze says nothing. */
function markOf(triage: AnomalyTriage | undefined): TriageMark | undefined {
  if (!triage || !isMarked(triage.state)) return undefined;
  return { state: triage.state, by: triage.by ?? 'someone', at: triage.at ?? 0 };
}

/** What a follow-up says of what was decided about its anomaly: the mark, or that a snooze ended since the last post. */
function decided(state: AnomalyState, nowSeconds: number): Pick<FollowUp, 'triage' | 'afterSnooze'> {
  const mark = markOf(state.triage);
  return {
    ...(mark ? { triage: mark } : {}),
    ...(snoozeEndedUnposted(state, nowSeconds) ? { afterSnooze: true as const } : {}),
  };
}

type FollowUp = Extract<AnomalyPost, { kind: 'follow_up' }>;

const followUpOf = (state: AnomalyState, nowSeconds: number): AnomalyPost => ({
  kind: 'follow_up',
  firstSeenAt: isoSeconds(state.firstSeen),
  updates: state.followUps + 1,
  ...(state.opening ? { opening: state.opening } : {}),
  ...decided(state, nowSeconds),
});

/** What the anomaly's state learns from a post: where a new opening message is, and one more follow-up. */
async function settleAnomaly(
  ledger: DeliveryLedger,
  id: string,
  anomaly: AnomalyPost,
  outcome: 'delivered' | 'failed',
  opened: MessageRef | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (outcome === 'failed') {
    if (anomaly.kind === 'opening') await ledger.forgetAnomaly(id, signal);
    return;
  }
  if (opened) await ledger.anomalyOpened(id, opened, signal);
  if (anomaly.kind === 'follow_up') await ledger.anomalyFollowedUp(id, signal);
}

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
  const now = deps.now ?? Date.now;

  /**
   * Tells the destination's escalation of a post it holds. False when the wait an opening starts
   * could not be set: then said on the anomaly's item, so that a re-send sets it, and counted. A
   * follow-up's wait that could not be set leaves the one already waiting, with older content.
   */
  const escalationSet = async (alert: AlertForTarget, start: AnomalyStart, held: 'delivered' | 'queued', budget: InvocationBudget) => {
    const { target } = alert;
    if (!deps.held || !target.destination.escalate || (await deps.held(alert, start, held, budget))) return true;
    if (start.kind !== 'opened' || start.firstSeen === undefined) return true;
    const { firstSeen } = start;
    metrics.add(escalationMetric('unscheduled', destinationType(target.destination)));
    const anomalyId = anomalyRecordId(alert.message, target.name);
    await step(budget, target.name, async (signal) => (await ledger.escalations()).escalationUnscheduled(anomalyId, firstSeen, signal));
    return false;
  };

  return async (alert, budget): Promise<DeliveryResult> => {
    const { target } = alert;
    const id = deliveryRecordId(alert.message, target.name);
    const token = randomUUID();
    const hold = { token, holdSeconds: claimHoldSeconds(budget.remainingMs()) };
    const anomalyId = anomalyRecordId(alert.message, target.name);
    // What a weekly summary shows of the anomaly: kept on its item only where the destination has
    // one, and only for an anomaly (a report is a digest of its own).
    const summary =
      target.destination.summary && !isReport(alert.message)
        ? {
            destination: target.name,
            message: alert.message,
            origin: alert.origin,
            thread: kindOf(target.destination).threadOf?.(alert.message),
          }
        : undefined;
    // Side by side, so the post still waits for one table round trip, not two.
    const [claim, started] = await Promise.all([
      step(budget, target.name, (signal) => ledger.claim(id, hold, signal)),
      budget
        .step('dedup_table', LEDGER_CALL_BUDGET_MS, (signal) => ledger.startAnomaly(anomalyId, signal, summary))
        .then(
          (value): { value: AnomalyStart } | { error: unknown } => ({ value }),
          (error: unknown) => ({ error }),
        ),
    ]);
    // One outage is one warning: the anomaly's failure is told only when the claim got through.
    const start = 'value' in started ? started.value : undefined;
    if (claim && 'error' in started) await step(budget, target.name, () => Promise.reject(started.error));
    if (claim && claim.kind !== 'claimed' && start?.kind === 'opened') {
      // A re-send opened an anomaly whose delivery is done or under way elsewhere: that one is not ours to keep.
      await step(budget, target.name, (signal) => ledger.forgetAnomaly(anomalyId, signal));
    }
    if (claim?.kind === 'done') {
      logger.info('duplicate delivery: this destination already has it', {
        destination: target.name,
        state: claim.state,
        outcome: 'duplicate',
      });
      metrics.add(deliveryMetric('duplicate', destinationType(target.destination)));
      // A re-send of an anomaly whose opening's wait could not be set: it sets the wait, and posts nothing.
      if (start?.kind === 'existing' && start.state.escalation === 'unscheduled') {
        const { firstSeen, triage } = start.state;
        const opening: AnomalyStart = { kind: 'opened', firstSeen, ...(triage ? { triage } : {}) };
        if (!(await escalationSet(alert, opening, claim.state, budget))) {
          return { kind: 'duplicate', state: claim.state, escalationUnscheduled: true };
        }
        await step(budget, target.name, async (signal) => (await ledger.escalations()).escalationScheduled(anomalyId, firstSeen, signal));
      }
      return { kind: 'duplicate', state: claim.state };
    }
    if (claim?.kind === 'in_progress') {
      logger.info('duplicate delivery: another attempt holds this destination', { destination: target.name, outcome: 'in_progress' });
      return { kind: 'in_progress', retryAfterSeconds: claim.retryAfterSeconds };
    }

    // Without the table every delivery is an opening: an alert is never held back for its state.
    let anomaly: AnomalyPost = OPENING;
    if (claim && start) {
      const triage = start.kind === 'existing' ? start.state.triage : start.triage;
      if (snoozeHolds(triage, Math.floor(now() / 1000))) {
        // Released, not recorded: a re-send after the snooze ends is posted. An opening that posts
        // nothing is no opening; the snooze stays.
        await Promise.all([
          step(budget, target.name, (signal) => ledger.release(id, token, signal)),
          start.kind === 'opened' ? step(budget, target.name, (signal) => ledger.forgetAnomaly(anomalyId, signal)) : undefined,
        ]);
        logger.info('anomaly is snoozed at this destination; not posted', { destination: target.name, outcome: 'snoozed' });
        metrics.add(deliveryMetric('snoozed', destinationType(target.destination)));
        return { kind: 'snoozed' };
      }
      if (start.kind === 'existing') {
        const waiting = kindOf(target.destination).editsOpening(target.destination) && !start.state.opening;
        if (waiting && Math.floor(now() / 1000) - start.state.firstSeen < OPENING_PENDING_SECONDS) {
          await step(budget, target.name, (signal) => ledger.release(id, token, signal));
          logger.info('follow-up waits for its opening message', { destination: target.name, outcome: 'in_progress' });
          return { kind: 'in_progress', retryAfterSeconds: OPENING_WAIT_SECONDS };
        }
        anomaly = followUpOf(start.state, Math.floor(now() / 1000));
      }
    }

    const firstSeen = start?.kind === 'opened' ? start.firstSeen : undefined;
    const result = await delivery.first({ ...alert, anomaly, ...(firstSeen !== undefined ? { firstSeen } : {}) }, budget);
    if (claim) {
      const state = recorded(result);
      const outcome = result.kind === 'delivered' ? 'delivered' : 'failed';
      const opened = result.kind === 'delivered' ? result.opened : undefined;
      // Independent items, written side by side. A claim left behind expires by itself
      // (claimHoldSeconds); a lost record only means a re-send posts again.
      await Promise.all([
        step(budget, target.name, (signal) => (state ? ledger.record(id, state, signal) : ledger.release(id, token, signal))),
        state === 'queued'
          ? undefined
          : step(budget, target.name, (signal) => settleAnomaly(ledger, anomalyId, anomaly, outcome, opened, signal)),
      ]);
      if (state && start && !(await escalationSet(alert, start, state, budget))) return { ...result, escalationUnscheduled: true };
    }
    if (anomaly.kind === 'follow_up' && result.kind === 'delivered') {
      logger.info('follow-up of an anomaly delivered', { destination: target.name, updates: anomaly.updates, outcome: 'follow_up' });
    }
    return result;
  };
}

/**
 * A follow-up that waited on the retry queue or in a group and is now delivered: its destination's
 * escalation is told as the relay tells it of one it delivers, so that the escalation carries this
 * content rather than an older one. The anomaly's state is the one the follow-up was posted with.
 */
export async function followUpDelivered(held: AnomalyHeld | undefined, alert: AlertForTarget, budget: InvocationBudget): Promise<void> {
  const { anomaly } = alert;
  if (!held || anomaly?.kind !== 'follow_up' || !alert.target.destination.escalate) return;
  const firstSeen = Date.parse(anomaly.firstSeenAt) / 1000;
  if (!Number.isInteger(firstSeen)) return;
  const state: AnomalyState = {
    firstSeen,
    followUps: anomaly.updates - 1,
    ...(anomaly.opening ? { opening: anomaly.opening } : {}),
    ...(anomaly.triage ? { triage: anomaly.triage } : {}),
  };
  await held(alert, { kind: 'existing', state }, 'delivered', budget);
}

/**
 * What became of a queued alert at one destination, as delivery-retry tells the ledger; `queued`:
 * it waits on the queue again; `parked`: it waits in the dead-letter queue, as its body says
 * (`parked`: the time of its job's first attempt and its parking's token).
 */
export type Settlement = {
  message: WebhookMessage;
  destination: string;
  /** The job's place in its anomaly (an opening when absent), and where a new opening message is. */
  anomaly?: AnomalyPost;
  opened?: MessageRef;
} & ({ outcome: 'delivered' | 'queued' } | { outcome: 'parked'; parked: Parking });

/** For delivery-retry: what became of a queued alert, so that a re-send knows. */
export function retryLedger(deps: LedgerDependencies & { now?: () => number }) {
  const step = ledgerStep(deps, 'dedup table unavailable; a re-send of this alert may post it again');
  const now = deps.now ?? Date.now;
  const reading = ledgerStep(deps, 'dedup table unavailable; the follow-up is posted as it was queued');
  /**
   * A queued follow-up as its anomaly stands now: marked with what was decided since it was
   * queued, and whether a snooze ended since the last post. As queued when the table cannot say.
   */
  const followUpNow = async (message: WebhookMessage, destination: string, followUp: FollowUp, budget: InvocationBudget) => {
    const state = await reading(budget, destination, (signal) => deps.ledger.readAnomaly(anomalyRecordId(message, destination), signal));
    if (!state) return followUp;
    const { triage: _mark, afterSnooze: _snooze, ...rest } = followUp;
    return { ...rest, ...decided(state, Math.floor(now() / 1000)) };
  };
  /**
   * A queued alert's next attempt claims it before it posts, as the relay's first attempt does, so
   * that a second copy of its job (SQS delivers at least once) neither posts it while this one
   * does nor after. A table that cannot say lets the attempt go ahead: at least once stays the floor.
   */
  const claim = async (
    message: WebhookMessage,
    destination: string,
    job: QueuedJob,
    budget: InvocationBudget,
  ): Promise<QueuedClaimOutcome> => {
    const id = deliveryRecordId(message, destination);
    const hold = { token: randomUUID(), holdSeconds: claimHoldSeconds(budget.remainingMs()), job };
    return (await step(budget, destination, (signal) => deps.ledger.claimQueued(id, hold, signal))) ?? { kind: 'claimed' };
  };
  const settle = async (settlement: Settlement, budget: InvocationBudget): Promise<void> => {
    const { message, destination, outcome, anomaly, opened } = settlement;
    const id = deliveryRecordId(message, destination);
    await step(budget, destination, (signal) =>
      settlement.outcome === 'parked'
        ? deps.ledger.park(id, settlement.parked, signal)
        : deps.ledger.record(id, settlement.outcome, signal),
    );
    // Still waiting: nothing became of the anomaly yet.
    if (outcome === 'queued') return;
    const anomalyId = anomalyRecordId(message, destination);
    const settled = outcome === 'delivered' ? 'delivered' : 'failed';
    await step(budget, destination, (signal) => settleAnomaly(deps.ledger, anomalyId, anomaly ?? OPENING, settled, opened, signal));
  };
  const withdraw = ledgerStep(deps, 'dedup table unavailable; an anomaly nobody could triage may still escalate');
  /**
   * An opening was posted where nobody could triage it (a digest without a link): its escalation
   * is settled as done, so that no job of this opening posts it.
   */
  const untriageable = async (
    { message, destination, firstSeen }: { message: WebhookMessage; destination: string; firstSeen: number },
    budget: InvocationBudget,
  ): Promise<void> => {
    const id = anomalyRecordId(message, destination);
    await withdraw(budget, destination, async (signal) => (await deps.ledger.escalations()).escalated(id, firstSeen, signal));
  };
  const release = ledgerStep(deps, 'dedup table unavailable; an anomaly posted after it waited does not escalate');
  /**
   * An opening that waited (in a group, or on the retry queue) is posted where someone can triage
   * it: its escalation, which waited for this, goes when due (at once, when that was earlier).
   * `firstSeen` where the caller knows it; a queued alert's job keeps none, and the opening is the
   * anomaly's as the table has it now.
   */
  const shown = async (
    { message, destination, firstSeen }: { message: WebhookMessage; destination: string; firstSeen?: number },
    budget: InvocationBudget,
  ): Promise<void> => {
    const id = anomalyRecordId(message, destination);
    await release(budget, destination, async (signal) => {
      const opening = firstSeen ?? (await deps.ledger.readAnomaly(id, signal))?.firstSeen;
      if (opening !== undefined) await (await deps.ledger.escalations()).openingShown(id, opening, signal);
    });
  };
  return { claim, settle, untriageable, shown, followUpNow };
}
export type RetryLedger = ReturnType<typeof retryLedger>;
