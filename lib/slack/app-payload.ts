import type { AnomalyPost } from '../chat/service.js';
import type { WebhookMessage } from '../message/schema.js';

/** What the app service posts: the validated alert and where it stands; formatting happens in the lazy client. */
export interface SlackAppPayload {
  message: WebhookMessage;
  mention?: string;
  anomaly: AnomalyPost;
}
