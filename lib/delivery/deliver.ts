import type { AnomalyPost, ChatService, EscalationMark, MessageRef, PostContext, PostOutcome, TriageControls } from '../chat/service.js';
import type { Destination, RelayConfig } from '../config/schema.js';
import type { DigestPageAnomaly } from '../format/digest-token.js';
import type { Logger } from '../log/logger.js';
import { anomalyRecordId } from '../message/anomaly.js';
import type { CostCenterRef } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';
import { type DeliveryMetricOutcome, deliveryMetric, type Metrics, noMetrics, parkedMetric } from '../metrics/metrics.js';
import type { AppSettings } from '../notify/kind.js';
import { addressOf, type ChatServices, destinationType, kindOf, serviceFor as serviceOfDestination } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import type { Sleep } from '../shared/sleep.js';
import { type Decision, decide } from './decide.js';
import { type DeliveryJob, newJob } from './job.js';
import type { DeadLetters, RetryQueue } from './queues.js';

export interface DeliveryPorts {
  services: ChatServices;
  /** Time one post may take at the most; less when the invocation has less left. */
  postTimeoutMs: number;
  /** Where retryable failures wait for delivery-retry; without it they are the sender's to retry (503). */
  retryQueue?: RetryQueue;
  deadLetters?: DeadLetters;
  logger: Logger;
  /** Counts what became of each alert; nothing is counted without it. */
  metrics?: Metrics;
  now: () => number;
  sleep: Sleep;
  /** What each message offers for triage (lib/triage-link); without it, messages offer nothing. */
  triage?: TriageControlsPort;
}

/**
 * What a post knows of its one alert beyond the message, carried along with queued work: where
 * its triage link leads, and the cost centers of its account. A digest names many alerts and has none.
 */
export interface AlertContext {
  /** `https://<API domain>`; without it a message carries no link (Slack app buttons need none). */
  origin?: string | undefined;
  /** Where the owner directory knows them (lib/owners): every message names them. */
  costCenters?: readonly CostCenterRef[] | undefined;
  /** An escalation's mark (lib/escalation): where the anomaly waited, said in the message. */
  escalation?: EscalationMark | undefined;
  /** A digest's own controls (its page's link, or none when present and undefined), offered instead of asking the triage port. */
  controls?: TriageControls | undefined;
  /** A digest's own thread, where the kind threads (PostContext.thread). */
  thread?: string | undefined;
}

/**
 * The triage controls for one alert at one destination: none, controls known at once, or work
 * that may read the link key and so gets a deadline. A failure only costs the message its
 * controls, never the alert.
 */
export type TriageControlsPort = ((alert: {
  target: Target;
  message: WebhookMessage;
  origin?: string | undefined;
}) => TriageControls | ((signal: AbortSignal) => Promise<TriageControls>) | undefined) & {
  /** How a digest at the target offers its anomalies for triage: a link to a page listing them; undefined where it cannot. */
  digest?: DigestTriagePort;
  /** The link of the picture of an alert's account's cost trend (lib/triage-link/chart.ts); undefined where there is no key. */
  chart?: ChartLinkPort;
};

/** Signs the link of an alert's cost-trend picture on the origin it arrived on (the link key may be read first). */
export type ChartLinkPort = (alert: { message: WebhookMessage; origin: string }) => ((signal: AbortSignal) => Promise<string>) | undefined;

/**
 * Where a digest can offer a link to a page listing its anomalies (the destination's messages
 * carry triage controls, the key is configured, the alerts arrived on an origin): what signs one.
 */
export type DigestTriagePort = (digest: { target: Target; origin: string; thread?: string | undefined }) => DigestLinkSigner | undefined;
export type DigestLinkSigner = (anomalies: readonly DigestPageAnomaly[], signal: AbortSignal) => Promise<string>;

/** The most the triage controls may take before a message goes without them; the key is read once per container. */
export const TRIAGE_CONTROLS_BUDGET_MS = 1_000;

/** A configured destination, by the name the configuration gives it. */
export interface Target {
  name: string;
  destination: Destination;
  /** The Slack app's bot token, for a destination that names a channel; from the configuration, never from a job. */
  botToken?: string;
  /** The Slack app takes clicks (`slack.signingSecret` is set): its messages carry the triage buttons. */
  buttons?: true;
  /** A quiet test delivery (lib/inbound/request.ts): its `destination` has neither mention, group nor escalation. */
  quiet?: true;
  /** Its messages carry a picture of the account's cost trend, where the owner directory knows the account (`platform.trend`). */
  trend?: true;
}

/**
 * A configured destination with what its kind takes from the app settings (a Slack app's bot
 * token, and the buttons when clicks are verified). A quiet test delivery gets the destination
 * without its mention.
 */
