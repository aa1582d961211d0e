import { hash } from 'node:crypto';
import type { ChatService } from '../../chat/service.js';
import type { KindSettings } from '../kind.js';
import type { WebhookDestination } from './config.js';
import type { WebhookPost } from './event.js';

/**
 * A webhook destination's one service. `format` only keeps what it was given, behind a function
 * (event.ts says why); the event is built, signed and posted by a module imported on the first
 * post, with the port's posting, so a configuration without a webhook never loads it.
 */
export const webhookServices = ({ posting }: KindSettings): { webhook: ChatService<WebhookPost, WebhookDestination> } => ({
  webhook: {
    format:
      (...alert) =>
      () => ({ destination: alert[1], alert }),
    post: async (url, post, options) => (await import('./lazy-webhook-post.js')).postWebhook(posting, url, post, options),
    // A receiver documents no pace of its own; a 429's Retry-After holds its URL for the time it asks.
    minIntervalMs: 0,
    // Hashed: a receiver's URL may hold a token of its own, and a pace key may be named in a log line.
    paceKey: (url) => `webhook:${hash('sha256', url)}`,
  },
});
