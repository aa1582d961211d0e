import type { FetchFunction } from '@slack/webhook';
import { nodeRequest, responseHeader } from './node-request.js';

export { RedirectRefusedError } from './node-request.js';

type FetchResponse = Awaited<ReturnType<FetchFunction>>;

/** fetch's init as @slack/webhook passes it, plus a deadline for the whole answer that costs no AbortSignal. */
export type NodeFetchInit = NonNullable<Parameters<FetchFunction>[1]> & { timeoutMs?: number };

/** A FetchFunction that also takes `timeoutMs`: what our posters are given to post with. */
export type NodeFetch = (input: string | URL, init?: NodeFetchInit) => Promise<FetchResponse>;

/** Slack answers with a word; anything much longer is not an answer worth keeping in memory. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The part of `fetch` that @slack/webhook and our posters use, over node:http(s) (see
 * nodeRequest for why). Like fetch it rejects on network errors, with the signal's reason
 * when the signal aborts, and on a redirect (it follows none: chat webhooks do not redirect,
 * and @slack/webhook asks for `redirect: 'error'`); past `timeoutMs` it rejects with a
 * TimeoutError. The answer is read whole, up to MAX_ANSWER_BYTES.
 */
export const fetchOverNodeHttp: NodeFetch = async (input, init = {}) => {
  if (init.body !== undefined && typeof init.body !== 'string') throw new TypeError('Only string bodies are supported');
  const url = new URL(input);
  const answer = await nodeRequest(url, {
    method: init.method ?? 'GET',
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.body !== undefined ? { body: init.body } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
    ...(init.timeoutMs !== undefined ? { timeoutMs: init.timeoutMs } : {}),
    maxAnswerBytes: MAX_ANSWER_BYTES,
  });
  const text = answer.body.toString('utf8');
  const response: FetchResponse = {
    ok: answer.status >= 200 && answer.status < 300,
    status: answer.status,
    statusText: answer.statusText,
    url: url.href,
    headers: {
      get: (name) => responseHeader(answer.headers, name),
      entries: () => Object.keys(answer.headers).map((name): [string, string] => [name, responseHeader(answer.headers, name) ?? '']),
    },
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
    arrayBuffer: async () => new Uint8Array(answer.body).buffer,
  };
  return response;
};
