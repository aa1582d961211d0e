import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../shared/constant-time.js';

/** Slack's own window: a request signed longer ago than this is refused as a possible replay. */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

export type SlackSignatureCheck =
  /** `usableUntil`: epoch seconds until which the same request would still pass, and must be remembered. */
  { ok: true; usableUntil: number } | { ok: false; reason: 'missing_headers' | 'stale_timestamp' | 'bad_signature' };

export interface SlackSignedRequest {
  timestamp: string | undefined;
  signature: string | undefined;
  /** The body exactly as it arrived: a re-encoded form would not match Slack's signature. */
  rawBody: string;
}

/**
 * Verifies a request as Slack signs it (`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>`).
 * Whether a valid signature was used before is the table's to say (TriageStore.firstUse): a
 * container's memory would let a click replayed into another container through.
 */
export function verifySlackSignature(request: SlackSignedRequest, signingSecret: string, nowMs: number): SlackSignatureCheck {
  const { timestamp, signature, rawBody } = request;
  if (!timestamp || !signature) return { ok: false, reason: 'missing_headers' };
  const t = Number(timestamp);
  const nowSeconds = Math.floor(nowMs / 1000);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowSeconds - t) > SLACK_SIGNATURE_WINDOW_SECONDS) {
    return { ok: false, reason: 'stale_timestamp' };
  }
  const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
  if (!constantTimeEqual(signature, expected)) return { ok: false, reason: 'bad_signature' };
  return { ok: true, usableUntil: t + SLACK_SIGNATURE_WINDOW_SECONDS };
}
