import type { OtherKind } from '../kind.js';
import { type WebhookDestination, webhookDestinationSchema } from './config.js';
import { webhookServices } from './service.js';

/** Any receiver of signed JSON (Standard Webhooks): n8n, Zapier, an internal service. */
export const webhookKind = {
  type: 'webhook',
  label: 'webhook',
  chat: false as const,
  summaries: true,
  readBy: 'programs',
  schema: webhookDestinationSchema,
  addressKeys: ['url'],
  environment: {},
  addressOf: (destination) => destination.url,
  services: webhookServices,
  serviceKey: () => 'webhook',
  editsOpening: () => false,
  links: () => true,
  // Code may read any member the platform sends, known to the relay or not.
  passesOnReceived: true,
  extras: async () => (await import('./lazy-webhook-extras.js')).extras,
} satisfies OtherKind<WebhookDestination>;
