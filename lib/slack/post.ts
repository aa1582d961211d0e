import { IncomingWebhook, type FetchFunction, type IncomingWebhookHTTPError } from '@slack/webhook';
import { fetchOverNodeHttp } from '../http/fetch-over-node-http.js';

export type PostResult =
  | { kind: 'delivered' }
  | { kind: 'rate_limited'; retryAfterMs: number }
  /** May succeed later; Slack may or may not have posted it (5xx, timeout, network). */
  | { kind: 'transient'; reason: string }
  /** Retrying cannot help: the webhook, channel or payload is refused. */
  | { kind: 'permanent'; reason: string };

/** What is posted: a formatted message, or one read back from the retry queue. */
export interface SlackPayload {
  text: string;
  blocks: readonly unknown[];
}

export type SlackPoster = (url: string, message: SlackPayload) => Promise<PostResult>;

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

const DEFAULT_RETRY_AFTER_MS = 1_000;

function parseRetryAfter(value: string | null): number {
  if (value === null) return DEFAULT_RETRY_AFTER_MS;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? DEFAULT_RETRY_AFTER_MS : Math.max(0, date - Date.now());
}

/** Reduces an HTTP answer to an outcome; the body is kept only when it is one of Slack's error words. */
export function classifyHttpAnswer(status: number, body: string, retryAfter: string | null): PostResult {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 429) return { kind: 'rate_limited', retryAfterMs: parseRetryAfter(retryAfter) };
  const word = body.trim();
  if (PERMANENT_ERRORS.has(word)) return { kind: 'permanent', reason: word };
  const reason = /^[a-z_]{1,64}$/.test(word) ? word : `http_${status}`;
  return status >= 500 ? { kind: 'transient', reason } : { kind: 'permanent', reason };
}

export interface SlackPosterOptions {
  timeoutMs: number;
  /** The HTTP transport; by default node:http(s), which spares the cold start loading undici for fetch. */
  fetch?: FetchFunction;
}

/**
 * Posts with @slack/webhook. Its errors do not carry response headers, so a thin fetch
 * wrapper keeps the `Retry-After` of the answer for the caller to honour.
 */
export function createSlackPoster(options: SlackPosterOptions): SlackPoster {
  const baseFetch = options.fetch ?? fetchOverNodeHttp;
  return async (url, message) => {
    let retryAfter: string | null = null;
    const webhook = new IncomingWebhook(url, {
      timeout: options.timeoutMs,
      fetch: async (input, init) => {
        const response = await baseFetch(input, init);
        retryAfter = response.headers.get('retry-after');
        return response;
      },
    });
    try {
      await webhook.send(message as Parameters<IncomingWebhook['send']>[0]);
      return { kind: 'delivered' };
    } catch (error) {
      const http = error as Partial<IncomingWebhookHTTPError>;
      if (typeof http.statusCode === 'number') {
        return classifyHttpAnswer(http.statusCode, String(http.body ?? ''), retryAfter);
      }
      const cause = (error as { original?: Error }).original;
      const timedOut = cause?.name === 'TimeoutError' || cause?.name === 'AbortError';
      return { kind: 'transient', reason: timedOut ? 'timeout' : 'network_error' };
    }
  };
}
