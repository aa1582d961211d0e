import type { ChatKind } from '../kind.js';
import { type GoogleChatDestination, googleChatDestinationSchema } from './config.js';
import { googleChatService } from './service.js';
import { threadKeyFor } from './thread.js';
/** Google Chat through a space's incoming webhook. */
export const googleChatKind = {
  type: 'googlechat',
  label: 'Google Chat',
  chat: true as const,
  summaries: true,
  readBy: 'people',
  schema: googleChatDestinationSchema,
  addressKeys: ['url'],
  ownsHost: (host) => host === 'chat.googleapis.com',
  environment: {},
  addressOf: (destination) => destination.url,
  services: ({ posting }) => ({ googlechat: googleChatService(posting) }),
  serviceKey: () => 'googlechat',
  editsOpening: () => false,
  links: () => true,
  threadOf: threadKeyFor,
  extras: async () => (await import('./lazy-googlechat-extras.js')).extras,
} satisfies ChatKind<GoogleChatDestination>;
