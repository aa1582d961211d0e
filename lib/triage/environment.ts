import * as z from 'zod/mini';
import '../validation/messages.js';
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
});

export type TriageEnvironment = z.infer<typeof triageEnvironmentSchema>;
