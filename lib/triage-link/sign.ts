import { createHmac } from 'node:crypto';
import { type DigestPageFields, digestTokenBody } from '../format/digest-token.js';

/** How long a triage link works: long enough for an anomaly's life, short enough that a leaked link dies. */
export const TRIAGE_TOKEN_DAYS = 30;

/** What a link names and carries; `e`, its expiry, is added when it is signed. */
export interface TriageTokenFields {
  /** The anomaly's record id (`anomaly#…`). */
  a: string;
  /** The destination's name in the relay configuration. */
  d: string;
  /** The alert's title and account, as the page shows them. */
  t: string;
  c: string;
  /** Google Chat's thread key of the anomaly, so that a follow-up lands in its thread. */
  k?: string;
}

export const triageMac = (key: string, body: string): string => createHmac('sha256', key).update(body).digest('base64url');

/** Epoch seconds when a link signed now stops working. */
const expiryOf = (nowMs: number): number => Math.floor(nowMs / 1000) + TRIAGE_TOKEN_DAYS * 86_400;

/** `<base64url JSON>.<base64url HMAC-SHA256>`; the MAC covers the encoded body exactly as sent. */
export function signTriageToken(key: string, fields: TriageTokenFields, nowMs: number): string {
  const body = Buffer.from(JSON.stringify({ ...fields, e: expiryOf(nowMs) }), 'utf8').toString('base64url');
  return `${body}.${triageMac(key, body)}`;
}

/** A digest's token (lib/format/digest-token.ts): its compressed body, then the same MAC over the body as sent. */
export function signDigestToken(key: string, fields: DigestPageFields, nowMs: number): string {
  const body = digestTokenBody(fields, expiryOf(nowMs));
  return `${body}.${triageMac(key, body)}`;
}

/** An account as a link and a summary name it: `name (id)`, or whichever of the two is known. */
export const accountLabel = (name: string | undefined, id: string | undefined): string =>
  name && id ? `${name} (${id})` : name || id || '';

/** The Triage link of an anomaly at a destination, on the origin its alert arrived on. */
export const triageLink = (origin: string, key: string, fields: TriageTokenFields, nowMs: number): string =>
  `${origin}/triage/${signTriageToken(key, fields, nowMs)}`;
