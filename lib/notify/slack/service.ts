import type { ChatService } from '../../chat/service.js';
import type { NodeFetch } from '../../transport/fetch-over-node-http.js';
import { escalatedNote, formatSlackMessage, type SlackMessage, triageLinkBlock, updateNote } from './format.js';
import { createSlackPoster } from './post.js';

/** Slack documents about one message per second per incoming webhook; the margin absorbs jitter. */
export const SLACK_MIN_INTERVAL_MS = 1_100;

export function slackService(transport?: NodeFetch): ChatService<SlackMessage> {
  return {
    // The configuration only lets a Slack mention (a string) reach a Slack destination.
    // An incoming webhook can neither edit nor thread: a follow-up is a new message marked as an update.
    format: (message, destination, anomaly, triage, context) =>
      formatSlackMessage(
        message,
        typeof destination.mention === 'string' ? destination.mention : undefined,
        escalatedNote(
          context?.escalation,
          anomaly?.kind === 'follow_up' ? updateNote(anomaly.firstSeenAt, anomaly.updates, anomaly.triage) : undefined,
        ),
        triage && 'link' in triage ? [triageLinkBlock(triage.link)] : [],
        context?.costCenters,
        context?.chartUrl,
      ),
    post: createSlackPoster(transport),
    minIntervalMs: SLACK_MIN_INTERVAL_MS,
    paceKey: (url) => url,
  };
}
