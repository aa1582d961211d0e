import type { IncomingWebhookHTTPError } from '@slack/webhook';
// The class alone: the package's index also loads its workflow triggers and retry policies,
// 3.5 KB parsed on every cold start for code the relay never calls (the version is pinned).
import { IncomingWebhook } from '@slack/webhook/dist/IncomingWebhook.js';
import { outcomeWithoutAnswer } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import { parseRetryAfterMs } from '../../shared/retry-after.js';
import { fetchOverNodeHttp, type NodeFetch } from '../../transport/fetch-over-node-http.js';

/** What is posted: a formatted Block Kit message. */
export interface SlackPayload {
  text: string;
  /** Absent for a message of text alone (a triage note). */
  blocks?: readonly unknown[];
}

// Named in Slack's documentation as refusals; Slack's status codes vary, so the body decides.
const PERMANENT_ERRORS = new Set([
  'invalid_payload',
  'user_not_found',
  'no_text',
  'too_many_attachments',
  'action_prohibited',
  'invalid_token',
  'team_disabled',
  'channel_not_found',
  'no_service',
  'no_service_id',
  'no_team',
  'no_active_hooks',
  'channel_is_archived',
  'invalid_blocks',
  'invalid_blocks_format',
  'msg_blocks_too_long',
]);

/** Slack asks for about one message per second per webhook; a 429 without a usable Retry-After waits that long. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/** Reduces Slack's HTTP answer to an outcome; the body is kept only when it is one of Slack's error words. */
export function classifySlackAnswer(status: number, body: string, retryAfter: string | null): PostOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 429)
    return { kind: 'retryable', reason: 'rate_limited', retryAfterMs: parseRetryAfterMs(retryAfter) ?? DEFAULT_RETRY_AFTER_MS };
  const word = body.trim();
  if (PERMANENT_ERRORS.has(word)) return { kind: 'refused', reason: word };
  const reason = /^[a-z_]{1,64}$/.test(word) ? word : `http_${status}`;
  // 408 is the server's timeout, not a judgement on the message; a 503 may say when to come back.
  if (status < 500 && status !== 408) return { kind: 'refused', reason };
  const retryAfterMs = parseRetryAfterMs(retryAfter);
  return { kind: 'retryable', reason, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

export type SlackPoster = (url: string, payload: SlackPayload, options: PostOptions) => Promise<PostOutcome>;

/**
 * Posts with @slack/webhook. Its errors do not carry response headers, so a thin fetch
 * wrapper keeps the `Retry-After` of the answer for the caller to honour. The deadline is
 * the transport's timer rather than the library's `timeout`, which would make an AbortSignal
 * per post. It keeps the library's default of no retries: the delivery core decides them (and
 * the bundle carries p-retry for that single attempt only, scripts/esbuild-options.mjs).
 */
export function createSlackPoster(transport: NodeFetch = fetchOverNodeHttp): SlackPoster {
  return async (url, payload, options) => {
    let retryAfter: string | null = null;
    const webhook = new IncomingWebhook(url, {
      fetch: async (input, init) => {
        const response = await transport(input, { ...init, timeoutMs: options.timeoutMs });
        retryAfter = response.headers.get('retry-after');
        return response;
      },
    });
    try {
      await webhook.send(payload as Parameters<IncomingWebhook['send']>[0]);
      return { kind: 'delivered' };
    } catch (error) {
      const http = error as Partial<IncomingWebhookHTTPError>;
      if (typeof http.statusCode === 'number') {
        return classifySlackAnswer(http.statusCode, String(http.body ?? ''), retryAfter);
      }
      // @slack/webhook wraps what went wrong before an answer came.
      return outcomeWithoutAnswer((error as { original?: Error }).original);
    }
  };
}
