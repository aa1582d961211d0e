import * as z from 'zod/mini';
import '../validation/messages.js';

// The platform documents few fields and no types beyond "string": accept numbers where an
// id or time might come as one, treat null as absent, and ignore members we do not know.
const text = z.pipe(
  z.optional(z.union([z.string(), z.number(), z.null()])),
  z.transform((value: string | number | null | undefined) => (value === null || value === undefined ? undefined : String(value))),
);

export const webhookMessageSchema = z.object({
  metadata: z.object({
    object_type: z.string().check(z.trim(), z.minLength(1)),
    timestamp: text,
    destination_url: text,
  }),
  payload: z
    .object({
      title: text,
      message: text,
      cloud_provider_type: text,
      account_id: text,
      account_name: text,
    })
    .check(
      z.refine((p) => Boolean(p.title?.trim() || p.message?.trim()), {
        message: 'needs a non-empty title or message',
      }),
    ),
});

/**
 * The body's `metadata` and `payload` exactly as the platform sent them (members the schema does
 * not know, numbers, nulls), for a kind that passes the alert on as data rather than showing it.
 */
export interface ReceivedMessage {
  metadata: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/**
 * The validated message every kind formats from. `received` rides along only to a kind that
 * asks for it (`passesOnReceived`), so that a chat's jobs stay as small as the message.
 */
export type WebhookMessage = z.infer<typeof webhookMessageSchema> & { received?: ReceivedMessage | undefined };
