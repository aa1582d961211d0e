import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ReasonedError } from '../shared/errors.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A peer answered with a redirect. Nothing here follows one: the request may carry a
 * credential (a webhook URL's secret, a token, a signature), and the next hop could be anyone.
 */
export class RedirectRefusedError extends ReasonedError<'redirect_refused'> {
  constructor(readonly status: number) {
    super(`Redirect refused (HTTP ${status})`, 'redirect_refused');
  }
}

/** No connection, or no answer, within its limit; named as the AWS SDK and fetch name theirs. */
/** Whether a request failed because its time ran out: our timer, or an aborted signal a library used. */
export const isTimeout = (error: unknown): boolean =>
  error instanceof TimeoutError || (error instanceof DOMException && (error.name === 'AbortError' || error.name === 'TimeoutError'));

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

export interface NodeRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Fails with TimeoutError when no connection is made within this many milliseconds. */
  connectionTimeoutMs?: number;
  /**
   * Fails with TimeoutError when the whole answer has not arrived within this many
   * milliseconds. A plain timer: an AbortSignal costs an EventTarget listener and an
   * end-of-stream watcher on every request, which showed in a warm delivery's own work.
   */
  timeoutMs?: number;
  /** Bytes of the answer kept; the rest is read and dropped, so a huge answer costs no memory. */
  maxAnswerBytes: number;
}

export interface NodeAnswer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request over node:http(s), its answer read whole. Used instead of the global fetch,
 * whose first call loads and starts undici, a large part of a cold start. Rejects on
 * network errors, with the signal's reason when the signal aborts, and on any redirect.
 */
export function nodeRequest(target: URL, options: NodeRequest): Promise<NodeAnswer> {
  return new Promise<NodeAnswer>((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
    if (!send) return reject(new TypeError(`Unsupported protocol ${target.protocol}`));
    // A string body goes out in one write with the head; a Buffer would take a second one (writev).
    const { body, signal } = options;
    let timer: NodeJS.Timeout | undefined;
    const fail = (error: unknown) => {
      clearTimeout(timer);
      reject(signal?.aborted ? signal.reason : error);
    };

    const request = send(
      target,
      {
        method: options.method,
        headers: body === undefined ? { ...options.headers } : { ...options.headers, 'content-length': String(Buffer.byteLength(body)) },
        ...(signal ? { signal } : {}),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (REDIRECTS.has(status)) {
          response.destroy();
          clearTimeout(timer);
          return reject(new RedirectRefusedError(status));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= options.maxAnswerBytes) chunks.push(chunk);
        });
        response.on('error', fail);
        // A connection cut mid-answer may end without an error; it must not leave the caller waiting.
        response.on('close', () => {
          if (!response.complete) fail(new Error('The connection closed before the answer was complete'));
        });
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status, statusText: response.statusMessage ?? '', headers: response.headers, body: Buffer.concat(chunks) });
        });
      },
    );
    if (options.timeoutMs !== undefined) {
      const limitMs = options.timeoutMs;
      timer = setTimeout(() => request.destroy(new TimeoutError(`No answer within ${limitMs} ms`)), limitMs);
    }
    if (options.connectionTimeoutMs !== undefined) {
      const limitMs = options.connectionTimeoutMs;
      request.on('socket', (socket) => {
        // A socket reused from the agent is connected already.
        if (!socket.connecting) return;
        const timer = setTimeout(() => request.destroy(new TimeoutError(`No connection within ${limitMs} ms`)), limitMs);
        socket.once('connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
    }
    request.on('error', fail);
    request.end(body);
  });
}

/** One header of an answer, repeated ones joined, or null when absent: what fetch's `Headers.get` gives. */
export function responseHeader(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}
