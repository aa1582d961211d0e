// A webhook destination's parts beyond posting an alert: the events a triage action and a weekly
// summary send. Bundled on its own (a lazy-*.ts module) and loaded by triage and summary.
import type { KindExtras, SummaryExtras } from '../kind.js';
import type { WebhookDestination } from './config.js';
import { summaryEvent, triageEvent, type WebhookPost } from './event.js';

export const extras: KindExtras<WebhookDestination> & SummaryExtras<WebhookDestination> = {
  triageNote: (destination, note): WebhookPost => {
    const event = triageEvent(note);
    return () => ({ destination, event });
  },
  summary: (destination, week): WebhookPost => {
    const event = summaryEvent(week);
    return () => ({ destination, event });
  },
};
