import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FetchFunction } from '@slack/webhook';
import { ReasonedError } from '../shared/errors.js';

type FetchResponse = Awaited<ReturnType<FetchFunction>>;

/** Slack answers with a word; anything much longer is not an answer worth keeping in memory. */
export const MAX_ANSWER_BYTES = 64 * 1024;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A peer answered with a redirect. Nothing here follows one: the request may carry a
 * credential (a webhook URL's secret, a token), and the next hop could be anyone.
 */
export class RedirectRefusedError extends ReasonedError<'redirect_refused'> {
  constructor(readonly status: number) {
    super(`Redirect refused (HTTP ${status})`, 'redirect_refused');
  }
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The part of `fetch` that @slack/webhook uses, over node:http(s). The AWS SDK loads
 * node:http(s) anyway, while the first call of the global fetch loads and starts undici:
 * about 60 ms of every cold start (measured with `npm run bench`). Like fetch it rejects on
 * network errors, with the signal's reason when the signal aborts, and with a TypeError on a
 * redirect (it follows none: Slack webhooks do not redirect, and @slack/webhook asks for
 * `redirect: 'error'`). The answer is read whole, up to MAX_ANSWER_BYTES.
 */
export const fetchOverNodeHttp: FetchFunction = (input, init = {}) =>
  new Promise<FetchResponse>((resolve, reject) => {
    const url = new URL(input);
    const send = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : undefined;
    if (!send) return reject(new TypeError(`Unsupported protocol ${url.protocol}`));
    if (init.body !== undefined && typeof init.body !== 'string') return reject(new TypeError('Only string bodies are supported'));
    const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
    const { signal } = init;
    const fail = (error: unknown) => reject(signal?.aborted ? signal.reason : error);

    const request = send(
      url,
      {
        method: init.method ?? 'GET',
        headers: { ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        ...(signal ? { signal } : {}),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (REDIRECTS.has(status)) {
          response.destroy();
          return reject(new RedirectRefusedError(status));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
        });
        response.on('error', fail);
        // A connection cut mid-answer may end without an error; it must not leave the caller waiting.
        response.on('close', () => {
          if (!response.complete) fail(new Error('The connection closed before the answer was complete'));
        });
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: response.statusMessage ?? '',
            url: url.href,
            headers: {
              get: (name) => headerValue(response.headers, name),
              entries: () =>
                Object.keys(response.headers).map((name): [string, string] => [name, headerValue(response.headers, name) ?? '']),
            },
            text: async () => text,
            json: async () => JSON.parse(text) as unknown,
            arrayBuffer: async () => new Uint8Array(bytes).buffer,
          });
        });
      },
    );
    request.on('error', fail);
    request.end(body);
  });
