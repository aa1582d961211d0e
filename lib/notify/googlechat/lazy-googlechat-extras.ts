// Google Chat's parts beyond posting an alert: triage notes, digests and weekly summaries. Bundled
// on its own (a lazy-*.ts module) and loaded by delivery-retry, triage and summary when they need it.
import { withoutControls } from '../../format/fit.js';
import { inertText } from '../../format/text.js';
import type { ChatExtras } from '../kind.js';
import type { GoogleChatDestination } from './config.js';
import { escapeCardHtml, escapeGoogleChatText, GOOGLE_CHAT_LIMITS, GOOGLE_CHAT_MAX_BYTES, type GoogleChatPost } from './format.js';
import { googleChatMessage } from './lazy-googlechat-post.js';
import { googleChatSummary } from './summary.js';

export const extras: ChatExtras<GoogleChatDestination> = {
  // In the anomaly's thread when the link carries its key; the poster asks for a reply there.
  triageNote: (_destination, note) => ({
    text: escapeGoogleChatText(note.line),
    ...(note.thread !== undefined ? { thread: { threadKey: note.thread } } : {}),
  }),
  summary: googleChatSummary,
  digest: () => ({
    render: (line) => escapeCardHtml(inertText(withoutControls(line))),
    chars: GOOGLE_CHAT_LIMITS.body,
    maxBytes: GOOGLE_CHAT_MAX_BYTES,
    breakBytes: '<br>'.length,
    sent: (payload) => googleChatMessage(payload as GoogleChatPost),
  }),
};