export function targetOf(
  name: string,
  configured: Destination,
  app: AppSettings | undefined,
  quiet = false,
  platform?: RelayConfig['platform'],
): Target {
  const plain = quiet ? { name, destination: quietly(configured), quiet: true as const } : { name, destination: configured };
  // A test pings no one and is about no account: no picture either.
  const base = platform?.trend && !quiet ? { ...plain, trend: true as const } : plain;
  const needs = kindOf(configured).app?.(configured, app);
  if (!needs) return base;
  return { ...base, botToken: needs.botToken, ...(needs.buttons ? { buttons: true as const } : {}) };
}

/**
 * A destination as a quiet test delivery is posted to: without its mention, and without its
 * group, so that the alert goes on its own and no digest it would have joined changes its mention;
 * and without its escalation, which would page whoever is on call for a test; and without its
 * weekly summary, which names anomalies, and a test is none.
 */
function quietly(configured: Destination): Destination {
  const {
    mention: _mention,
    group: _group,
    escalate: _escalate,
    summary: _summary,
    ...destination
  } = configured as Destination & { mention?: unknown; group?: unknown };
  return destination as Destination;
}

/** What became of one destination after the relay's first attempt. */
export type DeliveryResult =
  /** `opened`: where a new opening message now is (Slack app destinations). */
  (
    | { kind: 'delivered'; opened?: MessageRef }
    | { kind: 'queued'; reason: string }
    /** Waits in its destination's open group, to be posted in one message when the group closes (lib/group). */
    | { kind: 'grouped' }
    /** Someone snoozed its anomaly at this destination (lib/triage): not posted until the snooze ends. */
    | { kind: 'snoozed' }
    /** Refused for good; parked in the dead-letter queue when there is one. */
    | { kind: 'refused'; reason: string }
    /** Neither delivered nor stored anywhere: only the sender trying again can help. */
    | { kind: 'unheld'; reason: string; retryAfterMs?: number }
    /** A re-sent alert this destination already has, or that waits on the retry queue for it (lib/dedup). */
    | { kind: 'duplicate'; state: 'delivered' | 'queued' }
    /** Another attempt at the same alert holds this destination right now, for at most `retryAfterSeconds` (lib/dedup). */
    | { kind: 'in_progress'; retryAfterSeconds: number }
  ) & {
    /**
     * The destination has the alert or holds it, but the escalation its opening starts could not be
     * set waiting (lib/dedup, lib/escalation): the sender's re-send sets it, and posts nothing again.
     */
    escalationUnscheduled?: true;
  };

/** One alert for one destination, as the relay received it. */
export interface AlertForTarget {
  deliveryId: string;
  target: Target;
  message: WebhookMessage;
  /** Opening (the default) or follow-up of its anomaly at this destination (lib/dedup). */
  anomaly?: AnomalyPost;
  /** The origin the alert arrived on, where its triage link leads. */
  origin?: string | undefined;
  /** The cost centers that cover the alert's account (lib/owners), where known: every message names them. */
  costCenters?: readonly CostCenterRef[] | undefined;
  /** Delivered as an escalation from another destination (lib/escalation); its retries keep the mark. */
  escalation?: EscalationMark | undefined;
  /** An opening's first-seen time (epoch seconds) as the anomaly's record has it (lib/dedup), for a group to keep. */
  firstSeen?: number | undefined;
}

/** A relay's first attempt at one destination: the core's own, or the same behind the dedup ledger. */
export type FirstAttempt = (alert: AlertForTarget, budget: InvocationBudget) => Promise<DeliveryResult>;

/** A later attempt from the retry queue. */
export interface RetryAttempt {
  job: DeliveryJob;
  target: Target;
  /** Attempts made with this one, the relay's first included. */
  attempts: number;
  maxAttempts: number;
}

/** A message for the dead-letter queue, with why it waits there for a human. */
export interface Parcel {
  body: string;
  reason: string;
  destination?: string;
}

/** What the core itself produces; the dedup kinds come from lib/dedup. */
export type AttemptResult = Extract<DeliveryResult, { kind: 'delivered' | 'queued' | 'refused' | 'unheld' }>;
/** What a first attempt may produce: the core's own results, or a place in a group (lib/group). */
export type FirstResult = AttemptResult | { kind: 'grouped' };

