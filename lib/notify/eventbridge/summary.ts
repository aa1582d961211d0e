// A week's summary as one EventBridge event (detail-type `Cost Alert Summary`): data for a rule
// and its targets, not a message, so each anomaly is a record rather than a line. Loaded with
// the kind's extras (lazy-eventbridge-extras.ts).
import { isoSeconds } from '../../format/alert.js';
import { mostThatFit, notShownLine, quietLine, type SummaryAnomaly, type SummaryWeek, summaryCounts } from '../../format/summary.js';
import { type EventBridgeEvent, MAX_ENTRY_BYTES } from './lazy-eventbridge-post.js';

/** Room for the entry's other parts (source, detail-type, bus) and the request around it. */
const ENVELOPE_BYTES = 2_048;

const record = (anomaly: SummaryAnomaly) => ({
  title: anomaly.title,
  account: anomaly.account,
  firstSeen: isoSeconds(anomaly.firstSeen),
  updates: anomaly.updates,
  state: anomaly.state,
  ...(anomaly.by !== undefined ? { by: anomaly.by } : {}),
  ...(anomaly.at !== undefined ? { at: isoSeconds(anomaly.at) } : {}),
  ...(anomaly.until !== undefined ? { until: isoSeconds(anomaly.until) } : {}),
  ...(anomaly.link ? { triageUrl: anomaly.link } : {}),
});

function event(destination: string, week: SummaryWeek, shown: number): EventBridgeEvent {
  const hidden = week.anomalies.length - shown;
  return {
    detailType: 'Cost Alert Summary',
    detail: {
      destination,
      week: { from: isoSeconds(week.from), to: isoSeconds(week.to), timeZone: week.timeZone },
      counts: week.counts,
      summary: week.anomalies.length === 0 ? quietLine(week) : summaryCounts(week),
      anomalies: week.anomalies.slice(0, shown).map(record),
      ...(hidden > 0 ? { notShown: hidden, cut: notShownLine(hidden) } : {}),
    },
  };
}

/** The detail as the request carries it: a JSON string inside the request's JSON, escaped once more. */
const requestBytes = (value: EventBridgeEvent) => Buffer.byteLength(JSON.stringify(JSON.stringify(value.detail)));

/**
 * A week as one event on the destination's bus: the counts, then a record per anomaly, the open
 * ones first, as many as fit an entry, and how many more there are. A quiet week has none.
 */
export function eventBridgeSummary(week: SummaryWeek): EventBridgeEvent {
  const shown = mostThatFit(
    week.anomalies.length,
    (n) => requestBytes(event(week.destination, week, n)) <= MAX_ENTRY_BYTES - ENVELOPE_BYTES,
  );
  return event(week.destination, week, shown);
}
