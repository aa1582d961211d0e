import * as z from 'zod/mini';
import { parseJson } from '../shared/json.js';

/**
 * The delayed message on the retry queue that closes a group: which destination and which of
 * its groups, and how many attempts it made before this message; nothing else. The alerts wait
 * in the table, never in a queue message.
 */
export const groupCloseJobSchema = z.strictObject({
  version: z.literal(2),
  kind: z.literal('group_close'),
  destination: z.string().check(z.minLength(1), z.maxLength(200)),
  groupId: z.string().check(z.regex(/^[0-9a-f-]{36}$/)),
  /** Attempts made by earlier messages of this closing (delivery-retry sends it again as a new message to wait). */
  attempt: z.optional(z.number().check(z.int(), z.nonnegative())),
});

export type GroupCloseJob = z.infer<typeof groupCloseJobSchema>;

/** The closing job in a queue message body; undefined for anything that is not exactly one. */
export function parseGroupCloseJob(body: string): GroupCloseJob | undefined {
  const json = parseJson(body);
  if (!json.ok) return undefined;
  const result = groupCloseJobSchema.safeParse(json.value);
  return result.success ? result.data : undefined;
}
