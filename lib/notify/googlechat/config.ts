import * as z from 'zod/mini';
import '../../validation/messages.js';
import { chatGroupSchema, endpointSchema, mentionOf } from '../options.js';

const GOOGLE_CHAT_MENTION = /^<users\/(?:all|[0-9]{1,30})>$/;

export const googleChatDestinationSchema = z.strictObject({
  type: z.optional(z.literal('googlechat')),
  /** A space's incoming webhook; its query holds the key and token. */
  url: endpointSchema,
  mention: z.optional(
    mentionOf(
      (value): value is string => typeof value === 'string' && GOOGLE_CHAT_MENTION.test(value),
      'one of <users/all>, <users/ID>',
      'Google Chat',
    ),
  ),
  group: z.optional(chatGroupSchema),
});
export type GoogleChatDestination = z.infer<typeof googleChatDestinationSchema>;