export interface Delivery {
  /** The service for this destination's type. */
  serviceFor(destination: Destination): ChatService;
  /**
   * One post: format for the destination's service, post, classify the answer. With `alert` the
   * message offers its anomaly's triage controls and names its account's cost centers; a digest,
   * which names many alerts, does neither.
   */
  attempt(
    target: Target,
    message: WebhookMessage,
    budget: InvocationBudget,
    anomaly?: AnomalyPost,
    alert?: AlertContext,
  ): Promise<PostOutcome>;
  /** The relay's first attempt, with its consequences: queued for later, or parked. */
  first(alert: AlertForTarget, budget: InvocationBudget): Promise<FirstResult>;
  /** A later attempt from the retry queue: what to do next; parking is the caller's to apply with `park`. */
  again(retry: RetryAttempt, budget: InvocationBudget): Promise<Decision>;
  /** Parks a message for a human; false when it could not be parked (it must then stay where it is). */
  park(parcel: Parcel, budget: InvocationBudget): Promise<boolean>;
  /**
   * What signs the link of a digest at `target` whose alerts arrived on `origin`, within the
   * budget (undefined when signing fails: the digest then goes without it); undefined where a
   * digest there offers no link.
   */
  digestLinks?(
    target: Target,
    origin: string,
    thread?: string,
  ): ((anomalies: readonly DigestPageAnomaly[], budget: InvocationBudget) => Promise<string | undefined>) | undefined;
}

/** How long one post to a chat service may take when the environment does not say. */
export const DEFAULT_POST_TIMEOUT_MS = 5_000;

/** The post timeout a function's environment sets: `POST_TIMEOUT_MS`, or its older name `SLACK_TIMEOUT_MS`. */
export const postTimeoutFrom = (settings: { POST_TIMEOUT_MS?: number | undefined; SLACK_TIMEOUT_MS?: number | undefined }): number =>
  settings.POST_TIMEOUT_MS ?? settings.SLACK_TIMEOUT_MS ?? DEFAULT_POST_TIMEOUT_MS;

/** The most one SQS call (queue or park) may take; SQS answers in tens of milliseconds when it is well. */
export const QUEUE_CALL_BUDGET_MS = 2_000;

/** A refusal counts as parked: the alert waits for a human whether or not the dead-letter queue took it. */
const METRIC_OUTCOME: Readonly<Record<AttemptResult['kind'], DeliveryMetricOutcome>> = {
  delivered: 'delivered',
  queued: 'queued',
  refused: 'parked',
  unheld: 'unheld',
};

