import { deflateRawSync, inflateRawSync } from 'node:zlib';

// What a digest's Triage link carries: the page it opens lists each anomaly the digest names, with
// its own actions, and the table holds no alert text, so the link must. Here, below the closer
// that splits digests and the signer that signs them, so that both measure a link the same way
// whether or not the key can be read: a closing that resumes splits exactly as the first one did.

/**
 * The longest digest link: Slack's limit on a button's URL, the strictest of the chats (Teams and
 * Google Chat take more, and API Gateway's request line more still).
 */
export const DIGEST_LINK_MAX = 3_000;

/** What tells a digest token's body from an anomaly token's (base64url JSON, which starts `eyJ`). */
export const DIGEST_TOKEN_PREFIX = 'g';

/** The MAC after the body: base64url of an HMAC-SHA256. */
const MAC_CHARS = 43;
/** An expiry signed a little later than it was measured may deflate a byte or two longer. */
const MEASURE_MARGIN = 16;
/** The most a token's body inflates to: far beyond what fits the link, far below harm. */
const MAX_INFLATED_BYTES = 64 * 1024;

/** How much of each text the page shows: enough to tell the anomalies apart, short enough for many per link. */
export const DIGEST_PAGE_LIMITS = { title: 60, account: 32 } as const;

/** One anomaly as a digest's page lists it: its record id and what the page shows of it. */
export interface DigestPageAnomaly {
  /** `anomaly#<sha-256 hex>` (anomalyRecordId). */
  anomalyId: string;
  title: string;
  account: string;
}

/** What a digest link names: the destination and the anomalies, in the digest's order. */
export interface DigestPageFields {
  destination: string;
  anomalies: readonly DigestPageAnomaly[];
  /** The digest's own thread where the kind threads (Google Chat), for the notes its page posts. */
  thread?: string | undefined;
}

const ANOMALY_ID = /^anomaly#([0-9a-f]{64})$/;

/** An anomaly id in 43 characters rather than 72: its hash's bytes. */
const packId = (anomalyId: string): string => {
  const hex = ANOMALY_ID.exec(anomalyId)?.[1];
  if (!hex) throw new TypeError('not an anomaly record id');
  return Buffer.from(hex, 'hex').toString('base64url');
};

export const unpackId = (packed: string): string | undefined => {
  const bytes = Buffer.from(packed, 'base64url');
  return bytes.length === 32 && bytes.toString('base64url') === packed ? `anomaly#${bytes.toString('hex')}` : undefined;
};

/**
 * The token's body: `g` and the base64url of the raw-deflated JSON `{ d, n: [[id, title, account], …], k?, e }`.
 * Compressed, because a storm's titles and accounts repeat; the ids do not, and are packed instead.
 */
export function digestTokenBody(fields: DigestPageFields, expiresAtSeconds: number): string {
  const json = JSON.stringify({
    d: fields.destination,
    n: fields.anomalies.map(({ anomalyId, title, account }) => [packId(anomalyId), title, account]),
    ...(fields.thread !== undefined ? { k: fields.thread } : {}),
    e: expiresAtSeconds,
  });
  return DIGEST_TOKEN_PREFIX + deflateRawSync(Buffer.from(json, 'utf8'), { level: 9 }).toString('base64url');
}

/** The body's JSON, undefined when it does not inflate; read only after its MAC was checked. */
export function readDigestTokenBody(body: string): unknown {
  if (!body.startsWith(DIGEST_TOKEN_PREFIX)) return undefined;
  try {
    const json = inflateRawSync(Buffer.from(body.slice(DIGEST_TOKEN_PREFIX.length), 'base64url'), {
      maxOutputLength: MAX_INFLATED_BYTES,
    }).toString('utf8');
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/** An expiry of as many digits as any a link gets for long to come: what the length is measured with. */
const MEASURED_EXPIRY = 4_102_444_800;

/**
 * The length of the link `origin/triage/<body>.<mac>` these fields make, whatever its expiry (with
 * room for the few bytes another expiry may deflate to): the same before and after the key is read.
 */
export function digestLinkLength(origin: string, fields: DigestPageFields): number {
  return origin.length + '/triage/'.length + digestTokenBody(fields, MEASURED_EXPIRY).length + 1 + MAC_CHARS + MEASURE_MARGIN;
}
