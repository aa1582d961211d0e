import * as z from 'zod/mini';
import '../validation/messages.js';
import { DEFAULT_COST_API_BASE_URL, isAllowedBaseUrl } from './base-url.js';

/** The platform's address as every function reads it: blank means the default. */
export const baseUrl = z._default(
  z
    .string()
    .check(z.trim(), z.refine(isAllowedBaseUrl, { message: 'must be an https URL without query (plain http only for loopback hosts)' })),
  DEFAULT_COST_API_BASE_URL,
);

/**
 * The platform login of a function that uses it where the configuration asks (triage's pictures
 * and cost events, delivery-retry's queued cost events): unset login, none of it. Apart from
 * environment.ts so that these functions' bundles carry none of the settings they do not read.
 */
export const OPTIONAL_PLATFORM_ENVIRONMENT = {
  COST_API_BASE_URL: baseUrl,
  COST_API_CREDENTIALS_SECRET_ID: z.optional(z.string().check(z.trim(), z.minLength(1))),
};
