import { classifyJsonErrorAnswer } from '../../chat/post-json.js';

/**
 * Reduces Google Chat's answer to an outcome. Errors are Google API errors,
 * `{"error":{"code":403,"status":"PERMISSION_DENIED",…}}`; the status becomes the reason.
 * RESOURCE_EXHAUSTED (429) promises no Retry-After, so the core's backoff usually decides.
 */
export const classifyGoogleChatAnswer = classifyJsonErrorAnswer('status');

/** Without this option Google Chat ignores `thread.threadKey` and starts a new thread for every post. */
export const REPLY_OPTION = 'messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD';

/**
 * The webhook URL with the reply option added. By string, not URLSearchParams: the token often
 * holds `%3D`, and the query must reach Google exactly as it was given.
 */
export function threadedUrl(url: string): string {
  if (/[?&]messageReplyOption=/.test(url)) return url;
  const [beforeHash = url, hash] = url.split('#', 2);
  const joined = `${beforeHash}${beforeHash.includes('?') ? '&' : '?'}${REPLY_OPTION}`;
  return hash === undefined ? joined : `${joined}#${hash}`;
}
