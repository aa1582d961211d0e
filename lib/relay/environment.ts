import * as z from 'zod/mini';
import '../validation/english-messages.js';
import { parseLogLevel } from '../log/logger.js';

const seconds = (fallback: number) => z._default(z.coerce.number().check(z.int(), z.nonnegative()), fallback);

export const relayEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: z.optional(z.string().check(z.trim(), z.minLength(1))),
  RELAY_CONFIG_TTL_SECONDS: seconds(300),
  RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS: seconds(86_400),
  SLACK_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.positive()), 5_000),
  DELIVERY_QUEUE_URL: z.optional(z.string().check(z.trim(), z.minLength(1))),
  DEAD_LETTER_QUEUE_URL: z.optional(z.string().check(z.trim(), z.minLength(1))),
  LOG_LEVEL: z.pipe(z.optional(z.string()), z.transform(parseLogLevel)),
});

export type RelayEnvironment = z.infer<typeof relayEnvironmentSchema>;

/** Invalid numbers fall back to the defaults rather than stop the relay; the problem is returned to be logged. */
export function readRelayEnvironment(env: Record<string, string | undefined>): {
  settings: RelayEnvironment;
  problems: string[];
} {
  const result = relayEnvironmentSchema.safeParse(env);
  if (result.success) return { settings: result.data, problems: [] };
  const bad = new Set(result.error.issues.map((i) => String(i.path[0])));
  const cleaned = Object.fromEntries(Object.entries(env).filter(([key]) => !bad.has(key)));
  return { settings: relayEnvironmentSchema.parse(cleaned), problems: [...bad] };
}
