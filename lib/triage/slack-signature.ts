import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../auth/constant-time.js';

/** Slack's own window: a request signed longer ago than this is refused as a possible replay. */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

export type SlackSignatureCheck =
  | { ok: true }
  | { ok: false; reason: 'missing_headers' | 'stale_timestamp' | 'bad_signature' | 'replayed' };

export interface SlackSignedRequest {
  timestamp: string | undefined;
  signature: string | undefined;
  /** The body exactly as it arrived: a re-encoded form would not match Slack's signature. */
  rawBody: string;
}

/**
 * Verifies a request as Slack signs it (`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>`).
 * Signatures seen within the window are remembered, so a captured click sent again is refused
 * even while its timestamp is still fresh.
 */
export function createSlackVerifier(now: () => number = Date.now) {
  const seen = new Map<string, number>();
  return (request: SlackSignedRequest, signingSecret: string): SlackSignatureCheck => {
    const { timestamp, signature, rawBody } = request;
    if (!timestamp || !signature) return { ok: false, reason: 'missing_headers' };
    const t = Number(timestamp);
    const nowSeconds = Math.floor(now() / 1000);
    if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowSeconds - t) > SLACK_SIGNATURE_WINDOW_SECONDS) {
      return { ok: false, reason: 'stale_timestamp' };
    }
    const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
    if (!constantTimeEqual(signature, expected)) return { ok: false, reason: 'bad_signature' };
    for (const [key, at] of seen) if (at < nowSeconds - SLACK_SIGNATURE_WINDOW_SECONDS) seen.delete(key);
    if (seen.has(signature)) return { ok: false, reason: 'replayed' };
    seen.set(signature, t);
    return { ok: true };
  };
}
