import * as z from 'zod/mini';
import '../validation/messages.js';
import { DEFAULT_COST_API_BASE_URL, isAllowedBaseUrl } from './base-url.js';

/**
 * How a function reaches and signs in to the platform; the same for every function that does
 * (the API-key rotation and directory-sync), as the stack gives them the same login.
 * Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error.
 */
const baseUrl = z._default(
  z
    .string()
    .check(z.trim(), z.refine(isAllowedBaseUrl, { message: 'must be an https URL without query (plain http only for loopback hosts)' })),
  DEFAULT_COST_API_BASE_URL,
);

/**
 * The platform login of a function that uses it where the configuration asks (triage's pictures
 * and cost events, delivery-retry's queued cost events): unset login, none of it.
 */
export const OPTIONAL_PLATFORM_ENVIRONMENT = {
  COST_API_BASE_URL: baseUrl,
  COST_API_CREDENTIALS_SECRET_ID: z.optional(z.string().check(z.trim(), z.minLength(1))),
};

export const platformEnvironmentSchema = z.object({
  COST_API_BASE_URL: baseUrl,
  COST_API_CREDENTIALS_SECRET_ID: z.string({ error: 'is required' }).check(z.trim(), z.minLength(1, { error: 'is required' })),
  /** Per platform call and attempt. */
  COST_API_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.positive()), 10_000),
  COST_API_MAX_ATTEMPTS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(5)), 3),
});

export type PlatformEnvironment = z.infer<typeof platformEnvironmentSchema>;
