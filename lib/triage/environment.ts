import * as z from 'zod/mini';
import '../validation/messages.js';
import { OPTIONAL_PLATFORM_ENVIRONMENT } from '../cost-api/optional-environment.js';
import { KIND_ENVIRONMENT } from '../notify/kinds.js';

const text = () => z.string().check(z.trim(), z.minLength(1));

/** Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error. */
export const triageEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: z.optional(text()),
  DEDUP_TABLE_NAME: z.optional(text()),
  /** Unset: no triage links; `/triage/...` answers 404. */
  TRIAGE_KEY_SECRET_ID: z.optional(text()),
  /** What the destination kinds read (SLACK_API_URL, …; lib/notify). */
  ...KIND_ENVIRONMENT,
  /**
   * The platform and its login (the stack sets both where owner routing is on): the pictures of
   * accounts' cost trends (`GET /chart/...`) and cost events read them. Unset login: neither.
   */
  ...OPTIONAL_PLATFORM_ENVIRONMENT,
  /** Where a cost event that could not be written in time waits for delivery-retry; unset: it is logged and counted failed. */
  DELIVERY_QUEUE_URL: z.optional(text()),
});

export type TriageEnvironment = z.infer<typeof triageEnvironmentSchema>;
