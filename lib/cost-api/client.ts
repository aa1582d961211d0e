import * as z from 'zod/mini';
import type { Logger } from '../log/logger.js';
import { errorName } from '../shared/errors.js';
import { parseJson } from '../shared/json.js';
import { parseRetryAfterMs } from '../shared/retry-after.js';
import { sleep as realSleep } from '../shared/sleep.js';
import { isTimeout } from '../transport/node-request.js';
import { userKeyOf } from './api-key.js';
import { joinUrl } from './base-url.js';
import { CALL_NAMES, type CostApiCall, CostApiError } from './errors.js';
import { backoffMs } from './retry.js';
import {
  type CostCenter,
  type CoveringCostCenter,
  costCenterSchema,
  coveringCostCenterSchema,
  createdEventSchema,
  dailyCostRowSchema,
  describeProblems,
  generatedTokenSchema,
  type ListedEvent,
  listedEventSchema,
  type PayerAccount,
  payerAccountSchema,
  unwrapList,
} from './schema.js';

export interface Credentials {
  username: string;
  password: string;
}

/** What every v2 call carries (spec 5.1). */
export interface PlatformAuth {
  apikey: string;
  /** The token exactly as token generation returned it. */
  authorization: string;
}

export interface GeneratedToken {
  /** The bearer token exactly as received. */
  authorization: string;
  /** The key as received (`<user_key>:-1:null`), which the payer-accounts call accepts. */
  apikey: string;
  userKey: string;
}

export interface CallOptions {
  /** Aborts the call (every attempt, page and wait) when the caller's deadline passes. */
  signal?: AbortSignal;
}

export interface CostApiClient {
  generateToken(credentials: Credentials, options?: CallOptions): Promise<GeneratedToken>;
  listPayerAccounts(auth: PlatformAuth, options?: CallOptions): Promise<PayerAccount[]>;
  /** Needs an account-scoped key, `<user_key>:<account_key>:`. */
  listCostCenters(auth: PlatformAuth, options?: CallOptions): Promise<CostCenter[]>;
}

/** `v2` is the spec's list (4.3); `v1` the older one, documented with the linked accounts of each cost center. */
export type CostCenterListVersion = 'v2' | 'v1';

/** The daily cost of one cloud account, and the cost events on the platform's charts; each needs an account-scoped key. */
export interface PlatformLoop {
  /** `YYYY-MM-DD` to its cost (amortized), for each day the platform has a figure for, `from` to `to` inclusive. */
  dailyCost(
    auth: PlatformAuth,
    query: { accountId: string; from: string; to: string },
    options?: CallOptions,
  ): Promise<Map<string, number>>;
  /** Writes a cost event; its `uuid`. */
  createEvent(auth: PlatformAuth, event: CostEventInput, options?: CallOptions): Promise<string>;
  /** Deletes a cost event; one the platform no longer has counts as deleted. */
  deleteEvent(auth: PlatformAuth, uuid: string, options?: CallOptions): Promise<void>;
  /** The cost events of the days `from` to `to` (`YYYY-MM-DD`, inclusive). */
  listEvents(auth: PlatformAuth, query: { from: string; to: string }, options?: CallOptions): Promise<ListedEvent[]>;
}

/** What a cost event says (reference/cost-api.md): all four are required by the platform. */
export interface CostEventInput {
  title: string;
  description: string;
  /** `YYYY-MM-DD`. */
  date: string;
  createdBy: string;
}

export interface CostCenterCoverageReader {
  /** The cost centers with the cloud accounts each covers; needs an account-scoped key. */
  listCostCenterCoverage(auth: PlatformAuth, version: CostCenterListVersion, options?: CallOptions): Promise<CoveringCostCenter[]>;
}

export interface CostApiClientOptions {
  baseUrl: string;
  /** Per attempt; the platform may hang until a gateway timeout on some requests. */
  timeoutMs?: number;
  /** Attempts per call, including the first; retried on 429, 5xx and network errors. */
  maxAttempts?: number;
  backoffBaseMs?: number;
  /** A 429 that asks for a longer wait fails at once rather than outlive the function. */
  maxRetryAfterMs?: number;
  /** Bound on `nextToken` pages, in case the platform keeps answering with one. */
  maxPages?: number;
  fetch?: typeof globalThis.fetch;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Waited for before every request (each attempt and page), outside its timeout, so that a
   * caller can keep its requests within the platform's rate limits; rejects when `signal` aborts.
   */
  pace?: (signal?: AbortSignal) => Promise<void>;
  logger?: Logger;
}

const PATHS: Record<CostApiCall, string> = {
  token_generate: '/api/v1/authentication/token/generate',
  payer_accounts: '/api/v2/user-management/accounts/data-access/payer-accounts',
  cost_centers: '/api/v2/user-management/cost-centers/management/list',
  cost_centers_v1: '/api/v1/users/cost-centers',
  cost_and_usage: '/api/v2/invoices/cost-and-usage',
  event_create: '/api/v1/users/events',
  event_list: '/api/v1/users/events',
  event_delete: '/api/v1/users/events',
};

