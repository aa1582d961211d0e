// A Standard Webhooks secret's form, apart from the configuration's schema: the lazily bundled
// poster reads the prefix, and a module of its own keeps zod out of that bundle.

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
