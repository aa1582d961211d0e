import * as z from 'zod';

// The platform documents few fields and no types beyond "string": accept numbers where an
// id or time might come as one, treat null as absent, and ignore members we do not know.
const text = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((value) => (value === null || value === undefined ? undefined : String(value)));

export const webhookMessageSchema = z.object({
  metadata: z.object({
    object_type: z.string().trim().min(1),
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
    .refine((p) => Boolean(p.title?.trim() || p.message?.trim()), {
      message: 'needs a non-empty title or message',
    }),
});

export type WebhookMessage = z.infer<typeof webhookMessageSchema>;
