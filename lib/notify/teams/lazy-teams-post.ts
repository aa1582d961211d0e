// Imported with import() by service.ts on the first post to a Teams destination, and bundled on
// its own (a lazy-*.ts module). The JSON poster comes from the cold path (service.ts says why).
import type { createJsonPoster } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import type { NodeFetch } from '../../transport/fetch-over-node-http.js';
import { formatTeamsMessage, type TeamsMessage, type TeamsPost } from './format.js';
import { classifyTeamsAnswer } from './post.js';

/** The card a post sends: an alert's, made here, or the message it carries made already. */
export const teamsMessage = (payload: TeamsPost): TeamsMessage => (Array.isArray(payload) ? formatTeamsMessage(...payload) : payload);

export interface TeamsTools {
  postJson: typeof createJsonPoster;
  transport?: NodeFetch | undefined;
}

/** Posts a card to a Workflows webhook: an alert, made into its card here, or a message made already. */
export function postToTeams(tools: TeamsTools, url: string, payload: TeamsPost, options: PostOptions): Promise<PostOutcome> {
  return tools.postJson<TeamsMessage>(classifyTeamsAnswer, tools.transport)(url, teamsMessage(payload), options);
}
