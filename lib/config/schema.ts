// zod/mini: the same validation as classic zod at a fraction of its size and import time,
// which the relay pays on every cold start (bench/README.md measures it).
import * as z from 'zod/mini';
import '../validation/messages.js';
import type { DestinationKind } from '../notify/kind.js';
import { DESTINATION_TYPES, KINDS, type Destination as KindDestination, kindOf, serviceOfHost } from '../notify/kinds.js';
import { DESTINATION_OPTION_KEYS, type DestinationOptions, destinationOptionsSchema } from '../notify/options.js';
import { closestKey, type PathProblem, pathProblems } from '../shared/zod-issues.js';
import { isHttpsOrLoopbackUrl } from '../transport/allowed-url.js';

/** https everywhere; plain http only towards this machine, for local use and tests. */
const endpoint = z.string().check(z.refine(isHttpsOrLoopbackUrl, { message: 'must be an https URL (plain http only for loopback hosts)' }));
const nonEmpty = () => z.string().check(z.minLength(1));

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host']);

export const basicCredentialsSchema = z.strictObject({
  username: z.string().check(
    z.minLength(1),
    z.refine((v) => !v.includes(':'), { message: 'must not contain ":" (HTTP Basic separates user and password with it)' }),
  ),
  password: nonEmpty(),
});

export const ssoSettingsSchema = z.strictObject({
  issuer: endpoint,
  clientId: nonEmpty(),
  scope: nonEmpty(),
  audience: z.optional(nonEmpty()),
});

export const customHeaderSchema = z.strictObject({
  key: z.string().check(
    z.regex(HEADER_NAME, { message: 'must be a valid HTTP header name' }),
    z.refine((k) => !RESERVED_HEADERS.has(k.toLowerCase()), { message: 'is a header the relay needs for itself' }),
  ),
  value: nonEmpty(),
});

export const authConfigSchema = z
  .strictObject({
    method: z.enum(['none', 'basic', 'sso']),
    basic: z.optional(basicCredentialsSchema),
    sso: z.optional(ssoSettingsSchema),
    headers: z._default(z.array(customHeaderSchema), []),
  })
  .check(
    z.superRefine((auth, ctx) => {
      if (auth.method === 'basic' && !auth.basic) {
        ctx.addIssue({ code: 'custom', path: ['basic'], message: 'is required when method is "basic"' });
      }
      if (auth.method === 'sso' && !auth.sso) {
        ctx.addIssue({ code: 'custom', path: ['sso'], message: 'is required when method is "sso"' });
      }
    }),
  );

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The problems of a destination before its kind reads it: a type that is none, a URL of one
 * kind's own host under another kind's type, or where a post goes named as another kind names it.
 */
function dispatchProblems(destination: Record<string, unknown>, kind: DestinationKind<object>): PathProblem[] {
  const { type, url } = destination;
  if (type !== undefined && !(DESTINATION_TYPES as readonly unknown[]).includes(type)) {
    const hint = typeof type === 'string' ? closestKey(type, DESTINATION_TYPES) : undefined;
    const types = DESTINATION_TYPES.map((t) => `"${t}"`).join(', ');
    return [{ path: ['type'], problem: `must be one of ${types}${hint ? `; did you mean "${hint}"?` : ''}` }];
  }
  const hostType = typeof url === 'string' ? serviceOfHost(url) : undefined;
  if (hostType !== undefined && hostType !== kind.type) {
    const problem = `is "${kind.type}", but the URL is a ${KINDS[hostType].label} webhook: use "type": "${hostType}" or leave type out`;
    return [{ path: ['type'], problem }];
  }
  if (!kind.chat) {
    const chatOnly = ['mention', 'group'].find((key) => Object.hasOwn(destination, key));
    const chats = DESTINATION_TYPES.filter((t) => KINDS[t].chat).join(', ');
    if (chatOnly) return [{ path: [chatOnly], problem: `is for chat destinations (${chats}) only, not ${kind.type}` }];
  }
  const own = new Set(kind.addressKeys);
  for (const other of DESTINATION_TYPES) {
    const foreign = KINDS[other].addressKeys.find((key) => !own.has(key) && Object.hasOwn(destination, key));
    if (!foreign) continue;
    // A kind that no URL names is never guessed: its own key without `type` asks for the type.
    if (type === undefined && !(KINDS[other] as DestinationKind<object>).ownsHost) {
      return [
        { path: ['type'], problem: `is required: "${foreign}" belongs to ${KINDS[other].label} destinations; add "type": "${other}"` },
      ];
    }
    return [{ path: [foreign], problem: `is for ${KINDS[other].label} destinations only; use "${kind.addressKeys[0]}"` }];
  }
  return type === undefined ? typeMissing(destination, kind) : [];
}

