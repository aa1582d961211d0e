import type * as z from 'zod/mini';
import type { ChatService } from '../chat/service.js';
import type { WebhookMessage } from '../message/schema.js';
import type { NodeFetch } from '../transport/fetch-over-node-http.js';
import type { DestinationType } from '../vocabulary/destinations.js';

/** A function's environment as read (lib/shared/environment.ts), with the variables the kinds declare. */
export type KindEnvironment = Readonly<Record<string, unknown>>;

/** What a kind's services are built with: the transport to post over, and the function's environment. */
export interface KindSettings {
  /** node:http(s) unless a test or the benchmark gives another. */
  transport?: NodeFetch | undefined;
  env?: KindEnvironment | undefined;
}

/**
 * One destination kind: everything that differs between Slack, Teams, Google Chat and any kind
 * added later, in its own folder (`lib/notify/<type>/`), registered with one line in
 * `lib/notify/kinds.ts`. The relay, delivery-retry, triage and the scripts ask the kind; none of
 * them names a type. The compiler refuses a registered kind that leaves a part out.
 */
export interface DestinationKind<Destination extends object = object> {
  readonly type: DestinationType;
  /** How messages and configuration errors name the service: "Slack", "Teams", "Google Chat". */
  readonly label: string;
  /** A chat takes a `mention` and a `group` (storms folded into digests); other kinds refuse them. */
  readonly chat: boolean;
  /** One destination's configuration: a strict object (an unknown key is an error naming its path). */
  readonly schema: z.ZodMiniType<Destination, unknown>;
  /**
   * The keys that say where its posts go, the first one the kind's own: a key of another kind's
   * list is refused with a pointer to this one, and a destination without `type` is the kind
   * whose keys it has (a URL's host decides between kinds that share `url`).
   */
  readonly addressKeys: readonly [string, ...string[]];
  /** Its own webhooks' host, so that `type` may be left out; a kind without it needs `type`. */
  ownsHost?(host: string): boolean;
  /** The function settings it reads (`SLACK_API_URL`: tests point it at a loopback server). */
  readonly environment: Readonly<Record<string, z.ZodMiniType<unknown, unknown>>>;
  /** Where a post to the destination goes: a webhook URL, a channel, a routing key, a bus. */
  addressOf(destination: Destination): string;
  /** Its services, by key; most kinds have one (keyed by their type), Slack one per way of posting. */
  services(settings: KindSettings): Readonly<Record<string, ChatService>>;
  /** The key of the service that posts to this destination. */
  serviceKey(destination: Destination): string;
  /**
   * What posting to the destination takes from the configuration's app settings (the top-level
   * `slack`): the app's token, and whether its messages carry buttons (clicks can be verified).
   * Undefined for a destination that needs none.
   */
  app?(destination: Destination, settings: AppSettings | undefined): { botToken: string; buttons: boolean } | undefined;
  /** Why the destination cannot post without the app settings ("names a Slack channel"); undefined when it can. */
  needsApp?(destination: Destination): string | undefined;
  /**
   * A follow-up edits or threads under the opening's own message, so it must know where that is:
   * while the opening is being posted elsewhere, a follow-up waits for it a while.
   */
  editsOpening(destination: Destination): boolean;
  /** Its messages carry a "Triage" link to the signed page; an app with buttons needs none. */
  links(destination: Destination): boolean;
  /** The thread a follow-up from the triage page goes to, carried in the link (Google Chat's thread key). */
  threadOf?(message: WebhookMessage): string;
}

/** The configuration's app settings: the Slack app behind destinations that name a channel. */
export interface AppSettings {
  botToken: string;
  signingSecret?: string | undefined;
}
