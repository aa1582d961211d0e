import { outcomeWithoutAnswer } from '../../chat/post-json.js';
import type { ChatService } from '../../chat/service.js';
import { parseRetryAfterMs } from '../../shared/retry-after.js';
import { fetchOverNodeHttp, type NodeFetch } from '../../transport/fetch-over-node-http.js';
import type { SlackAppPost, SlackAppTools } from './app-payload.js';
import { editedNote, escalatedNote, formatSlackMessage, markText, triageLinkBlock, updateNote } from './format.js';

/** Slack documents about one chat.postMessage per second per channel; the margin absorbs jitter. */
export const SLACK_APP_MIN_INTERVAL_MS = 1_100;

export interface SlackAppServiceOptions {
  /** SLACK_API_URL; Slack's own by default. */
  apiUrl?: string;
  transport?: NodeFetch;
}

/** The code the Web API client shares with the cold path, handed over rather than imported (lazy-app-post.ts says why). */
export const slackAppTools = (transport: NodeFetch = fetchOverNodeHttp): SlackAppTools => ({
  transport,
  formatSlackMessage,
  updateNote,
  editedNote,
  markText,
  escalatedNote,
  triageLinkBlock,
  outcomeWithoutAnswer,
  parseRetryAfterMs: (header) => parseRetryAfterMs(header),
});

type Poster = (channel: string, payload: SlackAppPost, options: Parameters<ChatService['post']>[2]) => ReturnType<ChatService['post']>;

/**
 * Slack app destinations (a channel and the bot token). The client is imported on the first
 * post, so a configuration with webhook destinations only never loads or parses it.
 */
export function slackAppService(options: SlackAppServiceOptions = {}): ChatService<SlackAppPost> {
  let poster: Promise<Poster> | undefined;
  const load = () => {
    poster ??= import('./lazy-app-post.js').then(({ createSlackAppPoster }) =>
      createSlackAppPoster({
        ...(options.apiUrl !== undefined ? { apiUrl: options.apiUrl } : {}),
        tools: slackAppTools(options.transport),
      }),
    );
    return poster;
  };
  return {
    format: (message, destination, anomaly, triage, context) => ({
      message,
      ...(typeof destination.mention === 'string' ? { mention: destination.mention } : {}),
      anomaly: anomaly ?? { kind: 'opening' },
      ...(triage ? { triage } : {}),
      ...(context?.costCenters ? { costCenters: context.costCenters } : {}),
      ...(context?.escalation ? { escalation: context.escalation } : {}),
      ...(context?.chartUrl ? { chartUrl: context.chartUrl } : {}),
    }),
    post: async (channel, payload, postOptions) => (await load())(channel, payload, postOptions),
    minIntervalMs: SLACK_APP_MIN_INTERVAL_MS,
    paceKey: (channel) => `slack-app:${channel}`,
  };
}
