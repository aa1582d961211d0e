import { createHash } from 'node:crypto';
import { anomalyIdentity } from '../../message/anomaly.js';
import type { WebhookMessage } from '../../message/schema.js';

/**
 * Alerts of one anomaly share a thread (`anomalyIdentity`, as lib/dedup identifies it), so a
 * follow-up is a reply under its opening. A hash, so that the key carries no text from the
 * alert and stays short.
 */
export function threadKeyFor(message: WebhookMessage): string {
  return `cost-alert-${createHash('sha256').update(anomalyIdentity(message)).digest('hex').slice(0, 32)}`;
}