/** The keys a kind's schema takes (its strict object's shape). */
const keysOf = (kind: DestinationKind<object>): readonly string[] => Object.keys((kind.schema as { shape?: object }).shape ?? {});

/**
 * A destination without `type` is read as the kind its URL names (Slack for any other host):
 * a key that kind does not take, but a kind that is never inferred does (a webhook's `secret`),
 * says which type was left out rather than only that the key is unknown.
 */
function typeMissing(destination: Record<string, unknown>, kind: DestinationKind<object>): PathProblem[] {
  const own = new Set([...keysOf(kind), ...DESTINATION_OPTION_KEYS]);
  for (const key of Object.keys(destination)) {
    if (own.has(key)) continue;
    const meant = DESTINATION_TYPES.map((t) => KINDS[t] as DestinationKind<object>).find(
      (other) => !other.ownsHost && keysOf(other).includes(key),
    );
    if (meant) return [{ path: [], problem: `unknown key "${key}"; a ${meant.label} destination needs "type": "${meant.type}"` }];
  }
  return [];
}

/** One destination, as its kind's schema validated it, with the options every kind takes. */
export type Destination = KindDestination & DestinationOptions;

/** The options every kind takes (`escalate`, `summary`), and the rest of the destination for its kind. */
function splitOptions(destination: Record<string, unknown>): { options: Record<string, unknown>; own: Record<string, unknown> } {
  const options: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(destination)) {
    if ((DESTINATION_OPTION_KEYS as readonly string[]).includes(key)) options[key] = value;
    else own[key] = value;
  }
  return { options, own };
}

/** An unknown key that is a typo of a shared option, hinted as one. */
const hintOptions = (problems: PathProblem[]): PathProblem[] =>
  problems.map((p) => {
    const key = p.path.length === 1 && p.problem === 'unknown key' ? closestKey(String(p.path[0]), DESTINATION_OPTION_KEYS) : undefined;
    return key ? { ...p, problem: `unknown key; did you mean "${key}"?` } : p;
  });

/** One destination: its kind (`type`, or what its URL or address says) checks it with its own schema. */
export const destinationSchema = z.pipe(
  z.unknown(),
  z.transform((value, ctx): Destination => {
    if (!isObject(value)) {
      ctx.issues.push({ code: 'custom', message: 'must be an object', input: value });
      return z.NEVER;
    }
    const kind = kindOf(value);
    const { options, own } = splitOptions(value);
    // Which kind it is decides what its keys mean: only then can the kind's own schema read them.
    const early = dispatchProblems(value, kind);
    const summaryRefused: PathProblem[] =
      !kind.summaries && options['summary'] !== undefined
        ? [{ path: ['summary'], problem: `is not for ${kind.label} destinations, which take no weekly summary` }]
        : [];
    const result = early.length === 0 ? kind.schema.safeParse(own) : undefined;
    const shared = destinationOptionsSchema.safeParse(options);
    if (result?.success && shared.success && summaryRefused.length === 0) return { ...result.data, ...shared.data } as Destination;
    const problems = [
      ...(result ? (result.success ? [] : hintOptions(pathProblems(result.error, kind.schema))) : early),
      ...summaryRefused,
      ...(shared.success ? [] : pathProblems(shared.error, destinationOptionsSchema)),
    ];
    for (const { path, problem } of problems) ctx.issues.push({ code: 'custom', message: problem, path, input: value });
    return z.NEVER;
  }),
);

/** The Slack app behind the destinations that name a `channel`. */
export const slackAppSettingsSchema = z.strictObject({
  botToken: z.string().check(z.regex(/^xox[bp]-[A-Za-z0-9-]+$/, { message: 'must be a bot token (xoxb-...)' })),
  signingSecret: z.optional(nonEmpty()),
});

const matchList = z.array(nonEmpty()).check(z.minLength(1));

export const routeSchema = z.strictObject({
  when: z._default(
    z.strictObject({
      objectType: z.optional(matchList),
      cloudProvider: z.optional(matchList),
      accountId: z.optional(matchList),
      /** Cost centers of the platform (lib/owners), by name (case ignored) or id. */
      costCenter: z.optional(matchList),
    }),
    {},
  ),
  to: z.array(nonEmpty()).check(z.minLength(1)),
});

type Problem = { path: PropertyKey[]; message: string };
const asRecord = (value: unknown): Record<string, unknown> => (isObject(value) ? value : {});

