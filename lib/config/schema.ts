// zod/mini: the same validation as classic zod at a fraction of its size and import time,
// which the relay pays on every cold start (see the README's performance section).
import * as z from 'zod/mini';
import '../validation/english-messages.js';
import { isHttpsOrLoopbackUrl } from '../http/allowed-url.js';

/** https everywhere; plain http only towards this machine, for local use and tests. */
export const isAllowedEndpoint = isHttpsOrLoopbackUrl;

const endpoint = z
  .string()
  .check(z.refine(isAllowedEndpoint, { message: 'must be an https URL (plain http only for loopback hosts)' }));
const nonEmpty = () => z.string().check(z.minLength(1));

// The only mention forms an operator may configure; anything else could smuggle a link.
const MENTION = /^<(?:!here|!channel|!subteam\^[A-Z0-9]+|@[UW][A-Z0-9]+)>$/;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host']);

export const basicCredentialsSchema = z.strictObject({
  username: z
    .string()
    .check(
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
  key: z
    .string()
    .check(
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

export const destinationSchema = z.strictObject({
  url: endpoint,
  mention: z.optional(z.string().check(z.regex(MENTION, { message: 'must be one of <!here>, <!channel>, <!subteam^ID>, <@U...>' }))),
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
    destinations: z.record(nonEmpty(), destinationSchema),
    routes: z._default(z.array(routeSchema), []),
  })
  .check(
    z.superRefine((config, ctx) => {
      if (!config.destinations['default']) {
        ctx.addIssue({ code: 'custom', path: ['destinations', 'default'], message: 'is required' });
      }
      for (const [r, route] of config.routes.entries()) {
        for (const [t, name] of route.to.entries()) {
          if (!Object.hasOwn(config.destinations, name)) {
            ctx.addIssue({ code: 'custom', path: ['routes', r, 'to', t], message: 'names no destination' });
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
export type Route = z.infer<typeof routeSchema>;

export { describeIssues, type FieldProblem } from '../shared/zod-issues.js';
