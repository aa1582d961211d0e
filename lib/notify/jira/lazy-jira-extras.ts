// Jira's parts beyond posting an alert: the triage note and the weekly summary. Bundled on its
// own (a lazy-*.ts module) and loaded by triage and summary when they need it.
import type { KindExtras, SummaryExtras } from '../kind.js';
import type { JiraDestination } from './config.js';
import type { JiraPost } from './payload.js';
import { jiraSummary } from './summary.js';

export const extras: KindExtras<JiraDestination> & SummaryExtras<JiraDestination> = {
  // A comment on the anomaly's issue, which the poster refuses (`no_issue`) when the table knows none.
  triageNote:
    (destination, note): JiraPost =>
    () => ({ note: note.line, destination, opening: note.opening }),
  // One issue a week in the destination's project.
  summary: jiraSummary,
};
