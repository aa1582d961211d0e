import type { CostCenterRef } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';
import type { MarkedState } from '../vocabulary/triage.js';

/**
 * Where an anomaly's opening message is, for a kind that edits, threads or comments under it:
 * the place (a Slack channel, a Jira project) and the message there (a Slack `ts`, an issue key).
 */
export interface MessageRef {
  channel: string;
  ts: string;
}

/**
 * Where a post stands in its anomaly's life (docs/reliability.md, "One living message"). A
 * follow-up names when the anomaly was first seen and how many updates it has had with this
 * one; `opening` is where its first message is, for services that can edit and thread;
 * `afterSnooze` that it is the first post since a snooze of the anomaly here ended (a pager,
 * whose alert the snooze acknowledged, pages again).
 */
export type AnomalyPost =
  | { kind: 'opening' }
  | { kind: 'follow_up'; firstSeenAt: string; updates: number; opening?: MessageRef; triage?: TriageMark; afterSnooze?: true };

/** What someone decided about an anomaly at a destination (lib/triage), as its follow-ups show it. */
export interface TriageMark {
  state: MarkedState;
  /** A name typed on the triage page or a Slack user's name: untrusted text, escaped like the sender's. */
  by: string;
  /** Epoch seconds. */
  at: number;
}

/** What a click carries back of the alert beside its anomaly, for the cost event "Expected" writes (the table holds no alert text). */
export interface ClickSubject {
  destination: string;
  title: string;
  accountId: string;
}

/**
 * What a message offers for triage: a Slack app message carries buttons whose value names its
 * anomaly (and `about` it), every other message a link to the anomaly's signed triage page.
 */
export type TriageControls = { buttons: string; about?: ClickSubject } | { link: string };

export const OPENING: AnomalyPost = { kind: 'opening' };

/** What a chat service's answer to one post means for the alert. */
export type PostOutcome =
  /** `opened`: a service that can edit posted a new opening message there. */
  | { kind: 'delivered'; opened?: MessageRef }
  /** May succeed later (throttling, 5xx, timeout, network); `retryAfterMs` when the service said how long to wait. */
  | { kind: 'retryable'; reason: string; retryAfterMs?: number }
  /** Trying again cannot help: the webhook, channel or payload is refused. */
  | { kind: 'refused'; reason: string };

export interface PostOptions {
  /** How long this post may take at the most; the core fits it into the invocation's remaining time. */
  timeoutMs: number;
  /** The Slack app's bot token, for app destinations only; never logged, queued or stored. */
  botToken?: string;
}

/**
 * Everything that differs between chat services. A new service is one of these: a
 * formatter, a poster whose answer classifier yields a `PostOutcome`, and its pace. The
 * delivery core, the relay and the retry worker stay as they are.
 */
/** What else a post knows of its alert at the destination, for kinds that name it in their payload. */
export interface PostContext {
  /** The anomaly at this destination (`anomalyRecordId`): PagerDuty's `dedup_key`, for one. Computed when read. */
  readonly anomalyId: string;
  /** The cost centers that cover the alert's account, where the owner directory was read and knows them. */
  readonly costCenters?: readonly CostCenterRef[] | undefined;
  /** The destination's name in the configuration, for kinds whose posts are data that says where it went (an event's detail). */
  readonly destination: string;
  /** The post is an escalation (lib/escalation): every kind says where the anomaly waited and for how long. */
  readonly escalation?: EscalationMark | undefined;
  /** A thread of its own (a digest's, lib/group) where the kind threads its posts, instead of its alert's anomaly's. */
  readonly thread?: string | undefined;
  /**
   * The picture of the account's daily cost (`https://<origin>/chart/<token>`, docs/platform.md),
   * where the configuration asks for one and the owner directory knows the account: every kind shows it.
   */
  readonly chartUrl?: string | undefined;
}

/** Where an escalated anomaly waited unacknowledged (a destination's name), and how long it was given there. */
export interface EscalationMark {
  from: string;
  afterMinutes: number;
}

export interface ChatService<Payload = unknown, Destination = Readonly<Record<string, unknown>>> {
  /** The poster's answer classifier names reasons; the formatter owns escaping and size limits. */
  format(message: WebhookMessage, destination: Destination, anomaly?: AnomalyPost, triage?: TriageControls, context?: PostContext): Payload;
  /** `address`: the webhook URL, or a Slack app destination's channel id. */
  post(address: string, payload: Payload, options: PostOptions): Promise<PostOutcome>;
  /** The least time between two posts under one `paceKey`, as the service documents its limit. */
  minIntervalMs: number;
  /** What the service's rate limit counts: the webhook for Slack and Teams, the space for Google Chat, the channel for a Slack app. */
  paceKey(address: string): string;
}
