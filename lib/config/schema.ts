// zod/mini: the same validation as classic zod at a fraction of its size and import time,
// which the relay pays on every cold start (bench/README.md measures it).
import * as z from 'zod/mini';
import '../validation/messages.js';
import { closestKey } from '../shared/zod-issues.js';
import { isHttpsOrLoopbackUrl } from '../transport/allowed-url.js';
import { DESTINATION_TYPES, type DestinationType, destinationType, isRetiredTeamsConnector, serviceOfHost } from './destination-type.js';

/** https everywhere; plain http only towards this machine, for local use and tests. */
const endpoint = z.string().check(z.refine(isHttpsOrLoopbackUrl, { message: 'must be an https URL (plain http only for loopback hosts)' }));
const nonEmpty = () => z.string().check(z.minLength(1));

// The only mention forms an operator may configure, per type; anything else could smuggle a link.
const SLACK_MENTION = /^<(?:!here|!channel|!subteam\^[A-Z0-9]+|@[UW][A-Z0-9]+)>$/;
const GOOGLE_CHAT_MENTION = /^<users\/(?:all|[0-9]{1,30})>$/;
// Teams pings a user named in `msteams.entities` by UPN or Entra object id; the name is shown
// inside <at>…</at>, so it must not carry markup of its own.
const TEAMS_USER_ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[^\s@<>"]{1,64}@[^\s@<>"]{1,255})$/i;
const TEAMS_MENTION_NAME = /^[\p{L}\p{N} .,'-]{1,100}$/u;

const MENTION_FORMS: Readonly<Record<DestinationType, string>> = {
  slack: 'one of <!here>, <!channel>, <!subteam^ID>, <@U...>',
  teams: 'an object {"id": "<UPN or Entra object id>", "name": "<display name>"}',
  googlechat: 'one of <users/all>, <users/ID>',
};
const SERVICE_NAMES: Readonly<Record<DestinationType, string>> = { slack: 'Slack', teams: 'Teams', googlechat: 'Google Chat' };

// Public (C), private (G) channel or direct message (D) ids; a name could change under the relay.
const SLACK_CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;

// A refinement rather than zod's range checks, which would add their code to every cold start.
const isGroupWait = (seconds: number) => Number.isInteger(seconds) && seconds >= 10 && seconds <= 900;

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

export const teamsMentionSchema = z.strictObject({
  id: z.string().check(z.regex(TEAMS_USER_ID, { message: "must be the user's UPN (name@example.com) or Entra object id" })),
  name: z.string().check(z.regex(TEAMS_MENTION_NAME, { message: "must be a display name of letters, digits, spaces and . , ' -" })),
});

function mentionFits(type: DestinationType, mention: string | TeamsMention): boolean {
  if (type === 'teams') return typeof mention === 'object';
  if (typeof mention !== 'string') return false;
  return (type === 'slack' ? SLACK_MENTION : GOOGLE_CHAT_MENTION).test(mention);
}

export const destinationSchema = z
  .strictObject({
    /** Absent: inferred from the URL's host (`destinationType`). */
    type: z.optional(z.enum(DESTINATION_TYPES)),
    /** An incoming webhook; a Slack destination has either this or `channel`. */
    url: z.optional(endpoint),
    /** A Slack channel id, posted to through the Web API with `slack.botToken` (a Slack app destination). */
    channel: z.optional(z.string().check(z.regex(SLACK_CHANNEL_ID, { message: 'must be a Slack channel id such as C0123ABCD' }))),
    mention: z.optional(z.union([z.string(), teamsMentionSchema])),
    /** Alerts arriving within the wait become one message (lib/group). */
    group: z.optional(z.strictObject({ waitSeconds: z.number().check(z.refine(isGroupWait, { message: 'must be 10 to 900 (seconds)' })) })),
  })
  .check(
    z.superRefine((destination, ctx) => {
      if ((destination.url === undefined) === (destination.channel === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'or "channel" is required, not both ("channel" only for Slack)' });
        return;
      }
      if (destination.url === undefined) {
        if (destination.type !== undefined && destination.type !== 'slack') {
          ctx.addIssue({ code: 'custom', path: ['channel'], message: 'is for Slack destinations only; use "url"' });
        }
      } else if (isRetiredTeamsConnector(destination.url)) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message:
            'is an Office 365 connector webhook, which Microsoft retired in 2026: create a Teams workflow webhook ("Post to a channel when a webhook request is received") and use its URL',
        });
      }
      const type = destinationType(destination);
      const hostType = destination.url === undefined ? undefined : serviceOfHost(destination.url);
      if (hostType !== undefined && hostType !== type) {
        ctx.addIssue({
          code: 'custom',
          path: ['type'],
          message: `is "${type}", but the URL is a ${SERVICE_NAMES[hostType]} webhook: use "type": "${hostType}" or leave type out`,
        });
      }
      if (destination.mention !== undefined && !mentionFits(type, destination.mention)) {
        ctx.addIssue({
          code: 'custom',
          path: ['mention'],
          message: `must be ${MENTION_FORMS[type]} for a ${SERVICE_NAMES[type]} destination`,
        });
      }
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
    }),
    {},
  ),
  to: z.array(nonEmpty()).check(z.minLength(1)),
});

// Strict objects everywhere: a mistyped key (`auth.header`, `when.objecttype`, `mentoin`)
// must be an error naming its path, never a check that silently stops applying.
export const relayConfigSchema = z
  .strictObject({
    auth: authConfigSchema,
    slack: z.optional(slackAppSettingsSchema),
    destinations: z.record(nonEmpty(), destinationSchema),
    routes: z._default(z.array(routeSchema), []),
  })
  .check(
    z.superRefine((config, ctx) => {
      if (!config.destinations['default']) {
        ctx.addIssue({ code: 'custom', path: ['destinations', 'default'], message: 'is required' });
      }
      const appDestination = Object.entries(config.destinations).find(([, d]) => d.channel !== undefined);
      if (appDestination && !config.slack) {
        const message = `is required: destination "${appDestination[0]}" names a Slack channel`;
        ctx.addIssue({ code: 'custom', path: ['slack'], message });
      }
      for (const [r, route] of config.routes.entries()) {
        for (const [t, name] of route.to.entries()) {
          if (!Object.hasOwn(config.destinations, name)) {
            const hint = closestKey(name, Object.keys(config.destinations));
            const message = `names "${name}", which is not a destination${hint ? `; did you mean "${hint}"?` : ''}`;
            ctx.addIssue({ code: 'custom', path: ['routes', r, 'to', t], message });
          }
        }
      }
    }),
  );

export type RelayConfig = z.infer<typeof relayConfigSchema>;
export type AuthConfig = RelayConfig['auth'];
export type BasicCredentials = z.infer<typeof basicCredentialsSchema>;
export type SsoSettings = z.infer<typeof ssoSettingsSchema>;
export type CustomHeader = z.infer<typeof customHeaderSchema>;
export type Destination = z.infer<typeof destinationSchema>;
export type SlackAppSettings = z.infer<typeof slackAppSettingsSchema>;
export type TeamsMention = z.infer<typeof teamsMentionSchema>;

export type Route = z.infer<typeof routeSchema>;

export { describeIssues, type FieldProblem } from '../shared/zod-issues.js';
