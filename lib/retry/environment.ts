import * as z from 'zod';
import { parseLogLevel } from '../log/logger.js';

export const retryEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: z.string().trim().min(1).optional(),
  RELAY_CONFIG_TTL_SECONDS: z.coerce.number().int().nonnegative().default(300),
  DELIVERY_QUEUE_URL: z.string().trim().min(1),
  DEAD_LETTER_QUEUE_URL: z.string().trim().min(1).optional(),
  SLACK_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** Attempts in all (the relay's first one included) before a message is parked. */
  DELIVERY_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(20),
  /** Spacing of posts to one webhook: Slack allows about one per second; the margin absorbs network jitter. */
  DELIVERY_MIN_INTERVAL_MS: z.coerce.number().int().nonnegative().default(1_100),
  LOG_LEVEL: z.string().optional().transform(parseLogLevel),
});

export type RetryEnvironment = z.infer<typeof retryEnvironmentSchema>;
