import type { ChatService } from '../../chat/service.js';
import type { NodeFetch } from '../../transport/fetch-over-node-http.js';
import { formatGoogleChatMessage, type GoogleChatMessage } from './format.js';
import { createGoogleChatPoster } from './post.js';

/** Writes are limited per space, shared by every webhook in it: about one message per second. */
export const GOOGLE_CHAT_MIN_INTERVAL_MS = 1_100;

/** The space a webhook URL posts into (`/v1/spaces/<SPACE>/messages`); its query holds the secret. */
export function spaceOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `googlechat:${parsed.host}${parsed.pathname}`;
  } catch {
    return url;
  }
}

export function googleChatService(transport?: NodeFetch): ChatService<GoogleChatMessage> {
  return {
    // The configuration only lets a Google Chat mention (<users/…>) reach a Google Chat destination.
    // A follow-up goes to the anomaly's thread (the thread key is the anomaly's) and says it is an update.
    format: (message, destination, anomaly, triage, context) =>
      formatGoogleChatMessage(
        message,
        typeof destination.mention === 'string' ? destination.mention : undefined,
        anomaly?.kind === 'follow_up' ? anomaly : undefined,
        triage && 'link' in triage ? triage.link : undefined,
        context?.costCenters,
        context?.escalation,
        context?.thread,
        context?.chartUrl,
      ),
    post: createGoogleChatPoster(transport),
    minIntervalMs: GOOGLE_CHAT_MIN_INTERVAL_MS,
    paceKey: spaceOf,
  };
}
