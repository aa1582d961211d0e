import { type Posting, postingOver } from '../../chat/post-json.js';
import type { ChatService } from '../../chat/service.js';
import type { GoogleChatPost } from './format.js';

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

/**
 * Google Chat's one service. `format` only gathers what the message is made of; the message is
 * made and posted by a module imported on the first post, so a configuration without Google Chat
 * never loads or parses it.
 */
export function googleChatService(posting: Posting = postingOver()): ChatService<GoogleChatPost> {
  return {
    // The configuration only lets a Google Chat mention (<users/…>) reach a Google Chat destination.
    // A follow-up goes to the anomaly's thread (the thread key is the anomaly's) and says it is an update.
    format: (message, destination, anomaly, triage, context) => [
      message,
      typeof destination.mention === 'string' ? destination.mention : undefined,
      anomaly?.kind === 'follow_up' ? anomaly : undefined,
      triage && 'link' in triage ? triage.link : undefined,
      context?.costCenters,
      context?.escalation,
      context?.thread,
      context?.chartUrl,
    ],
    // The port's posting is handed over, not bundled again (KindSettings.posting): a redirect it
    // refuses is an error of the cold path's own class, which only its own reading recognises.
    post: async (...post) => (await import('./lazy-googlechat-post.js')).postToGoogleChat(posting, ...post),
    minIntervalMs: GOOGLE_CHAT_MIN_INTERVAL_MS,
    paceKey: spaceOf,
  };
}
