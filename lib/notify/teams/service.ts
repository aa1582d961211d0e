import { type Posting, postingOver } from '../../chat/post-json.js';
import type { ChatService } from '../../chat/service.js';
import type { TeamsMention } from './config.js';
import type { TeamsPost } from './format.js';

/** More than four requests per second to one workflow webhook are throttled; the margin absorbs jitter. */
export const TEAMS_MIN_INTERVAL_MS = 260;

/**
 * Teams' one service. `format` only gathers what the card is made of; the card is made and posted
 * by a module imported on the first post, so a configuration without Teams never loads or parses it.
 */
export function teamsService(posting: Posting = postingOver()): ChatService<TeamsPost> {
  return {
    // The configuration only lets a Teams mention ({id, name}) reach a Teams destination.
    format: (message, destination, anomaly, triage, context) => [
      message,
      typeof destination.mention === 'object' && destination.mention !== null ? (destination.mention as TeamsMention) : undefined,
      anomaly?.kind === 'follow_up' ? anomaly : undefined,
      triage && 'link' in triage ? triage.link : undefined,
      context?.costCenters,
      context?.escalation,
      context?.chartUrl,
    ],
    // The port's posting is handed over, not bundled again (KindSettings.posting): a redirect it
    // refuses is an error of the cold path's own class, which only its own reading recognises.
    post: async (...post) => (await import('./lazy-teams-post.js')).postToTeams(posting, ...post),
    minIntervalMs: TEAMS_MIN_INTERVAL_MS,
    paceKey: (url) => url,
  };
}