/** Where `escalate.to` names no other destination, or where following escalations comes back round. */
function escalationProblems(destinations: Readonly<Record<string, unknown>>): Problem[] {
  const problems: Problem[] = [];
  const names = Object.keys(destinations);
  const escalationOf = (name: string): string | undefined => {
    const to = asRecord(asRecord(destinations[name])['escalate'])['to'];
    return typeof to === 'string' && to !== '' ? to : undefined;
  };
  for (const name of names) {
    const to = escalationOf(name);
    if (to === undefined) continue;
    const path = ['destinations', name, 'escalate', 'to'];
    if (to === name) {
      problems.push({ path, message: 'names this destination itself; escalate to another one' });
    } else if (!Object.hasOwn(destinations, to)) {
      const hint = closestKey(to, names);
      problems.push({ path, message: `names "${to}", which is not a destination${hint ? `; did you mean "${hint}"?` : ''}` });
    } else {
      const chain = [name];
      for (let next: string | undefined = to; next !== undefined && Object.hasOwn(destinations, next); next = escalationOf(next)) {
        if (next === name) {
          problems.push({ path, message: `makes escalations loop (${[...chain, name].join(' -> ')})` });
          break;
        }
        if (chain.includes(next)) break;
        chain.push(next);
      }
    }
  }
  return problems;
}

/**
 * What one part of a configuration says of another: `default` is there, every name a route or an
 * escalation gives is a destination, the app settings are there when a destination needs them.
 * Read leniently, so that these problems are listed beside those of the parts themselves, in one
 * run, rather than only once every part is right.
 */
export function referenceProblems(input: unknown): Problem[] {
  const config = asRecord(input);
  const destinations = asRecord(config['destinations']);
  const problems: Problem[] = [];
  if (!isObject(config['destinations'])) return problems;
  if (!Object.hasOwn(destinations, 'default')) problems.push({ path: ['destinations', 'default'], message: 'is required' });
  const needing = Object.entries(destinations).flatMap(([name, d]) => {
    if (!isObject(d)) return [];
    const reason = (kindOf(d) as DestinationKind<object>).needsApp?.(d);
    return reason ? [`destination "${name}" ${reason}`] : [];
  });
  if (needing[0] && config['slack'] === undefined) problems.push({ path: ['slack'], message: `is required: ${needing[0]}` });
  problems.push(...escalationProblems(destinations));
  const routes = Array.isArray(config['routes']) ? config['routes'] : [];
  for (const [r, route] of routes.entries()) {
    const to = asRecord(route)['to'];
    for (const [t, name] of (Array.isArray(to) ? to : []).entries()) {
      if (typeof name === 'string' && name !== '' && !Object.hasOwn(destinations, name)) {
        const hint = closestKey(name, Object.keys(destinations));
        problems.push({
          path: ['routes', r, 'to', t],
          message: `names "${name}", which is not a destination${hint ? `; did you mean "${hint}"?` : ''}`,
        });
      }
    }
  }
  return problems;
}

/**
 * The platform in the loop (docs/platform.md): a picture of the account's cost trend in each
 * message, and "Expected" written back as a cost event. Both need the owner directory.
 */
export const platformSettingsSchema = z.strictObject({
  trend: z.optional(z.boolean()),
  costEvents: z.optional(z.boolean()),
});

// Strict objects everywhere: a mistyped key (`auth.header`, `when.objecttype`, `mentoin`)
// must be an error naming its path, never a check that silently stops applying.
export const relayConfigSchema = z
  .strictObject({
    auth: authConfigSchema,
    slack: z.optional(slackAppSettingsSchema),
    platform: z.optional(platformSettingsSchema),
    destinations: z.record(nonEmpty(), destinationSchema),
    routes: z._default(z.array(routeSchema), []),
  })
  .check(
    z.superRefine((config, ctx) => {
      for (const { path, message } of referenceProblems(config)) ctx.addIssue({ code: 'custom', path, message });
    }),
  );

export type RelayConfig = z.infer<typeof relayConfigSchema>;
export type AuthConfig = RelayConfig['auth'];
export type BasicCredentials = z.infer<typeof basicCredentialsSchema>;
export type SsoSettings = z.infer<typeof ssoSettingsSchema>;
export type CustomHeader = z.infer<typeof customHeaderSchema>;
export type SlackAppSettings = z.infer<typeof slackAppSettingsSchema>;

export type Route = z.infer<typeof routeSchema>;

export { describeIssues, type FieldProblem } from '../shared/zod-issues.js';
