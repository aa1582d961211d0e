import * as z from 'zod/mini';
import '../validation/messages.js';
import { destinationNameSchema, queuedMessageSchema } from '../delivery/job-schema.js';
import { originSchema } from '../delivery/origin.js';
import { costCentersSchema } from '../message/cost-center.js';
import { parseJsonAsWritten } from '../shared/json.js';

// Read by delivery-retry (and npm start's timer) only: the relay writes jobs (job.ts) and never
// parses one, so the schema stays out of the relay's bundles.

/**
 * An anomaly's escalation, waiting on the retry queue until it is due: where it waits (`from`, a
 * destination's name), which opening it waits on (`firstSeen`), how many follow-ups its content
 * had seen, and the validated webhook message with what a post of it names. Never a formatted
 * payload, a URL or a secret: the destination it goes to is read from the configuration when
 * it is due.
 */
const escalationJobSchema = z.strictObject({
  version: z.literal(2),
  kind: z.literal('escalation'),
  from: destinationNameSchema,
  /** Epoch seconds of the opening, as the anomaly's record has it. */
  firstSeen: z.number().check(z.int(), z.nonnegative()),
  /** Follow-ups delivered at `from` when this job was sent: a job with more carries later content. */
  updates: z.number().check(z.int(), z.nonnegative()),
  /** With the body as sent where the destination it escalates to passes that on (EventBridge). */
  message: queuedMessageSchema,
  /** Where the alert arrived, so that the escalated message links to the triage page there. */
  origin: z.optional(originSchema),
  costCenters: z.optional(costCentersSchema),
  /** Its opening waited at `from` (in a group, on the retry queue): it escalates only once it was shown there with a way to triage. */
  unposted: z.optional(z.literal(true)),
  /** It found a job with later content and let it go first; it does not wait for one again. */
  deferred: z.optional(z.literal(true)),
  /**
   * It is settled at the destination it goes to (posted, held, refused or snoozed there), but the
   * anomaly could not be marked escalated: only that is left.
   */
  settled: z.optional(z.literal(true)),
});

export type EscalationJob = z.infer<typeof escalationJobSchema>;

/** The job in a queue message body; undefined for anything that is not exactly one. */
export function parseEscalationJob(body: string): EscalationJob | undefined {
  // As written: a bus's body as sent (`message.received`) keeps the digits of its numbers.
  const json = parseJsonAsWritten(body);
  if (!json.ok) return undefined;
  const result = escalationJobSchema.safeParse(json.value);
  return result.success ? result.data : undefined;
}
