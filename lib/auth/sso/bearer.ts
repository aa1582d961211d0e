/**
 * Real access tokens are a few kilobytes; the bound keeps the work a stranger can cause small
 * and refuses oversized junk before any parsing.
 */
export const MAX_TOKEN_LENGTH = 16_384;

// Three base64url parts. A comma (two Authorization headers joined by API Gateway), a second
// scheme or any other character makes the header malformed rather than guessed at.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*) *$/i;
const BEARER_SCHEME = /^Bearer(?: |$)/i;

export type BearerToken = { ok: true; token: string } | { ok: false; reason: 'missing_token' | 'malformed' };

/** Reads `Authorization: Bearer <JWT>`; says why when there is no usable token, never echoing it. */
export function readBearerToken(header: string | undefined): BearerToken {
  if (!header || !BEARER_SCHEME.test(header)) return { ok: false, reason: 'missing_token' };
  if (header.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'malformed' };
  const token = BEARER.exec(header)?.[1];
  return token ? { ok: true, token } : { ok: false, reason: 'malformed' };
}
