import type { AnomalyPost, PostContext, TriageControls } from '../../chat/service.js';
import type { WebhookMessage } from '../../message/schema.js';
import type { PagerDutySeverity } from './config.js';

export type PagerDutyAction = 'trigger' | 'acknowledge' | 'resolve';

/** A trigger's `payload`: what PagerDuty shows as the alert and its incident. */
export interface PagerDutyEventPayload {
  summary: string;
  source: string;
  severity: PagerDutySeverity;
  timestamp?: string;
  component?: string;
  group?: string;
  class?: string;
  custom_details?: Record<string, string | number>;
}

/** An Events API v2 event without its routing key, which the poster adds from the destination's address. */
export interface PagerDutyEvent {
  event_action: PagerDutyAction;
  /** The anomaly at this destination: what ties a trigger, its follow-ups and a triage action to one alert. */
  dedup_key?: string;
  payload?: PagerDutyEventPayload;
  links?: Array<{ href: string; text: string }>;
  /** Pictures the incident shows (PagerDuty's `images`, at the top level): the account's cost trend. */
  images?: Array<{ src: string; alt: string }>;
}

/**
 * What the service's `format` hands to its poster, as it got it (a list: the cold path carries
 * no names for it): made into an event only by the poster, which loads on the first post.
 */
export type PagerDutyAlert = [
  message: WebhookMessage,
  /** As configured; `warning` when not. */
  severity?: PagerDutySeverity | undefined,
  /** The opening when not said. */
  anomaly?: AnomalyPost | undefined,
  /** A link to the anomaly's signed Triage page (a kind with links gets no buttons). */
  triage?: TriageControls | undefined,
  /** The anomaly at this destination: the `dedup_key`. Without it PagerDuty makes a key of its own. */
  context?: PostContext | undefined,
];

/**
 * One post: an alert to make into its events, or events made already (a triage note), sent in
 * order: a resolve before the trigger that must page again.
 */
export type PagerDutyPost = PagerDutyAlert | { events: PagerDutyEvent[] };
