import * as z from 'zod/mini';
import '../../validation/messages.js';
import { endpointSchema } from '../options.js';
import { isSigningSecret } from './secret.js';

/** Any receiver of signed JSON: n8n, Zapier, an internal service. */
export const webhookDestinationSchema = z.strictObject({
  // Required: any host may take webhooks, so no URL could say it is one.
  type: z.literal('webhook'),
  /** Where the events are posted (https; plain http only for loopback hosts, for local use). */
  url: endpointSchema,
  /** The receiver's signing secret: sent nowhere, only used to sign (webhook-signature). */
  secret: z.string().check(
    z.refine(isSigningSecret, {
      message: 'must be "whsec_" followed by the base64 of 24 to 64 random bytes (a Standard Webhooks secret)',
    }),
  ),
});
export type WebhookDestination = z.infer<typeof webhookDestinationSchema>;
