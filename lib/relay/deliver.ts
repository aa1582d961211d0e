import type { SlackMessage } from '../format/slack-message.js';
import type { PostResult, SlackPoster } from '../slack/post.js';

export interface DeliverOptions {
  post: SlackPoster;
  sleep: (ms: number) => Promise<void>;
  /** Time left for this invocation; a 429 wait must fit inside it together with one more post. */
  remainingTimeMs: () => number;
  /** Time one post may take at the most (the Slack request timeout). */
  postTimeoutMs: number;
}

const SAFETY_MARGIN_MS = 500;

/** Posts once; after a 429, waits the Retry-After and posts once more when there is time for it. */
export async function postWithOneRetry(url: string, message: SlackMessage, options: DeliverOptions): Promise<PostResult> {
  const first = await options.post(url, message);
  if (first.kind !== 'rate_limited') return first;
  const needed = first.retryAfterMs + options.postTimeoutMs + SAFETY_MARGIN_MS;
  if (needed > options.remainingTimeMs()) return first;
  await options.sleep(first.retryAfterMs);
  return options.post(url, message);
}
