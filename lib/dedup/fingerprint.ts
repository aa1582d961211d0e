import { createHash } from 'node:crypto';
import type { WebhookMessage } from '../message/schema.js';
import { canonicalJson } from '../shared/json.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The record id for one alert at one destination: a hash of the message's content
 * (`metadata` and `payload`, whatever the request id) and the destination's name. The table
 * learns nothing from it: no text, no name, no URL.
 */
export function deliveryRecordId(message: WebhookMessage, destination: string): string {
  const content = sha256(canonicalJson({ metadata: message.metadata, payload: message.payload }));
  return sha256(`${content}\n${destination}`);
}
