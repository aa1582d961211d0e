import type { AuthOutcome, Authenticator } from '../auth/authenticate.js';
import { authenticateWithGrace, graceEndsAt } from '../auth/previous-credentials.js';
import type { RefreshingCache } from '../config/cache.js';
import { ConfigInvalidError, ConfigUnavailableError } from '../config/errors.js';
import type { LoadedConfig } from '../config/load.js';
import { describeIssues } from '../config/schema.js';
import { formatSlackMessage } from '../format/slack-message.js';
import { parseJsonBody, readBody } from '../http/request.js';
import { jsonResponse } from '../http/response.js';
import type { HttpRequest, HttpResponse } from '../http/types.js';
import type { Logger } from '../log/logger.js';
import { webhookMessageSchema } from '../message/schema.js';
import { routeFacts, selectDestinations } from '../routing/route.js';
import type { SlackPoster } from '../slack/post.js';
import type { DeadLetterQueue, RetryQueue } from '../queue/sqs.js';
import { deliver } from './deliver.js';
import { reasonOf, summarise, type DestinationResult } from './outcome.js';

export interface RelayDependencies {
  config: RefreshingCache<LoadedConfig>;
  authenticate: Authenticator;
  post: SlackPoster;
  postTimeoutMs: number;
  logger: Logger;
  /** Where failures that may pass are stored for the retry function; without it they answer 503. */
  retryQueue?: RetryQueue;
  /** Where refused messages are parked for a human. */
  deadLetters?: DeadLetterQueue;
  /** How long the previous secret version's Basic and header credentials stay accepted; 0 or absent: not at all. */
  previousCredentialsGraceMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface InvocationContext {
  remainingTimeMs: () => number;
}

/** A credential change is picked up at once, but a flood of bad requests re-reads at most this often. */
export const AUTH_FAILURE_REFRESH_MS = 30_000;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Relay = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponse>;

export function createRelay(deps: RelayDependencies): Relay {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? defaultSleep;

  const unavailable = (error: string, message: string) => jsonResponse(503, { error, message });

  async function loadConfig(log: Logger): Promise<LoadedConfig | HttpResponse> {
    try {
      return (await deps.config.get()).value;
    } catch (error) {
      if (error instanceof ConfigInvalidError) {
        log.error('relay configuration is invalid', { problems: error.problems });
      } else if (error instanceof ConfigUnavailableError) {
        log.error('relay configuration is unavailable', { reason: error.reason });
      } else {
        log.error('relay configuration could not be loaded', { reason: (error as Error).name });
      }
      return unavailable('configuration_unavailable', 'The relay is not configured correctly; its operator has been told.');
    }
  }

  const graceMs = deps.previousCredentialsGraceMs ?? 0;
  async function check(request: HttpRequest, loaded: LoadedConfig, log: Logger): Promise<AuthOutcome> {
    const outcome = await authenticateWithGrace(deps.authenticate, request.headers, loaded, { graceMs, now: now() });
    if (outcome.kind === 'accepted' && outcome.previousCredentials) {
      const endsAt = graceEndsAt(loaded, graceMs);
      log.warn('accepted credentials of the previous secret version; update the channel at the cost platform before they stop working', {
        via: outcome.via,
        ...(endsAt !== undefined ? { graceEndsAt: new Date(endsAt).toISOString() } : {}),
      });
    }
    return outcome;
  }

  async function authenticate(request: HttpRequest, loaded: LoadedConfig, log: Logger): Promise<AuthOutcome> {
    const outcome = await check(request, loaded, log);
    if (outcome.kind !== 'denied') return outcome;
    // The operator may just have changed the credentials: look once more before refusing.
    const refreshed = await deps.config.refreshIfOlderThan(AUTH_FAILURE_REFRESH_MS).catch(() => undefined);
    if (!refreshed) return outcome;
    return check(request, refreshed.value, log);
  }

  const relay: Relay = async (request, context) => {
    const started = now();
    const log = deps.logger.child({ requestId: request.requestId });
    const record: Record<string, unknown> = {};
    const finish = (response: HttpResponse, outcome: string, extra: Record<string, unknown> = {}) => {
      const level = response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info';
      log[level]('delivery', { ...record, ...extra, outcome, status: response.statusCode, latencyMs: now() - started });
      return response;
    };

    const body = readBody(request);
    if (!body.ok) return finish(body.response, 'rejected_request');

    const loaded = await loadConfig(log);
    if ('statusCode' in loaded) return finish(loaded, 'configuration_unavailable');

    const auth = await authenticate(request, loaded, log);
    if (auth.kind === 'unavailable') {
      return finish(unavailable('authentication_unavailable', 'Deliveries cannot be authenticated right now; try again later.'), 'auth_unavailable', { reason: auth.reason });
    }
    if (auth.kind === 'denied') {
      const headers: Record<string, string> = auth.challenge ? { 'www-authenticate': auth.challenge } : {};
      return finish(jsonResponse(401, { error: 'unauthorized', message: 'Authentication failed.' }, headers), 'unauthorized', { reason: auth.reason });
    }
    if (auth.previousCredentials) record['previousCredentials'] = true;

    const json = parseJsonBody(body.text);
    if (!json.ok) return finish(json.response, 'invalid_json');

    const parsed = webhookMessageSchema.safeParse(json.value);
    if (!parsed.success) {
      const fields = describeIssues(parsed.error);
      return finish(
        jsonResponse(422, { error: 'invalid_message', message: 'The body is JSON but not a valid webhook message.', fields }),
        'invalid_message',
        { fields: fields.map((f) => f.path) },
      );
    }

    const message = parsed.data;
    const facts = routeFacts(message);
    const names = selectDestinations(loaded.config, facts);
    Object.assign(record, { objectType: facts.objectType, accountId: facts.accountId, destinations: names });

    const deliverOptions = {
      post: deps.post,
      sleep,
      remainingTimeMs: context.remainingTimeMs,
      postTimeoutMs: deps.postTimeoutMs,
      logger: log,
      now,
      ...(deps.retryQueue ? { retryQueue: deps.retryQueue } : {}),
      ...(deps.deadLetters ? { deadLetters: deps.deadLetters } : {}),
    };
    const results: DestinationResult[] = await Promise.all(
      names.map(async (name) => {
        const destination = loaded.config.destinations[name]!;
        const delivery = {
          deliveryId: request.requestId,
          destination: name,
          url: destination.url,
          message: formatSlackMessage(message, destination.mention),
        };
        return { destination: name, result: await deliver(delivery, deliverOptions) };
      }),
    );

    const { outcome, response } = summarise(results);
    const failures = results.filter((r) => r.result.kind !== 'delivered');
    return finish(response, outcome, failures.length ? { failures: failures.map((r) => ({ destination: r.destination, reason: reasonOf(r.result) })) } : {});
  };

  // The sender must always get a contract answer; an unexpected failure is a dependency problem.
  return async (request, context) => {
    try {
      return await relay(request, context);
    } catch (error) {
      deps.logger.error('delivery failed unexpectedly', {
        requestId: request.requestId,
        reason: error instanceof Error ? error.name : 'unknown',
      });
      return unavailable('internal_error', 'The relay could not handle this delivery; try again later.');
    }
  };
}
