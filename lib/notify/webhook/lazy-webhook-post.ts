// Imported with import() by service.ts on the first post to a webhook destination, and bundled on
// its own (a lazy-*.ts module). It posts with the port's posting (KindSettings.posting), whose
// transport follows no redirect and whose reading of a post without an answer is the cold path's.
import { createHmac } from 'node:crypto';
import type { PostAnswer, Posting } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import { outcomeOfStatus } from '../../chat/status.js';
import { alertEvent, eventBody, MAX_BODY_BYTES, type WebhookPost } from './event.js';
import { SECRET_PREFIX } from './secret.js';

/**
 * The Standard Webhooks headers of one attempt: the message's id, the attempt's time (epoch
 * seconds: a receiver refuses one more than 5 minutes off, so a retry is signed anew), and
 * `v1,` + the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with the secret's decoded bytes.
 */
export function signatureHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
}

/**
 * A receiver's answer by the status rule every kind shares: 2xx delivered; 429, 408 and 5xx
 * retryable (after Retry-After where it says one); any other status refused. The reason is the
 * status alone: a receiver's body is its own text, which stays out of reasons.
 */
export const classifyWebhookAnswer = ({ status, retryAfter }: PostAnswer): PostOutcome =>
  outcomeOfStatus(status, `http_${status}`, retryAfter);

/** Posts one event: built here for an alert, or built already (a triage note, a summary); signed for this attempt. */
export async function postWebhook(
  posting: Posting,
  url: string,
  post: WebhookPost,
  options: PostOptions,
  now: () => number = Date.now,
): Promise<PostOutcome> {
  const made = post();
  const event = 'alert' in made ? alertEvent(made.alert, now()) : made.event;
  const body = eventBody(event);
  // The relay takes bodies far below this; should that change, an event too large is refused, never cut.
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) return { kind: 'refused', reason: 'event_too_large' };
  const headers = signatureHeaders(made.destination.secret, event.id, Math.floor(now() / 1000), body);
  return posting.send(url, body, { timeoutMs: options.timeoutMs, headers }, classifyWebhookAnswer);
}
