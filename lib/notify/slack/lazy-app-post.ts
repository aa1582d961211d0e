// Imported with import() by app-service.ts on the first post to an app destination, and bundled
// on its own (a lazy-*.ts module). What it shares with the cold path (formatter, transport,
// classifiers) comes in as `tools`: the cold path's own instances, not a second copy.
import type { MessageRef, PostOptions, PostOutcome } from '../../chat/service.js';
import type { SlackAppPost, SlackAppTools } from './app-payload.js';
import type { SlackBlock, SlackMessage } from './format.js';
import { buttonValue, triageButtons, triageStatus } from './triage-blocks.js';

/** Slack asks for about one message per second per channel; a 429 without a usable Retry-After waits that long. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

/** Slack's Web API, unless SLACK_API_URL says otherwise (tests point it at a loopback server). */
export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

// Slack names these as trouble on its side or throttling: the same call may succeed later.
const RETRYABLE_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
// The opening message is gone or can no longer be edited: a follow-up becomes a new opening.
const UNEDITABLE_ERRORS = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed']);

type CallResult = { outcome: PostOutcome; ref?: MessageRef; error?: string };

/**
 * Reduces a Web API answer to an outcome. Errors come as HTTP 200 with `ok: false` and a word;
 * only plain words become reasons, so nothing else from the answer reaches a log or a queue.
 */
export function classifyWebApiAnswer(
  status: number,
  body: string,
  retryAfter: string | null,
  parseRetryAfterMs: SlackAppTools['parseRetryAfterMs'],
): CallResult {
  if (status === 429) {
    return { outcome: { kind: 'retryable', reason: 'ratelimited', retryAfterMs: parseRetryAfterMs(retryAfter) ?? DEFAULT_RETRY_AFTER_MS } };
  }
  if (status >= 500 || status === 408) {
    const retryAfterMs = parseRetryAfterMs(retryAfter);
    return { outcome: { kind: 'retryable', reason: `http_${status}`, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) } };
  }
  if (status < 200 || status >= 300) return { outcome: { kind: 'refused', reason: `http_${status}` } };
  let answer: { ok?: unknown; error?: unknown; channel?: unknown; ts?: unknown };
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    return { outcome: { kind: 'retryable', reason: 'unreadable_answer' } };
  }
  if (answer?.ok === true) {
    const ref =
      typeof answer.channel === 'string' && typeof answer.ts === 'string' ? { channel: answer.channel, ts: answer.ts } : undefined;
    return { outcome: { kind: 'delivered' }, ...(ref ? { ref } : {}) };
  }
  const word = typeof answer?.error === 'string' && /^[a-z_]{1,64}$/.test(answer.error) ? answer.error : 'unknown_error';
  if (RETRYABLE_ERRORS.has(word)) {
    const retryAfterMs = parseRetryAfterMs(retryAfter) ?? (word === 'ratelimited' ? DEFAULT_RETRY_AFTER_MS : undefined);
    return { outcome: { kind: 'retryable', reason: word, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }, error: word };
  }
  return { outcome: { kind: 'refused', reason: word }, error: word };
}

export interface SlackAppClientOptions {
  apiUrl?: string;
  tools: SlackAppTools;
  now?: () => number;
}

/**
 * Posts to a Slack app destination with a small client over our transport (no redirect
 * followed, one timer per request, the answer read within a cap) rather than @slack/web-api,
 * whose queue and retries would have to be switched off for the delivery core to decide.
 * An opening is `chat.postMessage`; a follow-up edits the opening (its latest content, how many
 * updates and when) and replies in its thread; an opening that cannot be edited any more is
 * replaced by a new one, so the follow-up is never lost.
 */
