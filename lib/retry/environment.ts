import * as z from 'zod/mini';
import '../validation/messages.js';
import { OPTIONAL_PLATFORM_ENVIRONMENT } from '../cost-api/optional-environment.js';
import { KIND_ENVIRONMENT } from '../notify/kinds.js';

const text = () => z.string().check(z.trim(), z.minLength(1));
const whole = (min: number) => z.coerce.number().check(z.int(), z.gte(min));

/** Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error. */
export const retryEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: z.optional(text()),
  RELAY_CONFIG_TTL_SECONDS: z._default(whole(0), 300),
  DELIVERY_QUEUE_URL: text(),
  DEAD_LETTER_QUEUE_URL: z.optional(text()),
  DEDUP_TABLE_NAME: z.optional(text()),
  DEDUP_WINDOW_SECONDS: z._default(whole(60), 86_400),
  /** The key that signs triage links; unset: messages carry no "Triage" link. */
  TRIAGE_KEY_SECRET_ID: z.optional(text()),
  /** What the destination kinds read (SLACK_API_URL, …; lib/notify). */
  ...KIND_ENVIRONMENT,
  /** How long one post to any chat service may take (postTimeoutFrom); SLACK_TIMEOUT_MS is its older name. */
  POST_TIMEOUT_MS: z.optional(whole(1)),
  SLACK_TIMEOUT_MS: z.optional(whole(1)),
  /** Attempts in all (the relay's first one included) before a message is parked. */
  DELIVERY_MAX_ATTEMPTS: z._default(whole(1), 20),
  /** The platform and its login, for cost events queued by the triage function (lib/cost-events); unset login: such jobs are parked. */
  ...OPTIONAL_PLATFORM_ENVIRONMENT,
  /** Spacing of posts to one webhook; unset: each chat service's own documented pace. */
  DELIVERY_MIN_INTERVAL_MS: z.optional(whole(0)),
});

export type RetryEnvironment = z.infer<typeof retryEnvironmentSchema>;
