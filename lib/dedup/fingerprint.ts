import { createHash } from 'node:crypto';
import type { WebhookMessage } from '../message/schema.js';

/** JSON with object keys sorted at every level, so the same content always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

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
