import * as z from 'zod';
import { isHttpsOrLoopbackUrl } from '../http/allowed-url.js';

/** https everywhere; plain http only towards this machine, for local use and tests. */
export const isAllowedEndpoint = isHttpsOrLoopbackUrl;

const endpoint = z
  .string()
  .refine(isAllowedEndpoint, { message: 'must be an https URL (plain http only for loopback hosts)' });

// The only mention forms an operator may configure; anything else could smuggle a link.
const MENTION = /^<(?:!here|!channel|!subteam\^[A-Z0-9]+|@[UW][A-Z0-9]+)>$/;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host']);

export const basicCredentialsSchema = z.object({
  username: z
    .string()
    .min(1)
    .refine((v) => !v.includes(':'), { message: 'must not contain ":" (HTTP Basic separates user and password with it)' }),
  password: z.string().min(1),
});

export const ssoSettingsSchema = z.object({
  issuer: endpoint,
  clientId: z.string().min(1),
  scope: z.string().min(1),
  audience: z.string().min(1).optional(),
});

export const customHeaderSchema = z.object({
  key: z
    .string()
    .regex(HEADER_NAME, { message: 'must be a valid HTTP header name' })
    .refine((k) => !RESERVED_HEADERS.has(k.toLowerCase()), { message: 'is a header the relay needs for itself' }),
  value: z.string().min(1),
});

export const authConfigSchema = z
  .object({
    method: z.enum(['none', 'basic', 'sso']),
    basic: basicCredentialsSchema.optional(),
    sso: ssoSettingsSchema.optional(),
    headers: z.array(customHeaderSchema).default([]),
  })
  .superRefine((auth, ctx) => {
    if (auth.method === 'basic' && !auth.basic) {
      ctx.addIssue({ code: 'custom', path: ['basic'], message: 'is required when method is "basic"' });
    }
    if (auth.method === 'sso' && !auth.sso) {
      ctx.addIssue({ code: 'custom', path: ['sso'], message: 'is required when method is "sso"' });
    }
  });

export const destinationSchema = z.object({
  url: endpoint,
  mention: z
    .string()
    .regex(MENTION, { message: 'must be one of <!here>, <!channel>, <!subteam^ID>, <@U...>' })
    .optional(),
});

const matchList = z.array(z.string().min(1)).min(1);

export const routeSchema = z.object({
  when: z
    .object({
      objectType: matchList.optional(),
      cloudProvider: matchList.optional(),
      accountId: matchList.optional(),
    })
    .default({}),
  to: z.array(z.string().min(1)).min(1),
});

export const relayConfigSchema = z
  .object({
    auth: authConfigSchema,
    destinations: z.record(z.string().min(1), destinationSchema),
    routes: z.array(routeSchema).default([]),
  })
  .superRefine((config, ctx) => {
    if (!config.destinations['default']) {
      ctx.addIssue({ code: 'custom', path: ['destinations', 'default'], message: 'is required' });
    }
    config.routes.forEach((route, r) =>
      route.to.forEach((name, t) => {
        if (!Object.hasOwn(config.destinations, name)) {
          ctx.addIssue({ code: 'custom', path: ['routes', r, 'to', t], message: 'names no destination' });
        }
      }),
    );
  });

export type RelayConfig = z.infer<typeof relayConfigSchema>;
export type AuthConfig = RelayConfig['auth'];
export type BasicCredentials = z.infer<typeof basicCredentialsSchema>;
export type SsoSettings = z.infer<typeof ssoSettingsSchema>;
export type CustomHeader = z.infer<typeof customHeaderSchema>;
export type Destination = z.infer<typeof destinationSchema>;
export type Route = z.infer<typeof routeSchema>;

/** A zod problem reduced to where it is and what is wrong, never the offending value. */
export interface FieldProblem {
  path: string;
  problem: string;
}

export function describeIssues(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)',
    problem: issue.message,
  }));
}
