import type { DestinationType } from '../config/destination-type.js';
import type { Destination } from '../config/schema.js';
import type { WebhookMessage } from '../message/schema.js';

/** What a chat service's answer to one post means for the alert. */
export type PostOutcome =
  | { kind: 'delivered' }
  /** May succeed later (throttling, 5xx, timeout, network); `retryAfterMs` when the service said how long to wait. */
  | { kind: 'retryable'; reason: string; retryAfterMs?: number }
  /** Trying again cannot help: the webhook, channel or payload is refused. */
  | { kind: 'refused'; reason: string };

export interface PostOptions {
  /** How long this post may take at the most; the core fits it into the invocation's remaining time. */
  timeoutMs: number;
}

/**
 * Everything that differs between chat services. A new service is one of these: a
 * formatter, a poster whose answer classifier yields a `PostOutcome`, and its pace. The
 * delivery core, the relay and the retry worker stay as they are.
 */
export interface ChatService<Payload = unknown> {
  /** The poster's answer classifier names reasons; the formatter owns escaping and size limits. */
  format(message: WebhookMessage, destination: Destination): Payload;
  post(url: string, payload: Payload, options: PostOptions): Promise<PostOutcome>;
  /** The least time between two posts under one `paceKey`, as the service documents its limit. */
  minIntervalMs: number;
  /** What the service's rate limit counts: the webhook for Slack and Teams, the space for Google Chat. */
  paceKey(url: string): string;
}

export type ChatServices = Readonly<Record<DestinationType, ChatService>>;