interface Answer {
  status: number;
  body: unknown;
}

export function createCostApiClient(options: CostApiClientOptions): CostApiClient & CostCenterCoverageReader & PlatformLoop {
  const fetch = options.fetch ?? globalThis.fetch;
  const sleep = options.sleep ?? realSleep;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const backoffBase = options.backoffBaseMs ?? 500;
  const maxRetryAfter = options.maxRetryAfterMs ?? 10_000;
  const maxPages = options.maxPages ?? 50;

  const fail = (call: CostApiCall, reason: CostApiError['reason'], detail: string, status?: number) =>
    new CostApiError(`${CALL_NAMES[call]} failed: ${detail}`, reason, call, status);

  /** One call with timeout and bounded retries; answers every non-retryable status to the caller. */
  // The caller's deadline passed: whatever was under way is abandoned, and not retried.
  const deadlinePassed = (call: CostApiCall) => fail(call, 'timeout', "the caller's deadline for it passed");

  async function send(call: CostApiCall, url: URL, init: RequestInit, deadline?: AbortSignal): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      let wait: number;
      let lastProblem: { reason: CostApiError['reason']; detail: string; status?: number };
      try {
        await options.pace?.(deadline);
        const timeout = AbortSignal.timeout(timeoutMs);
        const signal = deadline ? AbortSignal.any([deadline, timeout]) : timeout;
        // 'manual': a redirect comes back as the 3xx answer and is refused below, never followed.
        const response = await fetch(url, { ...init, redirect: 'manual', signal });
        const text = await response.text();
        if (response.status >= 300 && response.status < 400) {
          // Following it would send the username and password, or the apikey header, to wherever it points.
          throw fail(
            call,
            'redirect_refused',
            `the platform answered with a redirect (HTTP ${response.status}); it is not followed`,
            response.status,
          );
        }
        if (response.status === 429) {
          const asked = parseRetryAfterMs(response.headers.get('retry-after'));
          if (asked !== undefined && asked > maxRetryAfter) {
            throw fail(call, 'rate_limited', `rate limited (HTTP 429), asked to wait ${Math.ceil(asked / 1000)} s`, 429);
          }
          wait = asked ?? backoffMs(attempt, backoffBase);
          lastProblem = { reason: 'rate_limited', detail: 'rate limited (HTTP 429) after retries', status: 429 };
        } else if (response.status >= 500) {
          wait = backoffMs(attempt, backoffBase);
          lastProblem = {
            reason: 'platform_unavailable',
            detail: `the platform answered HTTP ${response.status} on ${attempt} attempt(s)`,
            status: response.status,
          };
        } else {
          const json = text.length > 0 ? parseJson(text) : { ok: true as const, value: undefined };
          if (!json.ok && response.ok)
            throw fail(call, 'invalid_response', `the answer (HTTP ${response.status}) is not JSON`, response.status);
          return { status: response.status, body: json.ok ? json.value : undefined };
        }
      } catch (error) {
        if (error instanceof CostApiError) throw error;
        if (deadline?.aborted) throw deadlinePassed(call);
        const name = errorName(error);
        if (isTimeout(error)) {
          // A call that hung once will likely hang again; retrying would only outlive the function.
          throw fail(call, 'timeout', `no answer within ${timeoutMs} ms`);
        }
        wait = backoffMs(attempt, backoffBase);
        const code = (error as { cause?: { code?: unknown } }).cause?.code;
        lastProblem = { reason: 'network_error', detail: `cannot reach the platform (${typeof code === 'string' ? code : name})` };
      }
      if (attempt >= maxAttempts) throw fail(call, lastProblem.reason, lastProblem.detail, lastProblem.status);
      options.logger?.warn('platform call will be retried', {
        call,
        reason: lastProblem.reason,
        ...(lastProblem.status ? { status: lastProblem.status } : {}),
        attempt,
        waitMs: wait,
      });
      await sleep(wait);
      if (deadline?.aborted) throw deadlinePassed(call);
    }
  }

  const v2Headers = (auth: PlatformAuth): Record<string, string> => ({
    accept: 'application/json',
    apikey: auth.apikey,
    authorization: auth.authorization,
  });

  function refusal(call: CostApiCall, status: number): CostApiError {
    if (status === 401 || status === 403) {
      return fail(call, 'unauthorized', `the platform refused the API key or token (HTTP ${status})`, status);
    }
    return fail(call, 'rejected', `the platform refused the request (HTTP ${status})`, status);
  }

  async function list<T>(
    call: 'payer_accounts' | 'cost_centers' | 'cost_centers_v1' | 'cost_and_usage' | 'event_list',
    auth: PlatformAuth,
    schema: z.ZodMiniType<T>,
    deadline: AbortSignal | undefined,
    query: Readonly<Record<string, string>> = {},
  ): Promise<T[]> {
    const records: T[] = [];
    const seen = new Set<string>();
    let token: string | undefined;
    for (let page = 1; page <= maxPages; page++) {
      const url = joinUrl(options.baseUrl, PATHS[call]);
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
      if (token !== undefined) url.searchParams.set('token', token);
      const answer = await send(call, url, { method: 'GET', headers: v2Headers(auth) }, deadline);
      if (answer.status < 200 || answer.status >= 300) throw refusal(call, answer.status);
      const unwrapped = unwrapList(answer.body);
      if (!unwrapped.ok) throw fail(call, 'invalid_response', `the answer ${unwrapped.problem}`);
      const parsed = z.array(schema).safeParse(unwrapped.items);
      if (!parsed.success) throw fail(call, 'invalid_response', `unexpected records: ${describeProblems(parsed.error)}`);
      records.push(...parsed.data);
      if (unwrapped.nextToken === undefined) return records;
      if (seen.has(unwrapped.nextToken)) throw fail(call, 'invalid_response', 'the platform repeated a nextToken');
      seen.add(unwrapped.nextToken);
      token = unwrapped.nextToken;
    }
    throw fail(call, 'invalid_response', `more than ${maxPages} pages`);
  }

  return {
    async generateToken(credentials, callOptions) {
      const call = 'token_generate';
      const answer = await send(
        call,
        joinUrl(options.baseUrl, PATHS[call]),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ username: credentials.username, password: credentials.password }),
        },
        callOptions?.signal,
      );
      if (answer.status >= 400 && answer.status < 500) {
        throw fail(call, 'login_failed', `the platform refused the username and password (HTTP ${answer.status})`, answer.status);
      }
      const parsed = generatedTokenSchema.safeParse(answer.body);
      if (!parsed.success) {
        // The older endpoint answered a refused login with {"Error": "..."}; do not echo its text.
        const refused = typeof answer.body === 'object' && answer.body !== null && 'Error' in answer.body;
        if (refused) throw fail(call, 'login_failed', 'the platform refused the username and password', answer.status);
        throw fail(call, 'invalid_response', `the answer lacks ${describeProblems(parsed.error)}`, answer.status);
      }
      let userKey: string;
      try {
        userKey = userKeyOf(parsed.data.apikey);
      } catch {
        throw fail(call, 'invalid_response', 'the returned apikey has no user key', answer.status);
      }
      return { authorization: parsed.data.Authorization, apikey: parsed.data.apikey, userKey };
    },
    listPayerAccounts: (auth, callOptions) => list('payer_accounts', auth, payerAccountSchema, callOptions?.signal),
    listCostCenters: (auth, callOptions) => list('cost_centers', auth, costCenterSchema, callOptions?.signal),
    // The v1 list takes the same headers as the v2 ones (reference/cost-api.md).
    listCostCenterCoverage: (auth, version, callOptions) =>
      list(version === 'v1' ? 'cost_centers_v1' : 'cost_centers', auth, coveringCostCenterSchema, callOptions?.signal),
    async dailyCost(auth, { accountId, from, to }, callOptions) {
      // The cost the platform's anomaly engine measures for AWS accounts: amortized, per day, one linked account.
      const rows = await list('cost_and_usage', auth, dailyCostRowSchema, callOptions?.signal, {
        groupBy: 'linkedaccid',
        periodGranLevel: 'day',
        costType: 'cost',
        isAmortized: 'true',
        startDate: from,
        endDate: to,
        'filters[linkedaccid]': accountId,
      });
      const days = new Map<string, number>();
      for (const row of rows) {
        const day = row.usage_date.slice(0, 10);
        const cost = typeof row.total_cost === 'number' ? row.total_cost : Number(row.total_cost);
        // Several rows of one day (a group by that splits it) add up.
        if (Number.isFinite(cost) && /^\d{4}-\d{2}-\d{2}$/.test(day)) days.set(day, (days.get(day) ?? 0) + cost);
      }
      return days;
    },
    async createEvent(auth, event, callOptions) {
      const call = 'event_create';
      const answer = await send(
        call,
        joinUrl(options.baseUrl, PATHS[call]),
        { method: 'POST', headers: { ...v2Headers(auth), 'content-type': 'application/json' }, body: JSON.stringify(event) },
        callOptions?.signal,
      );
      if (answer.status < 200 || answer.status >= 300) throw refusal(call, answer.status);
      const parsed = createdEventSchema.safeParse(answer.body);
      if (!parsed.success) throw fail(call, 'invalid_response', 'the answer names no uuid', answer.status);
      return 'uuid' in parsed.data ? parsed.data.uuid : parsed.data.data.uuid;
    },
    async listEvents(auth, { from, to }, callOptions) {
      const rows = await list('event_list', auth, listedEventSchema, callOptions?.signal, { startDate: from, endDate: to });
      return rows.map((row) => ({ uuid: row.uuid, title: row.title ?? '', description: row.description ?? '' }));
    },
    async deleteEvent(auth, uuid, callOptions) {
      const call = 'event_delete';
      const url = joinUrl(options.baseUrl, `${PATHS[call]}/${encodeURIComponent(uuid)}`);
      const answer = await send(call, url, { method: 'DELETE', headers: v2Headers(auth) }, callOptions?.signal);
      if (answer.status === 404) return;
      if (answer.status < 200 || answer.status >= 300) throw refusal(call, answer.status);
    },
  };
}
