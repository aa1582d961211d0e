import type * as z from 'zod/mini';
import type { AwsPorts } from '../aws/ports.js';
import { postingOver } from '../chat/post-json.js';
import type { ChatService } from '../chat/service.js';
import type { NodeFetch } from '../transport/fetch-over-node-http.js';
import { eventBridgeKind } from './eventbridge/kind.js';
import { googleChatKind } from './googlechat/kind.js';
import { jiraKind } from './jira/kind.js';
import type { DestinationKind, KindEnvironment } from './kind.js';
import { pagerDutyKind } from './pagerduty/kind.js';
import { slackKind } from './slack/kind.js';
import { teamsKind } from './teams/kind.js';
import { webhookKind } from './webhook/kind.js';

/**
 * Every destination kind, one line each: the one place a kind is registered. Its type, its key
 * here and in DESTINATION_TYPES come from the kind itself (whose `type` is its schema's literal,
 * KindTypeOf), so nothing else names it. A kind that leaves a part of DestinationKind out does not
 * compile; two kinds of one type fail the contract suite (test/unit/kinds-contract.test.ts).
 */
const REGISTERED = registry(slackKind, teamsKind, googleChatKind, pagerDutyKind, jiraKind, eventBridgeKind, webhookKind);

/** A kind as its own schema's destinations make it: anything else is no DestinationKind and does not compile here. */
type OfItsSchema<Kind> = Kind extends { schema: z.ZodMiniType<infer Read extends object, unknown> }
  ? Kind extends DestinationKind<Read>
    ? Kind
    : DestinationKind<Read>
  : DestinationKind;

function registry<const Kinds extends readonly object[]>(...kinds: Kinds & { readonly [I in keyof Kinds]: OfItsSchema<Kinds[I]> }): Kinds {
  return kinds;
}

type RegisteredKind = (typeof REGISTERED)[number];

/** The destination kinds a configuration may name, in the order the registry lists them. */
export type DestinationType = RegisteredKind['type'];
export const DESTINATION_TYPES: readonly DestinationType[] = REGISTERED.map((kind) => kind.type);

/** Every kind by its type. */
export const KINDS = Object.fromEntries(REGISTERED.map((kind) => [kind.type, kind])) as {
  readonly [Kind in RegisteredKind as Kind['type']]: Kind;
};

/** One destination, as its kind's schema validated it. */
export type Destination = { [T in DestinationType]: (typeof KINDS)[T] extends DestinationKind<infer D> ? D : never }[DestinationType];

/** The kind of a URL with no `type`: the contract's rule for a host that names no service. */
const URL_FALLBACK: DestinationType = 'slack';

/** The registered kinds as the port has them, each with its type. */
const kindsOf = () => REGISTERED as ReadonlyArray<DestinationKind<object> & { type: DestinationType }>;

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

/** The kind whose own webhook host the URL names; undefined for any other host (a proxy, a console destination). */
export function serviceOfHost(url: string): DestinationType | undefined {
  const host = hostOf(url) ?? '';
  return kindsOf().find((kind) => kind.ownsHost?.(host))?.type;
}

/** The type a URL's host stands for; anything else is taken for Slack (the contract's rule). */
export const typeFromUrl = (url: string): DestinationType => serviceOfHost(url) ?? URL_FALLBACK;

/**
 * The type of a destination as configured: its `type`, or, for kinds that may leave it out, the
 * kind its URL's host names, or the kind whose address key it has (`channel` is Slack's).
 */
export function destinationType(destination: object): DestinationType {
  // A destination is asked for its kind many times per delivery; a URL's host is parsed once.
  const known = typesOf.get(destination);
  if (known) return known;
  const type = typeOfDestination(destination);
  typesOf.set(destination, type);
  return type;
}

/** Configured destinations are parsed once and never changed: their types are kept beside them. */
const typesOf = new WeakMap<object, DestinationType>();

function typeOfDestination(destination: object): DestinationType {
  const { type, url } = destination as { type?: unknown; url?: unknown };
  if (typeof type === 'string' && (DESTINATION_TYPES as readonly string[]).includes(type)) return type as DestinationType;
  if (typeof url === 'string') return typeFromUrl(url);
  const byKey = kindsOf().find((kind) => kind.ownsHost && kind.addressKeys.some((key) => key !== 'url' && Object.hasOwn(destination, key)));
  return byKey?.type ?? URL_FALLBACK;
}

/** The kind of a destination. */
export const kindOf = (destination: object): DestinationKind<object> => KINDS[destinationType(destination)];

/**
 * Whether an alert at `name` keeps the body as the platform sent it: its kind passes that on, or a
 * destination its escalations lead to does (an escalation job carries the alert's message along).
 */
export function keepsBodyAsSent(destinations: Readonly<Record<string, object>>, name: string): boolean {
  const seen = new Set<string>();
  for (let at: string | undefined = name; at !== undefined && !seen.has(at); ) {
    seen.add(at);
    const destination: object | undefined = destinations[at];
    if (!destination) return false;
    if (kindOf(destination).passesOnReceived) return true;
    at = (destination as { escalate?: { to: string } }).escalate?.to;
  }
  return false;
}

/** How long a chat destination groups its alerts; undefined for one that posts each at once, and for every other kind. */
export const groupWaitOf = (destination: object): number | undefined =>
  kindOf(destination).chat ? (destination as { group?: { waitSeconds: number } }).group?.waitSeconds : undefined;

/** Where a post to the destination goes: the webhook URL, a channel, a routing key, a bus. */
export const addressOf = (destination: object): string => kindOf(destination).addressOf(destination);

type ServicesOf<T extends DestinationType> = ReturnType<(typeof KINDS)[T]['services']>;
type Intersection<U> = (U extends unknown ? (all: U) => void : never) extends (all: infer I) => void ? I : never;

/** Every service of every kind, by its key (`serviceKey`). */
export type ChatServices = Readonly<Record<keyof Intersection<ServicesOf<DestinationType>>, ChatService>>;

/** The function settings every kind reads, for the functions that post (their environment schemas spread it). */
export const KIND_ENVIRONMENT = Object.assign({}, ...kindsOf().map((kind) => kind.environment)) as Intersection<
  { [T in DestinationType]: (typeof KINDS)[T]['environment'] }[DestinationType]
>;

/**
 * Every service of every kind; they post over node:http(s) unless given another transport, and
 * call AWS through the function's AWS port where one is given.
 */
export function createChatServices(transport?: NodeFetch, env?: KindEnvironment, aws?: AwsPorts): ChatServices {
  const settings = { posting: postingOver(transport), env, aws };
  return Object.assign({}, ...kindsOf().map((kind) => kind.services(settings))) as ChatServices;
}

/** The service that posts to a destination. */
export function serviceFor(services: ChatServices, destination: object): ChatService {
  const service = (services as Readonly<Record<string, ChatService>>)[kindOf(destination).serviceKey(destination)];
  if (!service) throw new Error(`no service for a ${destinationType(destination)} destination`);
  return service;
}
