// The events a webhook destination receives, as Standard Webhooks lays them out: `type`,
// `timestamp` and `data`, signed under a `webhook-id` that names the message. Data for a
// receiver's code, not a message people read: the alert as the platform sent it, nothing escaped
// or cut. Pure: the lazily loaded poster and extras build events with it.
import { createHash } from 'node:crypto';
import type { ChatService } from '../../chat/service.js';
import { isoSeconds } from '../../format/alert.js';
import { mostThatFit, type SummaryAnomaly, type SummaryWeek } from '../../format/summary.js';
import { canonicalJson } from '../../shared/json.js';
import type { TriageNote } from '../kind.js';
import type { WebhookDestination } from './config.js';

/** Every event's `type`: what a receiver switches on. */
export const WEBHOOK_EVENT_TYPES = {
  opened: 'cost_alert.opened',
  updated: 'cost_alert.updated',
  triaged: 'cost_alert.triaged',
  escalated: 'cost_alert.escalated',
  summary: 'cost_alert.summary',
} as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[keyof typeof WEBHOOK_EVENT_TYPES];

/**
 * The most bytes of JSON one event's body may have. The relay takes alerts of at most 64 KiB, so
 * an alert's event stays far below it (one above it is refused, never cut); a long week's summary
 * names as many anomalies as fit, and how many it leaves out.
 */
export const MAX_BODY_BYTES = 256 * 1024;

