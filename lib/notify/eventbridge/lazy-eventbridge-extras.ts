// EventBridge's part beyond posting an alert: the event a triage action puts on the bus.
// Bundled on its own (a lazy-*.ts module) and loaded by triage when it needs it.
import type { KindExtras } from '../kind.js';
import type { EventBridgeDestination } from './config.js';
import type { EventBridgeEvent } from './lazy-eventbridge-post.js';

export const extras: KindExtras<EventBridgeDestination> = {
  // An event of its own detail-type, so that a rule for alerts does not also match decisions:
  // the anomaly it concerns (the alert's `anomaly.id`), the action, who (as typed, made inert) and when.
  triageNote: (_destination, note): EventBridgeEvent => ({
    detailType: 'Cost Alert Triage',
    detail: {
      destination: note.destination,
      anomaly: { id: note.anomalyId },
      triage: { action: note.action, by: note.by, at: new Date(note.at * 1000).toISOString().replace('.000Z', 'Z') },
    },
  }),
};
