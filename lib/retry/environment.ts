import * as z from 'zod/mini';
import '../validation/english-messages.js';
import { parseLogLevel } from '../log/logger.js';

const nonEmpty = () => z.string().check(z.trim(), z.minLength(1));
const whole = (fallback: number, min = 0) => z._default(z.coerce.number().check(z.int(), z.gte(min)), fallback);

export const retryEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: z.optional(nonEmpty()),
  RELAY_CONFIG_TTL_SECONDS: whole(300),
  DELIVERY_QUEUE_URL: nonEmpty(),
  DEAD_LETTER_QUEUE_URL: z.optional(nonEmpty()),
  SLACK_TIMEOUT_MS: whole(5_000, 1),
  /** Attempts in all (the relay's first one included) before a message is parked. */
  DELIVERY_MAX_ATTEMPTS: whole(20, 1),
  /** Spacing of posts to one webhook: Slack allows about one per second; the margin absorbs network jitter. */
  DELIVERY_MIN_INTERVAL_MS: whole(1_100),
  LOG_LEVEL: z.pipe(z.optional(z.string()), z.transform(parseLogLevel)),
});

export type RetryEnvironment = z.infer<typeof retryEnvironmentSchema>;
