import * as z from 'zod/mini';
import '../validation/messages.js';
import { baseUrl } from './optional-environment.js';

/**
 * How a function reaches and signs in to the platform; the same for every function that does
 * (the API-key rotation and directory-sync), as the stack gives them the same login.
 * Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error.
 */
export const platformEnvironmentSchema = z.object({
  COST_API_BASE_URL: baseUrl,
  COST_API_CREDENTIALS_SECRET_ID: z.string({ error: 'is required' }).check(z.trim(), z.minLength(1, { error: 'is required' })),
  /** Per platform call and attempt. */
  COST_API_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.positive()), 10_000),
  COST_API_MAX_ATTEMPTS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(5)), 3),
});

export type PlatformEnvironment = z.infer<typeof platformEnvironmentSchema>;
