import * as z from 'zod/mini';

/**
 * A delivery that Slack could not take yet, as it waits on the retry queue. It names the
 * destination rather than its URL, so a webhook URL replaced in the configuration applies
 * to what is already queued, and no URL sits in a queue.
 */
export const deliveryJobSchema = z.object({
  version: z.literal(1),
  deliveryId: z.string().check(z.minLength(1)),
  destination: z.string().check(z.minLength(1)),
  /** Posts made so far, by the relay and by earlier retries. */
  attempt: z.number().check(z.int(), z.nonnegative()),
  firstAttemptAt: z.string(),
  lastReason: z.optional(z.string()),
  /** The Slack message exactly as formatted on the first attempt. */
  payload: z.looseObject({ text: z.string(), blocks: z.array(z.unknown()) }),
});

export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

export function parseDeliveryJob(body: string): DeliveryJob | undefined {
  try {
    const result = deliveryJobSchema.safeParse(JSON.parse(body));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