/** One event: its body (`type`, `timestamp`, `data`) and the `webhook-id` it is sent under. */
export interface WebhookEvent {
  /**
   * Derived from what the message is (its type, destination, anomaly, update and content), never
   * drawn per attempt: every retry of one message carries the same id, so a receiver drops
   * duplicates by it, and each distinct event has its own.
   */
  id: string;
  type: WebhookEventType;
  /** When the event happened, ISO 8601: an alert's when it was sent, a triage action's when it was taken, a summary's when it was made. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** What the service's `format` was called with: the alert, the destination, its place in its anomaly, its triage controls, its context. */
export type WebhookAlert = Parameters<ChatService<unknown, WebhookDestination>['format']>;

/**
 * What the webhook service posts: an alert, whose event the lazily loaded poster builds, or an
 * event built already (a triage note, a summary), with the destination whose secret signs it.
 * Behind a function, so that whatever serializes a payload by mistake (a log line, a queue
 * message) finds nothing in it, least of all the secret.
 */
export type WebhookPost = () => { destination: WebhookDestination } & ({ alert: WebhookAlert } | { event: WebhookEvent });

/** A `webhook-id` from the parts that make a message what it is: `msg_` and 128 bits of their hash. */
export const messageId = (parts: readonly unknown[]): string =>
  `msg_${createHash('sha256').update(canonicalJson(parts)).digest('hex').slice(0, 32)}`;

/**
 * The event of an alert: opened, updated (a follow-up), or escalated (delivered here because it
 * waited unacknowledged elsewhere). Its data says where it went (the destination's name), which
 * anomaly and which update of it (with what someone decided, where a follow-up carries that),
 * the metadata and payload exactly as the relay received them, the cost centers of its account,
 * and the Triage link and the cost-trend picture where there are.
 */
export function alertEvent([message, , anomaly, triage, context]: WebhookAlert, nowMs: number): WebhookEvent {
  const followUp = anomaly?.kind === 'follow_up' ? anomaly : undefined;
  const escalation = context?.escalation;
  const type = escalation ? WEBHOOK_EVENT_TYPES.escalated : followUp ? WEBHOOK_EVENT_TYPES.updated : WEBHOOK_EVENT_TYPES.opened;
  const now = Math.floor(nowMs / 1000);
  const update = followUp?.updates ?? 0;
  const mark = followUp?.triage;
  return {
    // The validated content, as the dedup table tells alerts apart: what a queued retry carries
    // again exactly, whereas the body as received may round-trip its numbers differently.
    id: messageId([
      type,
      context?.destination,
      context?.anomalyId,
      update,
      message.metadata,
      message.payload,
      escalation ? [escalation.from, escalation.afterMinutes] : null,
    ]),
    type,
    timestamp: isoSeconds(now),
    data: {
      destination: context?.destination,
      anomaly: {
        id: context?.anomalyId,
        update,
        // An opening is first seen as it is posted; a follow-up carries the time the table kept.
        firstSeen: followUp?.firstSeenAt ?? isoSeconds(now),
        ...(mark ? { triage: { state: mark.state, by: mark.by, at: isoSeconds(mark.at) } } : {}),
      },
      metadata: message.received?.metadata ?? message.metadata,
      payload: message.received?.payload ?? message.payload,
      ...(context?.costCenters?.length ? { costCenters: context.costCenters.map(({ id, name }) => ({ id, name })) } : {}),
      ...(triage && 'link' in triage ? { triageUrl: triage.link } : {}),
      // The picture of the account's daily cost, where the configuration asks for one (docs/platform.md).
      ...(context?.chartUrl ? { chartUrl: context.chartUrl } : {}),
      ...(escalation ? { escalatedFrom: escalation.from, afterMinutes: escalation.afterMinutes } : {}),
    },
  };
}

/**
 * The event of an action taken through the anomaly's Triage link: which anomaly (as its alerts
 * named it), the action, who (as typed) and when, and what the link carries of the alert (its
 * title and account: the table holds no alert text, so the alert as received is not there).
 */
export function triageEvent(note: TriageNote): WebhookEvent {
  const type = WEBHOOK_EVENT_TYPES.triaged;
  return {
    id: messageId([type, note.destination, note.anomalyId, note.action, note.at, note.by]),
    type,
    timestamp: isoSeconds(note.at),
    data: {
      destination: note.destination,
      anomaly: { id: note.anomalyId },
      ...(note.title !== undefined ? { title: note.title } : {}),
      ...(note.account !== undefined ? { account: note.account } : {}),
      action: note.action,
      by: note.by,
      at: isoSeconds(note.at),
      ...(note.link ? { triageUrl: note.link } : {}),
    },
  };
}

const record = (anomaly: SummaryAnomaly) => ({
  id: anomaly.id,
  title: anomaly.title,
  accountId: anomaly.accountId,
  ...(anomaly.accountName ? { accountName: anomaly.accountName } : {}),
  state: anomaly.state,
  firstSeen: isoSeconds(anomaly.firstSeen),
  updates: anomaly.updates,
  // Every record has it, so a receiver's mapping finds it on each: null where nobody triaged it.
  triagedBy: anomaly.by ?? null,
  ...(anomaly.at !== undefined ? { triagedAt: isoSeconds(anomaly.at) } : {}),
  ...(anomaly.until !== undefined ? { snoozedUntil: isoSeconds(anomaly.until) } : {}),
  ...(anomaly.link ? { triageUrl: anomaly.link } : {}),
});

function weekEvent(week: SummaryWeek, shown: number): WebhookEvent {
  const type = WEBHOOK_EVENT_TYPES.summary;
  const hidden = week.anomalies.length - shown;
  return {
    id: messageId([type, week.destination, week.from, week.to]),
    type,
    timestamp: isoSeconds(week.asOf),
    data: {
      destination: week.destination,
      from: isoSeconds(week.from),
      to: isoSeconds(week.to),
      timeZone: week.timeZone,
      counts: week.counts,
      anomalies: week.anomalies.slice(0, shown).map(record),
      ...(hidden > 0 ? { notShown: hidden } : {}),
    },
  };
}

/** The body a receiver gets: `type`, `timestamp`, `data`. */
export const eventBody = (event: WebhookEvent): string =>
  JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });

/**
 * A week as one event: the counts, then a record per anomaly, the open ones first, as many as fit
 * the body's limit, and how many more there are (`notShown`). A quiet week has no records.
 */
export function summaryEvent(week: SummaryWeek): WebhookEvent {
  const shown = mostThatFit(week.anomalies.length, (n) => Buffer.byteLength(eventBody(weekEvent(week, n))) <= MAX_BODY_BYTES);
  return weekEvent(week, shown);
}
