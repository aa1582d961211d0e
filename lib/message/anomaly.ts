import { createHash } from 'node:crypto';
import type { WebhookMessage } from './schema.js';

const collapsed = (text: string | undefined): string => (text ?? '').replace(/\s+/g, ' ').trim();

/**
 * What makes two alerts one anomaly (the contract's "Identity"): object type, account and
 * title, runs of whitespace collapsed and ends trimmed, case kept. A title-less alert is told
 * apart by its message instead, or every title-less alert of an account would be one anomaly,
 * snoozed and threaded together. Titled alerts keep the three parts alone, so the ids and
 * thread keys of anomalies already in flight stay what they were.
 */
export function anomalyIdentity(message: WebhookMessage): string {
  const { metadata, payload } = message;
  const title = collapsed(payload.title);
  const parts = [metadata.object_type, payload.account_id?.trim() ?? '', title];
  if (title === '') parts.push(collapsed(payload.message));
  return JSON.stringify(parts);
}

/**
 * The anomaly one alert belongs to at one destination (`anomalyIdentity`), so a re-worded
 * message or a new figure is a follow-up of the same anomaly. Prefixed, so it never meets a
 * delivery record's id.
 */
export function anomalyRecordId(message: WebhookMessage, destination: string): string {
  return `anomaly#${createHash('sha256')
    .update(`${anomalyIdentity(message)}\n${destination}`)
    .digest('hex')}`;
}

/**
 * A report (the platform's `recommendation_report`, or any `*_report`): a digest of its own, not
 * an anomaly, so a weekly summary of anomalies does not count it.
 */
export const isReport = (message: WebhookMessage): boolean => /_report$/i.test(message.metadata.object_type.trim());
