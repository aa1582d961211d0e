import type { ChatService } from '../../chat/service.js';
import type { NodeFetch } from '../../transport/fetch-over-node-http.js';
import type { TeamsMention } from './config.js';
import { formatTeamsMessage, type TeamsMessage } from './format.js';
import { createTeamsPoster } from './post.js';

/** More than four requests per second to one workflow webhook are throttled; the margin absorbs jitter. */
export const TEAMS_MIN_INTERVAL_MS = 260;

export function teamsService(transport?: NodeFetch): ChatService<TeamsMessage> {
  return {
    // The configuration only lets a Teams mention ({id, name}) reach a Teams destination.
    format: (message, destination, anomaly, triage, context) =>
      formatTeamsMessage(
        message,
        typeof destination.mention === 'object' && destination.mention !== null ? (destination.mention as TeamsMention) : undefined,
        anomaly?.kind === 'follow_up' ? anomaly : undefined,
        triage && 'link' in triage ? triage.link : undefined,
        context?.costCenters,
        context?.escalation,
        context?.chartUrl,
      ),
    post: createTeamsPoster(transport),
    minIntervalMs: TEAMS_MIN_INTERVAL_MS,
    paceKey: (url) => url,
  };
}
