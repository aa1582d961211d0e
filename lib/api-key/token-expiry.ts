import { parseJson } from '../shared/json.js';

/**
 * When the platform's bearer token expires, from the JWT `exp` claim. The signature is not
 * checked: the platform verifies its own tokens, we only want to know when to expect a new one.
 * Returns null when the token is not a JWT or carries no numeric `exp`.
 */
export function tokenExpiry(token: string): Date | null {
  // The platform sends the token bare, but a "Bearer " prefix must not hide the expiry.
  const jwt = token.replace(/^Bearer\s+/i, '');
  const payload = jwt.split('.')[1];
  if (!payload || !/^[A-Za-z0-9_-]+={0,2}$/.test(payload)) return null;
  const claims = parseJson(Buffer.from(payload, 'base64url').toString('utf8'));
  const exp = claims.ok ? (claims.value as { exp?: unknown } | null)?.exp : undefined;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return null;
  const date = new Date(exp * 1000);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** ISO 8601 to the second, as the contract's examples write it (`2026-01-01T00:00:00Z`). */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
