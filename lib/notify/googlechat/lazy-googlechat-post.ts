// Imported with import() by service.ts on the first post to a Google Chat destination, and bundled
// on its own (a lazy-*.ts module). The JSON poster comes from the cold path (service.ts says why).
import type { createJsonPoster } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import type { NodeFetch } from '../../transport/fetch-over-node-http.js';
import { formatGoogleChatMessage, type GoogleChatMessage, type GoogleChatPost } from './format.js';
import { classifyGoogleChatAnswer, threadedUrl } from './post.js';

/** The message a post sends: an alert's, made here, or the message it carries made already. */
export const googleChatMessage = (payload: GoogleChatPost): GoogleChatMessage =>
  Array.isArray(payload) ? formatGoogleChatMessage(...payload) : payload;

export interface GoogleChatTools {
  postJson: typeof createJsonPoster;
  transport?: NodeFetch | undefined;
}

/** Posts to a space's webhook, in the message's thread: an alert, made into its message here, or a message made already. */
export function postToGoogleChat(tools: GoogleChatTools, url: string, payload: GoogleChatPost, options: PostOptions): Promise<PostOutcome> {
  return tools.postJson<GoogleChatMessage>(classifyGoogleChatAnswer, tools.transport)(
    threadedUrl(url),
    googleChatMessage(payload),
    options,
  );
}
