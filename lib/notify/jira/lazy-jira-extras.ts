// Jira's part beyond posting an alert: the triage note. Bundled on its own (a lazy-*.ts module)
// and loaded by triage when it needs it.
import type { KindExtras } from '../kind.js';
import type { JiraDestination } from './config.js';
import type { JiraPost } from './payload.js';

export const extras: KindExtras<JiraDestination> = {
  // A comment on the anomaly's issue, which the poster refuses (`no_issue`) when the table knows none.
  triageNote:
    (destination, note): JiraPost =>
    () => ({ note: note.line, destination, opening: note.opening }),
};
