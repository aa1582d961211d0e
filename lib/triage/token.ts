import { createHmac } from 'node:crypto';
import * as z from 'zod/mini';
import { constantTimeEqual } from '../auth/constant-time.js';

/** How long a triage link works: long enough for an anomaly's life, short enough that a leaked link dies. */
export const TRIAGE_TOKEN_DAYS = 30;

/**
 * What a triage link carries: which anomaly at which destination, and what the page shows of
 * the alert (the table holds no alert text, so the link must). Short keys keep the URL short.
 */
export const triageTokenSchema = z.strictObject({
  /** The anomaly's record id (`anomaly#…`). */
  a: z.string().check(z.minLength(1)),
  /** The destination's name in the relay configuration. */
  d: z.string().check(z.minLength(1)),
  /** The alert's title and account, as the page shows them. */
  t: z.string(),
  c: z.string(),
  /** Google Chat's thread key of the anomaly, so that a follow-up lands in its thread. */
  k: z.optional(z.string()),
  /** Expiry, epoch seconds. */
  e: z.int(),
});
export type TriageToken = z.infer<typeof triageTokenSchema>;

const mac = (key: string, body: string) => createHmac('sha256', key).update(body).digest('base64url');

/** `<base64url JSON>.<base64url HMAC-SHA256>`; the MAC covers the encoded body exactly as sent. */
export function signTriageToken(key: string, token: Omit<TriageToken, 'e'>, nowMs: number): string {
  const full: TriageToken = { ...token, e: Math.floor(nowMs / 1000) + TRIAGE_TOKEN_DAYS * 86_400 };
  const body = Buffer.from(JSON.stringify(full), 'utf8').toString('base64url');
  return `${body}.${mac(key, body)}`;
}

export type TokenReading = { ok: true; token: TriageToken } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/** The MAC is checked before anything in the body is believed; an expired token is as good as none. */
export function verifyTriageToken(key: string, supplied: string, nowMs: number): TokenReading {
  const dot = supplied.indexOf('.');
  if (dot <= 0 || supplied.length > 4096) return { ok: false, reason: 'malformed' };
  const body = supplied.slice(0, dot);
  if (!constantTimeEqual(supplied.slice(dot + 1), mac(key, body))) return { ok: false, reason: 'bad_signature' };
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
