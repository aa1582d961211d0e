import type { ChatKind } from '../kind.js';
import { isRetiredConnectorHost, type TeamsDestination, teamsDestinationSchema, within } from './config.js';
import { teamsService } from './service.js';

/** Microsoft Teams through a Workflows webhook. */
export const teamsKind = {
  type: 'teams',
  label: 'Teams',
  chat: true as const,
  summaries: true,
  readBy: 'people',
  schema: teamsDestinationSchema,
  addressKeys: ['url'],
  // Workflows webhooks live on Logic Apps and Power Platform hosts; retired connectors are still Teams', to be refused.
  ownsHost: (host) => within(host, 'logic.azure.com') || within(host, 'powerplatform.com') || isRetiredConnectorHost(host),
  environment: {},
  addressOf: (destination) => destination.url,
  services: ({ posting }) => ({ teams: teamsService(posting) }),
  serviceKey: () => 'teams',
  editsOpening: () => false,
  links: () => true,
  extras: async () => (await import('./lazy-teams-extras.js')).extras,
} satisfies ChatKind<TeamsDestination>;