export function createDelivery(ports: DeliveryPorts): Delivery {
  const { logger } = ports;
  const metrics = ports.metrics ?? noMetrics;
  const serviceFor = (destination: Destination) => serviceOfDestination(ports.services, destination);
  // A post leaves room for the queue call that may follow it, so the answer is never late.
  const afterPost = ports.retryQueue || ports.deadLetters ? QUEUE_CALL_BUDGET_MS : 0;

  const controls = async (target: Target, message: WebhookMessage, budget: InvocationBudget, origin: string | undefined) => {
    const offer = ports.triage?.({ target, message, origin });
    // Most messages offer nothing or what is known at once: no deadline to set up for them.
    if (typeof offer !== 'function') return offer;
    try {
      return await budget.step('triage_controls', TRIAGE_CONTROLS_BUDGET_MS, offer);
    } catch (error) {
      logger.warn('message posted without its triage controls', { destination: target.name, error: errorReason(error) });
      return undefined;
    }
  };

  /**
   * The link of the account's cost-trend picture: where the target's messages carry one and the
   * owner directory knows the account (its cost centers came with the alert). Signed with the
   * triage controls' key, read once; a failure costs the message its picture, never the alert.
   */
  const chartUrl = async (target: Target, message: WebhookMessage, budget: InvocationBudget, alert: AlertContext | undefined) => {
    if (!target.trend || !alert?.origin || !alert.costCenters?.length) return undefined;
    const sign = ports.triage?.chart?.({ message, origin: alert.origin });
    if (!sign) return undefined;
    try {
      return await budget.step('triage_controls', TRIAGE_CONTROLS_BUDGET_MS, sign);
    } catch (error) {
      logger.warn('message posted without its cost-trend picture', { destination: target.name, error: errorReason(error) });
      return undefined;
    }
  };

  const attempt: Delivery['attempt'] = async (target, message, budget, anomaly, alert) => {
    const service = serviceFor(target.destination);
    // A digest says its controls itself (`controls`, even none): the port knows one alert's only.
    const [offered, chart] = await Promise.all([
      alert && 'controls' in alert ? alert.controls : alert ? controls(target, message, budget, alert.origin) : undefined,
      // A digest names many accounts: it carries no picture.
      alert && 'controls' in alert ? undefined : chartUrl(target, message, budget, alert),
    ]);
    const timeoutMs = Math.max(1, budget.ms(ports.postTimeoutMs, afterPost));
    const options = target.botToken === undefined ? { timeoutMs } : { timeoutMs, botToken: target.botToken };
    // Most kinds never read the anomaly's id: it is hashed only when one does.
    const context: PostContext = {
      get anomalyId() {
        return anomalyRecordId(message, target.name);
      },
      costCenters: alert?.costCenters,
      escalation: alert?.escalation,
      thread: alert?.thread,
      destination: target.name,
      ...(chart ? { chartUrl: chart } : {}),
    };
    return service.post(addressOf(target.destination), service.format(message, target.destination, anomaly, offered, context), options);
  };

  const park: Delivery['park'] = async ({ body, reason, destination }, budget) => {
    const { deadLetters } = ports;
    if (!deadLetters) {
      logger.error('alert cannot be delivered and no dead-letter queue is configured', { reason, destination });
      return false;
    }
    try {
      await budget.step('dead_letter_queue', QUEUE_CALL_BUDGET_MS, (signal) => deadLetters.park(body, reason, destination, signal));
    } catch (error) {
      logger.error('could not park an alert in the dead-letter queue', { reason, destination, error: errorReason(error) });
      return false;
    }
    logger.error('alert parked in the dead-letter queue', { reason, destination });
    metrics.add(parkedMetric(reason));
    return true;
  };

  /** Without a queue, one wait that the service asked for is worth it when it fits. */
  async function attemptWithOneWait(
    target: Target,
    message: WebhookMessage,
    budget: InvocationBudget,
    anomaly: AnomalyPost | undefined,
    alert: AlertContext,
  ): Promise<PostOutcome> {
    const outcome = await attempt(target, message, budget, anomaly, alert);
    if (outcome.kind !== 'retryable' || outcome.retryAfterMs === undefined) return outcome;
    if (!budget.fits(outcome.retryAfterMs + ports.postTimeoutMs + afterPost)) return outcome;
    await ports.sleep(outcome.retryAfterMs);
    return attempt(target, message, budget, anomaly, alert);
  }

  const first: Delivery['first'] = async (alert, budget) => {
    const result = await firstAttempt(alert, budget);
    // A delivered follow-up is counted as that, once, instead of as a delivery.
    const outcome = result.kind === 'delivered' && alert.anomaly?.kind === 'follow_up' ? 'follow_up' : METRIC_OUTCOME[result.kind];
    metrics.add(deliveryMetric(outcome, destinationType(alert.target.destination)));
    return result;
  };

  async function firstAttempt(
    { deliveryId, target, message, anomaly, origin, costCenters, escalation }: AlertForTarget,
    budget: InvocationBudget,
  ): Promise<AttemptResult> {
    const post = ports.retryQueue ? attempt : attemptWithOneWait;
    const outcome = await post(target, message, budget, anomaly, { origin, costCenters, escalation });
    const decision = decide(outcome, 1);
    if (decision.kind === 'delivered') return decision;
    const job = newJob(
      deliveryId,
      target.name,
      message,
      decision.reason,
      ports.now(),
      anomaly,
      origin,
      target.quiet,
      costCenters,
      escalation,
    );
    if (decision.kind === 'park') {
      await park({ body: JSON.stringify(job), reason: decision.reason, destination: target.name }, budget);
      return { kind: 'refused', reason: decision.reason };
    }
    const unheld: AttemptResult = {
      kind: 'unheld',
      reason: decision.reason,
      ...(decision.retryAfterMs !== undefined ? { retryAfterMs: decision.retryAfterMs } : {}),
    };
    const { retryQueue } = ports;
    if (!retryQueue) return unheld;
    try {
      await budget.step('retry_queue', QUEUE_CALL_BUDGET_MS, (signal) => retryQueue.enqueue(job, decision.delaySeconds, signal));
      return { kind: 'queued', reason: decision.reason };
    } catch (error) {
      logger.error('could not queue an alert for a later attempt', { destination: target.name, error: errorReason(error) });
      return unheld;
    }
  }

  const again: Delivery['again'] = async ({ job, target, attempts, maxAttempts }, budget) =>
    decide(
      await attempt(target, job.message, budget, job.anomaly, {
        origin: job.origin,
        costCenters: job.costCenters,
        escalation: job.escalation,
      }),
      attempts,
      maxAttempts,
    );

  const digestLinks: Delivery['digestLinks'] = (target, origin, thread) => {
    const sign = ports.triage?.digest?.({ target, origin, thread });
    if (!sign) return undefined;
    return async (anomalies, budget) => {
      try {
        return await budget.step('triage_controls', TRIAGE_CONTROLS_BUDGET_MS, (signal) => sign(anomalies, signal));
      } catch (error) {
        logger.warn('digest posted without its triage link', { destination: target.name, error: errorReason(error) });
        return undefined;
      }
    };
  };

  return { serviceFor, attempt, first, again, park, digestLinks };
}
