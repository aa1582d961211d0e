// Imported with import() by service.ts on the first post to a Google Chat destination, and bundled
// on its own (a lazy-*.ts module). It posts with the port's posting (service.ts says why).
import type { Posting } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import { formatGoogleChatMessage, type GoogleChatMessage, type GoogleChatPost } from './format.js';
import { classifyGoogleChatAnswer, threadedUrl } from './post.js';

/** The message a post sends: an alert's, made here, or the message it carries made already. */
export const googleChatMessage = (payload: GoogleChatPost): GoogleChatMessage =>
  Array.isArray(payload) ? formatGoogleChatMessage(...payload) : payload;

/** Posts to a space's webhook, in the message's thread: an alert, made into its message here, or a message made already. */
export function postToGoogleChat(posting: Posting, url: string, payload: GoogleChatPost, options: PostOptions): Promise<PostOutcome> {
  return posting.json<GoogleChatMessage>(classifyGoogleChatAnswer)(threadedUrl(url), googleChatMessage(payload), options);
}
