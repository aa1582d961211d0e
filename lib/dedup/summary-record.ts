// What an anomaly's item keeps for its destination's weekly summary (lib/summary), where that
// destination has one: the item holds ids and times otherwise, and even here never the message,
// a URL other than the origin the relay was reached on, or a secret. The names below are the
// table's schema: template.yaml declares the index on DedupTable with them. Names and types
// only, so that the anomaly table's lazy module reads them without the formatting code.
import type { WebhookMessage } from '../message/schema.js';

/** The dedup table's index of summarised anomalies: by destination name, then by when each was first seen. */
export const SUMMARY_INDEX = 'summaries';
/** The index's partition key: set only on anomalies at destinations with a summary, so the index is sparse. */
export const SUMMARY_DESTINATION = 'summaryOf';
/** The index's sort key: the anomaly's opening, epoch seconds (an item without one is no anomaly yet). */
export const SUMMARY_FIRST_SEEN = 'firstSeen';
/** What the index projects beside its keys and `id`: all a summary shows. */
export const SUMMARY_ATTRIBUTES = [
  'title',
  'accountId',
  'accountName',
  'origin',
  'thread',
  'followUps',
  'triage',
  'triageBy',
  'triageAt',
  'triageUntil',
] as const;
/** The least time a summarised anomaly's item outlives its first sighting, for the week's summary to find it. */
export const SUMMARY_KEEP_SECONDS = 8 * 86_400;
/**
 * The item attribute that holds the least time an item lives (epoch seconds), so that no later
 * write shortens its life below it: a summary's 8 days, or an escalation's wait (keepAnomaly).
 */
export const KEPT_UNTIL = 'keptUntil';

/** What the relay hands the ledger about an anomaly at a destination with a summary. */
export interface SummaryNote {
  /** The destination's name: the index's partition key. */
  destination: string;
  message: WebhookMessage;
  /** The origin the delivery arrived on: the summary's Triage links lead there. */
  origin?: string | undefined;
  /** The anomaly's thread at the destination (Google Chat's key), carried by its Triage link. */
  thread?: string | undefined;
}

/** What an anomaly's item keeps for the summary: each text one inert line, short. */
export interface SummaryFields {
  destination: string;
  title: string;
  accountId: string;
  accountName: string;
  origin?: string;
  thread?: string;
}
