import * as z from 'zod/mini';
import { constantTimeEqual } from '../shared/constant-time.js';
import { triageMac } from './sign.js';

/**
 * What a triage link carries: which anomaly at which destination, and what the page shows of
 * the alert (the table holds no alert text, so the link must). Short keys keep the URL short;
 * `sign.ts` describes them.
 */
export const triageTokenSchema = z.strictObject({
  a: z.string().check(z.minLength(1)),
  d: z.string().check(z.minLength(1)),
  t: z.string(),
  c: z.string(),
  k: z.optional(z.string()),
  /** Expiry, epoch seconds. */
  e: z.int(),
});
export type TriageToken = z.infer<typeof triageTokenSchema>;

export type TokenReading = { ok: true; token: TriageToken } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/** The MAC is checked before anything in the body is believed; an expired token is as good as none. */
export function verifyTriageToken(key: string, supplied: string, nowMs: number): TokenReading {
  const dot = supplied.indexOf('.');
  if (dot <= 0 || supplied.length > 4096) return { ok: false, reason: 'malformed' };
  const body = supplied.slice(0, dot);
  if (!constantTimeEqual(supplied.slice(dot + 1), triageMac(key, body))) return { ok: false, reason: 'bad_signature' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const reading = triageTokenSchema.safeParse(parsed);
  if (!reading.success) return { ok: false, reason: 'malformed' };
  if (reading.data.e * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, token: reading.data };
}
