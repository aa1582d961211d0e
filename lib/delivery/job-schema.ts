import * as z from 'zod/mini';
import '../validation/messages.js';
import { costCentersSchema } from '../message/cost-center.js';
import { webhookMessageSchema } from '../message/schema.js';
import { parseJsonAsWritten } from '../shared/json.js';
import { MARKED_STATES } from '../vocabulary/triage.js';
import { originSchema } from './origin.js';

// Read by delivery-retry only: the relay writes jobs (job.ts) and never parses one, so the
// schema stays off its cold path.

/**
 * A delivery that a chat service could not take yet, as it waits on the retry queue. It
 * holds the validated webhook message, not a formatted payload: each attempt formats it
 * with the destination's current type and mention, and nothing a queue sender adds can
 * reach a chat service. It names the destination, never its URL.
 */
// Ids a kind gives its messages (a Slack channel and ts, a Jira project and issue key): never text.
const messageId = z.string().check(z.regex(/^[A-Za-z0-9.-]{1,40}$/));

const anomalyPostSchema = z.union([
  z.strictObject({ kind: z.literal('opening') }),
  z.strictObject({
    kind: z.literal('follow_up'),
    firstSeenAt: z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)),
    updates: z.number().check(z.int(), z.positive()),
    opening: z.optional(z.strictObject({ channel: messageId, ts: messageId })),
    triage: z.optional(
      z.strictObject({
        state: z.enum(MARKED_STATES),
        by: z.string().check(z.maxLength(200)),
        at: z.number().check(z.int(), z.nonnegative()),
      }),
    ),
    afterSnooze: z.optional(z.literal(true)),
  }),
]);

/** A destination's name as a job names it. */
export const destinationNameSchema = z.string().check(z.minLength(1), z.maxLength(200));

/** An escalation's mark (lib/escalation): where the anomaly waited unacknowledged and how long; a name and a number. */
export const escalationMarkSchema = z.strictObject({
  from: destinationNameSchema,
  afterMinutes: z.number().check(z.int(), z.gte(1), z.lte(10_080)),
});

/** A JSON object as it was parsed: kept as it is, since zod would rebuild it and a `__proto__` member would not survive. */
const receivedObject = z.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value));

/**
 * The message with what the platform sent, where the destination's kind passes that on
 * (EventBridge): a retry carries the same members as the first attempt did.
 */
export const queuedMessageSchema = z.object({
  ...webhookMessageSchema.shape,
  received: z.optional(z.strictObject({ metadata: receivedObject, payload: receivedObject })),
});

export const deliveryJobSchema = z.strictObject({
  version: z.literal(2),
  deliveryId: z.string().check(z.minLength(1), z.maxLength(200)),
  destination: destinationNameSchema,
  /** Posts made so far, by the relay and by earlier retries. */
  attempt: z.number().check(z.int(), z.nonnegative()),
  firstAttemptAt: z.string().check(z.maxLength(40)),
  lastReason: z.optional(z.string().check(z.maxLength(200))),
  message: queuedMessageSchema,
  /** A follow-up of its anomaly, so that the retry worker posts it as one (ids, names and times, no alert text). */
  anomaly: z.optional(anomalyPostSchema),
  /** Where the alert arrived, so that a retried message links to the same triage page. */
  origin: z.optional(originSchema),
  /** A quiet test delivery: every attempt posts it without the destination's mention. */
  quiet: z.optional(z.literal(true)),
  /** The cost centers of its account as the owner directory named them when it arrived (ids and names). */
  costCenters: z.optional(costCentersSchema),
  /** An escalation from another destination: every attempt says where the anomaly waited. */
  escalation: z.optional(escalationMarkSchema),
  /**
   * A parked job's random token, which its record in the dedup table keeps too: the parked body's
   * redrive posts it, a copy of the job from before its parking does not (lib/dedup's `staleCopy`).
   */
  parkToken: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
});

export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

/** The job in a queue message body; undefined for anything that is not exactly a job. */
export function parseDeliveryJob(body: string): DeliveryJob | undefined {
  // As written: a bus's body as sent (`message.received`) keeps the digits of its numbers.
  const json = parseJsonAsWritten(body);
  if (!json.ok) return undefined;
  const result = deliveryJobSchema.safeParse(json.value);
  return result.success ? result.data : undefined;
}
