// What a Triage link, a Slack app button and a cost event carry of an alert: sender text on one
// line, short. On the relay's path, so nothing here but string work.
import type { WebhookMessage } from '../message/schema.js';

/** As long as a Triage link carries them. */
export const TITLE_MAX = 150;
export const ACCOUNT_MAX = 100;
/** A cloud account id, as a chart link and a cost event name it. */
export const ACCOUNT_ID_MAX = 64;

export const oneLine = (text: string | undefined, max: number): string => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, max);

/** The anomaly's title and account id, as a cost event is written with them (lib/cost-events). */
export const alertSubject = (message: WebhookMessage): { title: string; accountId: string } => ({
  title: oneLine(message.payload.title, TITLE_MAX),
  accountId: oneLine(message.payload.account_id, ACCOUNT_ID_MAX),
});
