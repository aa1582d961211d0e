import * as z from 'zod/mini';
import '../validation/messages.js';
import { KIND_ENVIRONMENT } from '../notify/kinds.js';

const text = () => z.optional(z.string().check(z.trim(), z.minLength(1)));
const whole = (min: number) => z.optional(z.coerce.number().check(z.int(), z.gte(min)));

/** Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error. */
export const summaryEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: text(),
  /** The table whose summary index holds the anomalies, and where each week's summary is taken. */
  DEDUP_TABLE_NAME: text(),
  /** The key that signs the summaries' Triage links; unset: no links. */
  TRIAGE_KEY_SECRET_ID: text(),
  /** What the destination kinds read (SLACK_API_URL, PAGERDUTY_EVENTS_URL, …; lib/notify). */
  ...KIND_ENVIRONMENT,
  /** How long one post may take, as for every other function (the stack's PostTimeoutMs). */
  POST_TIMEOUT_MS: whole(1),
  SLACK_TIMEOUT_MS: whole(1),
});

export type SummaryEnvironment = z.infer<typeof summaryEnvironmentSchema>;
