import { fetchOverNodeHttp, type NodeFetch, RedirectRefusedError } from '../transport/fetch-over-node-http.js';
import { isTimeout } from '../transport/node-request.js';
import type { PostOptions, PostOutcome } from './service.js';
import { outcomeOfStatus } from './status.js';

/** What a chat service answered, reduced to what its classifier needs. */
export interface PostAnswer {
  status: number;
  body: string;
  retryAfter: string | null;
}

export type AnswerClassifier = (answer: PostAnswer) => PostOutcome;

/**
 * What a post that got no answer means: a redirect is refused for good (the URL is not where
 * the service takes posts, and following it would hand the URL's secret to someone else);
 * a timeout or a broken connection may succeed later.
 */
export function outcomeWithoutAnswer(error: unknown): PostOutcome {
  if (error instanceof RedirectRefusedError) return { kind: 'refused', reason: error.reason };
  return { kind: 'retryable', reason: isTimeout(error) ? 'timeout' : 'network_error' };
}

/** The Teams and Google Chat posters: JSON in, the service's classifier decides what the answer means. */
export function createJsonPoster<Payload>(classify: AnswerClassifier, transport: NodeFetch = fetchOverNodeHttp) {
  return async (url: string, payload: Payload, options: PostOptions): Promise<PostOutcome> => {
    try {
      const response = await transport(url, {
        method: 'POST',
        // The charset matters: without it, emoji in a card arrive mangled.
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(payload),
        redirect: 'error',
        timeoutMs: options.timeoutMs,
      });
      const body = await response.text();
      return classify({ status: response.status, body, retryAfter: response.headers.get('retry-after') });
    } catch (error) {
      return outcomeWithoutAnswer(error);
    }
  };
}

/** The `error` object of a JSON error answer, when the body is one. */
export function errorObjectOf(body: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown } | null;
    const error = parsed?.error;
    return error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A service's error code as a reason word (`WorkflowNotFound` → `workflow_not_found`); only plain words pass. */
export function reasonWord(code: unknown): string | undefined {
  if (typeof code !== 'string' || !/^[A-Za-z][A-Za-z_]{0,63}$/.test(code)) return undefined;
  return code
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** The answer classifier of a service whose errors are JSON `{"error":{…}}` with a word under `reasonField`. */
export function classifyJsonErrorAnswer(reasonField: string): AnswerClassifier {
  return ({ status, body, retryAfter }) =>
    outcomeOfStatus(status, reasonWord(errorObjectOf(body)?.[reasonField]) ?? `http_${status}`, retryAfter);
}
