// Imported with import() by service.ts on the first post to a Teams destination, and bundled on
// its own (a lazy-*.ts module). It posts with the port's posting (service.ts says why).
import type { Posting } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import { formatTeamsMessage, type TeamsMessage, type TeamsPost } from './format.js';
import { classifyTeamsAnswer } from './post.js';

/** The card a post sends: an alert's, made here, or the message it carries made already. */
export const teamsMessage = (payload: TeamsPost): TeamsMessage => (Array.isArray(payload) ? formatTeamsMessage(...payload) : payload);

/** Posts a card to a Workflows webhook: an alert, made into its card here, or a message made already. */
export function postToTeams(posting: Posting, url: string, payload: TeamsPost, options: PostOptions): Promise<PostOutcome> {
  return posting.json<TeamsMessage>(classifyTeamsAnswer)(url, teamsMessage(payload), options);
}
