import * as z from 'zod/mini';
import '../validation/messages.js';
import { isHttpsOrLoopbackUrl } from '../transport/allowed-url.js';

const text = () => z.string().check(z.trim(), z.minLength(1));

/** Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error. */
export const triageEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: z.optional(text()),
  DEDUP_TABLE_NAME: z.optional(text()),
  /** Unset: no triage links; `/triage/...` answers 404. */
  TRIAGE_KEY_SECRET_ID: z.optional(text()),
  SLACK_API_URL: z.optional(z.string().check(z.trim(), z.refine(isHttpsOrLoopbackUrl, { message: 'must be an https URL' }))),
});

export type TriageEnvironment = z.infer<typeof triageEnvironmentSchema>;