export function createSlackAppPoster(options: SlackAppClientOptions) {
  const { tools } = options;
  const { transport, formatSlackMessage, updateNote, editedNote, markText, escalatedNote } = tools;
  const base = (options.apiUrl ?? DEFAULT_SLACK_API_URL).replace(/\/?$/, '/');
  const now = options.now ?? Date.now;

  async function call(method: string, body: Record<string, unknown>, token: string, timeoutMs: () => number): Promise<CallResult> {
    try {
      const response = await transport(`${base}${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        redirect: 'error',
        timeoutMs: timeoutMs(),
      });
      return classifyWebApiAnswer(response.status, await response.text(), response.headers.get('retry-after'), tools.parseRetryAfterMs);
    } catch (error) {
      return { outcome: tools.outcomeWithoutAnswer(error) };
    }
  }

  const message = (m: SlackMessage) => ({ text: m.text, blocks: m.blocks, unfurl_links: false, unfurl_media: false });

  async function open(channel: string, content: SlackMessage, token: string, timeoutMs: () => number): Promise<PostOutcome> {
    const posted = await call('chat.postMessage', { channel, ...message(content) }, token, timeoutMs);
    if (posted.outcome.kind !== 'delivered') return posted.outcome;
    return posted.ref ? { kind: 'delivered', opened: posted.ref } : { kind: 'delivered' };
  }

  return async (channel: string, payload: SlackAppPost, postOptions: PostOptions): Promise<PostOutcome> => {
    const token = postOptions.botToken;
    if (!token) return { kind: 'refused', reason: 'not_authed' };
    // The calls of one post (an edit, then a reply or a new opening) share its one deadline, which
    // the core fitted into the invocation: each gets what the ones before it left.
    const end = performance.now() + postOptions.timeoutMs;
    const left = () => Math.max(1, Math.floor(end - performance.now()));
    if ('call' in payload) {
      const answered = await call(payload.call, payload.body, token, left);
      return answered.outcome.kind === 'delivered' ? { kind: 'delivered' } : answered.outcome;
    }
    const { anomaly } = payload;
    const buttonsFor =
      payload.triage && 'buttons' in payload.triage ? buttonValue(payload.triage.buttons, payload.triage.about) : undefined;
    // A digest's controls: the page that lists each anomaly it names, with their own actions.
    const linkTo = payload.triage && 'link' in payload.triage ? payload.triage.link : undefined;
    const mark = anomaly.kind === 'follow_up' ? anomaly.triage : undefined;
    // What was decided, and the buttons that fit it: the three actions while open, "Reopen" after one.
    const triage: SlackBlock[] = [
      ...(mark ? [triageStatus(markText(mark))] : []),
      ...(buttonsFor ? [triageButtons(buttonsFor, !mark)] : []),
      ...(linkTo ? [tools.triageLinkBlock(linkTo)] : []),
    ];
    // An escalation says so in whatever it posts: the opening, its edit and the reply in its thread.
    const { escalation } = payload;
    if (anomaly.kind === 'opening')
      return open(
        channel,
        formatSlackMessage(payload.message, payload.mention, escalatedNote(escalation), triage, payload.costCenters, payload.chartUrl),
        token,
        left,
      );

    const { opening } = anomaly;
    const asUpdate = () =>
      open(
        channel,
        // A new opening in place of a lost one: it carries the buttons and what was decided.
        formatSlackMessage(
          payload.message,
          payload.mention,
          escalatedNote(escalation, updateNote(anomaly.firstSeenAt, anomaly.updates)),
          triage,
          payload.costCenters,
          payload.chartUrl,
        ),
        token,
        left,
      );
    if (!opening) return asUpdate();

    // The opening keeps its buttons and says what was decided; the reply in its thread marks the update.
    const edited = formatSlackMessage(
      payload.message,
      payload.mention,
      escalatedNote(escalation, editedNote(anomaly.updates, new Date(now()).toISOString())),
      triage,
      payload.costCenters,
      payload.chartUrl,
    );
    const update = await call('chat.update', { channel: opening.channel, ts: opening.ts, ...message(edited) }, token, left);
    if (update.error !== undefined && UNEDITABLE_ERRORS.has(update.error)) return asUpdate();
    if (update.outcome.kind !== 'delivered') return update.outcome;
    // The reply names no one: the opening already did, and a thread reply should not ping again.
    const reply = formatSlackMessage(
      payload.message,
      undefined,
      escalatedNote(escalation, updateNote(anomaly.firstSeenAt, anomaly.updates, anomaly.triage)),
      [],
      payload.costCenters,
    );
    const replied = await call('chat.postMessage', { channel: opening.channel, thread_ts: opening.ts, ...message(reply) }, token, left);
    return replied.outcome.kind === 'delivered' ? { kind: 'delivered' } : replied.outcome;
  };
}
