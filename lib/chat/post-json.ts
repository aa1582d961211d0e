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

// By its reason rather than its class: a lazily bundled module has copies of our classes, and
// `instanceof` against a copy is false for the cold path's own errors (and the other way round).
const isRedirectRefused = (error: unknown): boolean =>
  error instanceof RedirectRefusedError || (error instanceof Error && (error as { reason?: unknown }).reason === 'redirect_refused');

/**
 * What a post that got no answer means: a redirect is refused for good (the URL is not where
 * the service takes posts, and following it would hand the URL's secret to someone else);
 * a timeout or a broken connection may succeed later.
 */
export function outcomeWithoutAnswer(error: unknown): PostOutcome {
  if (isRedirectRefused(error)) return { kind: 'refused', reason: 'redirect_refused' };
  return { kind: 'retryable', reason: isTimeout(error) ? 'timeout' : 'network_error' };
}

/** What a post sends besides its JSON body: headers of the kind's own (a signature), never a content type or length. */
export interface SendOptions extends PostOptions {
  headers?: Readonly<Record<string, string>>;
}

/**
 * How every kind posts over HTTP, handed to each by the port (`KindSettings.posting`): the cold
 * path's transport (no redirect followed, one timer per request, the answer read within a cap)
 * and the one reading of a post that got no answer. A kind's lazily bundled poster takes these
 * rather than importing them, so it can never carry copies that read the cold path's errors
 * otherwise; the contract suite runs against the built bundles too (test/integration/kinds-bundle.test.ts).
 */
export interface Posting {
  transport: NodeFetch;
  /** What a post that got no answer (a redirect, a timeout, a broken connection) comes to. */
  withoutAnswer(error: unknown): PostOutcome;
  /** Posts `body`, JSON already (a signature may cover its exact bytes); the classifier reads the answer. */
  send(url: string, body: string, options: SendOptions, classify: AnswerClassifier): Promise<PostOutcome>;
  /** A poster of JSON payloads whose answers the classifier reads (Teams, Google Chat, PagerDuty). */
  json<Payload>(classify: AnswerClassifier): (url: string, payload: Payload, options: PostOptions) => Promise<PostOutcome>;
}

/** The posting of the cold path, over `transport` (node:http(s) unless a test or the benchmark gives another). */
export function postingOver(transport: NodeFetch = fetchOverNodeHttp): Posting {
  const send: Posting['send'] = async (url, body, { timeoutMs, headers }, classify) => {
    try {
      const response = await transport(url, {
        method: 'POST',
        // The charset matters: without it, emoji in a card arrive mangled.
        headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
        body,
        redirect: 'error',
        timeoutMs,
      });
      const text = await response.text();
      return classify({ status: response.status, body: text, retryAfter: response.headers.get('retry-after') });
    } catch (error) {
      return outcomeWithoutAnswer(error);
    }
  };
  return {
    transport,
    withoutAnswer: outcomeWithoutAnswer,
    send,
    json: (classify) => (url, payload, options) => send(url, JSON.stringify(payload), { timeoutMs: options.timeoutMs }, classify),
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
