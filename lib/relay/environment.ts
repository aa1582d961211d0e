import * as z from 'zod/mini';
import '../validation/messages.js';
import { KIND_ENVIRONMENT } from '../notify/kinds.js';

const whole = (fallback: number, min = 0) => z._default(z.coerce.number().check(z.int(), z.gte(min)), fallback);
const text = () => z.optional(z.string().check(z.trim(), z.minLength(1)));

/** Read with `readEnvironment` (lib/shared/environment.ts): blank means default, invalid is an error. */
export const relayEnvironmentSchema = z.object({
  RELAY_CONFIG_SECRET_ID: text(),
  RELAY_CONFIG_TTL_SECONDS: whole(300),
  RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS: whole(86_400),
  /** How long the identity provider's key set is kept before it is downloaded again. */
  SSO_KEYS_MAX_AGE_SECONDS: whole(3_600, 1),
  /** How long one post to any chat service may take (postTimeoutFrom); SLACK_TIMEOUT_MS is its older name. */
  POST_TIMEOUT_MS: z.optional(z.coerce.number().check(z.int(), z.gte(1))),
  SLACK_TIMEOUT_MS: z.optional(z.coerce.number().check(z.int(), z.gte(1))),
  DELIVERY_QUEUE_URL: text(),
  DEAD_LETTER_QUEUE_URL: text(),
  /** DynamoDB table that remembers deliveries already posted; unset: no dedup (local use). */
  DEDUP_TABLE_NAME: text(),
  /** How long a delivery is remembered. */
  DEDUP_WINDOW_SECONDS: whole(86_400, 60),
  /** `Enabled` when the stack keeps the owner directory (OwnerRouting): every message names its account's cost centers. */
  OWNER_ROUTING: z._default(z.enum(['Enabled', 'Disabled']), 'Disabled'),
  /** The key that signs triage links; unset: messages carry no "Triage" link. */
  TRIAGE_KEY_SECRET_ID: text(),
  /** What the destination kinds read (SLACK_API_URL, …; lib/notify). */
  ...KIND_ENVIRONMENT,
});

export type RelayEnvironment = z.infer<typeof relayEnvironmentSchema>;
