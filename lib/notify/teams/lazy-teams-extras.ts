// Teams' parts beyond posting an alert: triage notes, digests and weekly summaries. Bundled on its
// own (a lazy-*.ts module) and loaded by delivery-retry, triage and summary when they need it.
import { withoutControls } from '../../format/fit.js';
import { inertText } from '../../format/text.js';
import type { ChatExtras } from '../kind.js';
import type { TeamsDestination } from './config.js';
import { escapeTeamsText, TEAMS_LIMITS, TEAMS_MAX_BYTES, type TeamsPost, teamsCard } from './format.js';
import { teamsMessage } from './lazy-teams-post.js';
import { teamsSummary } from './summary.js';

export const extras: ChatExtras<TeamsDestination> = {
  // A workflow posts what it is given: a short card of one text block.
  triageNote: (_destination, note) => teamsCard([{ type: 'TextBlock', text: escapeTeamsText(note.line), wrap: true }]),
  summary: teamsSummary,
  digest: () => ({
    render: (line) => escapeTeamsText(inertText(withoutControls(line))),
    chars: TEAMS_LIMITS.body,
    maxBytes: TEAMS_MAX_BYTES,
    breakBytes: 2,
    sent: (payload) => teamsMessage(payload as TeamsPost),
  }),
};
