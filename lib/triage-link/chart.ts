import { createHmac } from 'node:crypto';
import * as z from 'zod/mini';
import { constantTimeEqual } from '../shared/constant-time.js';
import { TRIAGE_TOKEN_DAYS } from './sign.js';

/**
 * A cost-trend picture's link: the account and the day it is drawn up to, and the account's name
 * for its title, signed with the triage key. Its MAC is taken over a body of its own kind, so a
 * triage link's token is never a picture's, nor the other way round.
 */
export const chartTokenSchema = z.strictObject({
  /** The cloud account id. */
  a: z.string().check(z.minLength(1), z.maxLength(64)),
  /** The anomaly's day, `YYYY-MM-DD` (UTC): the last of the 30 the picture shows. */
  d: z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/)),
  /** The account's name as the alert gave it, for the title. */
  n: z.optional(z.string().check(z.maxLength(120))),
  /** Expiry, epoch seconds. */
  e: z.int(),
});
export type ChartToken = z.infer<typeof chartTokenSchema>;

const chartMac = (key: string, body: string): string => createHmac('sha256', key).update(`chart:${body}`).digest('base64url');

export function signChartToken(key: string, fields: Omit<ChartToken, 'e'>, nowMs: number): string {
  const body = Buffer.from(JSON.stringify({ ...fields, e: Math.floor(nowMs / 1000) + TRIAGE_TOKEN_DAYS * 86_400 }), 'utf8').toString(
    'base64url',
  );
  return `${body}.${chartMac(key, body)}`;
}

/** The picture's link on the origin its alert arrived on. */
export const chartLink = (origin: string, key: string, fields: Omit<ChartToken, 'e'>, nowMs: number): string =>
  `${origin}/chart/${signChartToken(key, fields, nowMs)}`;

export type ChartTokenReading = { ok: true; token: ChartToken } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/** The MAC is checked before anything in the body is believed. */
export function verifyChartToken(key: string, supplied: string, nowMs: number): ChartTokenReading {
  const dot = supplied.indexOf('.');
  if (dot <= 0 || supplied.length > 1024) return { ok: false, reason: 'malformed' };
  const body = supplied.slice(0, dot);
  if (!constantTimeEqual(supplied.slice(dot + 1), chartMac(key, body))) return { ok: false, reason: 'bad_signature' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const reading = chartTokenSchema.safeParse(parsed);
  if (!reading.success) return { ok: false, reason: 'malformed' };
  if (reading.data.e * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, token: reading.data };
}

/** The day an alert is about: its own timestamp's UTC day where it says one, else the day it arrived. */
export function alertDay(timestamp: string | undefined, nowMs: number): string {
  const parsed = timestamp
    ? Date.parse(timestamp.includes('T') || timestamp.includes(' ') ? timestamp.replace(' ', 'T') : timestamp)
    : Number.NaN;
  const at = Number.isFinite(parsed) && parsed > 946_684_800_000 && parsed < nowMs + 86_400_000 ? parsed : nowMs;
  return new Date(at).toISOString().slice(0, 10);
}
