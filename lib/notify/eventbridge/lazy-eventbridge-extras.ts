// EventBridge's parts beyond posting an alert: the events a triage action and a weekly summary
// put on the bus. Bundled on its own (a lazy-*.ts module) and loaded by triage and summary.
import { isoSeconds } from '../../format/alert.js';
import type { KindExtras, SummaryExtras } from '../kind.js';
import type { EventBridgeDestination } from './config.js';
import type { EventBridgeEvent } from './lazy-eventbridge-post.js';
import { eventBridgeSummary } from './summary.js';

export const extras: KindExtras<EventBridgeDestination> & SummaryExtras<EventBridgeDestination> = {
  // An event of its own detail-type, so that a rule for alerts does not also match decisions:
  // the anomaly it concerns (the alert's `anomaly.id`), the action, who (as typed, made inert) and when.
  triageNote: (_destination, note): EventBridgeEvent => ({
    detailType: 'Cost Alert Triage',
    detail: {
      destination: note.destination,
      anomaly: { id: note.anomalyId },
      triage: { action: note.action, by: note.by, at: isoSeconds(note.at) },
    },
  }),
  // One event a week, of its own detail-type: a rule for alerts does not match it.
  summary: (_destination, week) => eventBridgeSummary(week),
};
