/** The chat services a destination can be. */
export const DESTINATION_TYPES = ['slack', 'teams', 'googlechat'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

const within = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** The service whose own webhook host the URL names; undefined for any other host (a proxy, a console destination). */
export function serviceOfHost(url: string): DestinationType | undefined {
  const host = hostOf(url) ?? '';
  if (host === 'hooks.slack.com') return 'slack';
  if (within(host, 'logic.azure.com') || within(host, 'powerplatform.com')) return 'teams';
  if (host === 'chat.googleapis.com') return 'googlechat';
  return undefined;
}

/**
 * The type a URL's host stands for (docs/ARCHITECTURE.md, the contract): Workflows webhooks live on Logic Apps
 * and Power Platform hosts, Google Chat's on one host; anything else is taken for Slack.
 */
export function typeFromUrl(url: string): DestinationType {
  return serviceOfHost(url) ?? 'slack';
}

interface Addressed {
  type?: DestinationType | undefined;
  url?: string | undefined;
  channel?: string | undefined;
}

/** The destination's chat service: as configured, or as its URL's host says; a channel is Slack's. */
export function destinationType(destination: Addressed): DestinationType {
  return destination.type ?? (destination.url === undefined ? 'slack' : typeFromUrl(destination.url));
}

/** A Slack app destination: a channel reached through the Web API, not a webhook. */
export const isSlackApp = (destination: Addressed): destination is Addressed & { channel: string } => destination.channel !== undefined;

/** Where a post goes: the webhook URL, or a Slack app destination's channel id (the schema ensures one of them). */
export const addressOf = (destination: Addressed): string => destination.url ?? destination.channel ?? '';

/** Office 365 connector webhooks, which Microsoft retired in 2026: a post there reaches no one. */
export function isRetiredTeamsConnector(url: string): boolean {
  const host = hostOf(url);
  return host !== undefined && within(host, 'webhook.office.com');
}
