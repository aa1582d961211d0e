import * as z from 'zod/mini';
import '../../validation/messages.js';
import { endpointSchema } from '../options.js';

/** The prefix Standard Webhooks gives a signing secret. */
export const SECRET_PREFIX = 'whsec_';

/**
 * `whsec_` and the base64 of 24 to 64 random bytes, with or without its padding, as Standard
 * Webhooks' libraries generate and read them: the decoded bytes are the HMAC key. Nothing else
 * (base64url, stray characters) is taken, as Node would decode it to another key than a receiver's
 * library. The message names the form only, as the value is a secret.
 */
export function isSigningSecret(value: string): boolean {
  if (!value.startsWith(SECRET_PREFIX)) return false;
  const encoded = value.slice(SECRET_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  const canonical = key.toString('base64');
  return key.length >= 24 && key.length <= 64 && (encoded === canonical || encoded === canonical.replace(/=+$/, ''));
}

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
