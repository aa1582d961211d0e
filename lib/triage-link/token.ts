import * as z from 'zod/mini';
import { DIGEST_TOKEN_PREFIX, readDigestTokenBody, unpackId } from '../format/digest-token.js';
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

/** A digest's link (lib/format/digest-token.ts): the destination and each anomaly the digest names, with what the page shows of it. */
const digestTokenSchema = z.strictObject({
  d: z.string().check(z.minLength(1)),
  n: z.array(z.tuple([z.string(), z.string(), z.string()])).check(z.minLength(1)),
  k: z.optional(z.string()),
  e: z.int(),
});

export interface DigestToken {
  d: string;
  anomalies: Array<{ anomalyId: string; title: string; account: string }>;
  /** The digest's own thread (Google Chat), where the notes of its page go. */
  k?: string;
  e: number;
}

export type TokenReading =
  | { ok: true; token: TriageToken }
  | { ok: true; digest: DigestToken }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

function readDigest(body: string): DigestToken | undefined {
  const reading = digestTokenSchema.safeParse(readDigestTokenBody(body));
  if (!reading.success) return undefined;
  const anomalies: DigestToken['anomalies'] = [];
  for (const [packed, title, account] of reading.data.n) {
    const anomalyId = unpackId(packed);
    if (!anomalyId) return undefined;
    anomalies.push({ anomalyId, title, account });
  }
  const { d, k, e } = reading.data;
  return { d, anomalies, ...(k !== undefined ? { k } : {}), e };
}

/** The MAC is checked before anything in the body is believed; an expired token is as good as none. */
export function verifyTriageToken(key: string, supplied: string, nowMs: number): TokenReading {
  const dot = supplied.indexOf('.');
  if (dot <= 0 || supplied.length > 4096) return { ok: false, reason: 'malformed' };
  const body = supplied.slice(0, dot);
  if (!constantTimeEqual(supplied.slice(dot + 1), triageMac(key, body))) return { ok: false, reason: 'bad_signature' };
  if (body.startsWith(DIGEST_TOKEN_PREFIX)) {
    const digest = readDigest(body);
    if (!digest) return { ok: false, reason: 'malformed' };
    return digest.e * 1000 <= nowMs ? { ok: false, reason: 'expired' } : { ok: true, digest };
  }
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
