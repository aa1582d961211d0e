import type { ChatKind } from '../kind.js';
import { endpointVariable } from '../options.js';
import { slackAppService } from './app-service.js';
import { type SlackDestination, slackDestinationSchema } from './config.js';
import { slackService } from './service.js';
/** Slack: incoming webhooks, and app destinations (a channel, posted to with the Web API). */
export const slackKind = {
  type: 'slack',
  label: 'Slack',
  chat: true as const,
  summaries: true,
  readBy: 'people',
  schema: slackDestinationSchema,
  addressKeys: ['url', 'channel'],
  ownsHost: (host) => host === 'hooks.slack.com',
  /** Slack's Web API for app destinations; the bot token travels there. */
  environment: { SLACK_API_URL: endpointVariable },
  addressOf: (destination) => destination.url ?? destination.channel ?? '',
  services: ({ posting, env }) => {
    const apiUrl = env?.['SLACK_API_URL'];
    const { transport } = posting;
    return {
      slack: slackService(transport),
      slackApp: slackAppService({ transport, ...(typeof apiUrl === 'string' ? { apiUrl } : {}) }),
    };
  },
  serviceKey: (destination) => (destination.channel === undefined ? 'slack' : 'slackApp'),
  app: (destination, settings) =>
    destination.channel === undefined || !settings ? undefined : { botToken: settings.botToken, buttons: Boolean(settings.signingSecret) },
  needsApp: (destination) => (destination.channel === undefined ? undefined : 'names a Slack channel'),
  editsOpening: (destination) => destination.channel !== undefined,
  links: (destination) => destination.channel === undefined,
  interactionPath: '/slack/interactions',
  extras: async () => (await import('./lazy-slack-extras.js')).extras,
} satisfies ChatKind<SlackDestination>;
