import type { RequestAuthenticator } from '../auth/request-authenticator.js';
import type { LoadedConfig } from '../config/load.js';
import { CONFIG_READ_BUDGET_MS, type RelayConfigStore } from '../config/store.js';
import { type FirstAttempt, targetOf } from '../delivery/deliver.js';
import { isQuietTest, parseJsonBody, readBody } from '../inbound/request.js';
import { jsonResponse } from '../inbound/response.js';
import type { HttpRequest, HttpResponse } from '../inbound/types.js';
import { coldStartTracker, type Logger } from '../log/logger.js';
import type { CostCenterRef, RoutingCostCenter } from '../message/cost-center.js';
import { type ReceivedMessage, type WebhookMessage, webhookMessageSchema } from '../message/schema.js';
import { answerLatencyMetric, answerMetric, configurationUnavailableMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { keepsBodyAsSent } from '../notify/kinds.js';
import { ownerAccountIdOf } from '../owners/account-id.js';
import { routeFacts, routesByCostCenter, selectDestinations } from '../routing/route.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { parseJsonAsWritten } from '../shared/json.js';
import { describeIssues } from '../shared/zod-issues.js';
import { configurationUnavailable, type DestinationResult, reasonOf, settledAnswer } from './answer.js';

export interface RelayDependencies {
  config: RelayConfigStore;
  authenticate: RequestAuthenticator;
  /** The first attempt per destination: the delivery core's own, or the same behind the dedup ledger (lib/dedup). */
  first: FirstAttempt;
  /**
   * The cost centers of an account (lib/owners): what a message names, and what routes match;
   * undefined when unknown. Read for a configuration that routes by them, or for every delivery
   * with `ownerRouting`; never throws.
   */
  owners?: (
    accountId: string,
    budget: InvocationBudget,
  ) => Promise<{ costCenters: readonly CostCenterRef[]; routing: readonly RoutingCostCenter[] } | undefined>;
  /** The owner directory is kept (the stack's OwnerRouting): every message names its account's cost centers. */
  ownerRouting?: boolean;
  logger: Logger;
  metrics?: Metrics;
  now?: () => number;
}

export type Relay = (request: HttpRequest, budget: InvocationBudget) => Promise<HttpResponse>;

const unavailable = (error: string, message: string) => jsonResponse(503, { error, message });

/** The account a delivery names, as the directory knows it, read from its JSON before validation so the owner read can start at once. */
function accountOf(value: unknown): string | undefined {
  const payload = (value as { payload?: { account_id?: unknown; cloud_provider_type?: unknown } } | null)?.payload;
  return ownerAccountIdOf(payload?.account_id, payload?.cloud_provider_type);
}

/**
 * The most the authentication may take, like the configuration read (CONFIG_READ_BUDGET_MS).
 * With the post and one queue call after them, the worst case stays under the function's
 * timeout (docs/security.md, "Deadlines"); each is cut shorter when the invocation has less left.
 */
export const AUTHENTICATION_BUDGET_MS = 4_000;

/** The contract pipeline: body -> configuration -> authenticate -> validate -> route -> deliver -> answer. */
export function createRelay(deps: RelayDependencies): Relay {
  const now = deps.now ?? Date.now;
  const metrics = deps.metrics ?? noMetrics;
  const coldStart = coldStartTracker();
  const { first } = deps;

  const relay: Relay = async (request, budget) => {
    const started = now();
    const log = deps.logger.child({ requestId: request.requestId, coldStart: coldStart() });
    const record: Record<string, unknown> = {};
    const finish = (response: HttpResponse, outcome: string, extra: Record<string, unknown> = {}) => {
      const level = response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info';
      const latencyMs = now() - started;
      log[level]('delivery', { ...record, ...extra, outcome, status: response.statusCode, latencyMs });
      metrics.add(answerMetric(response.statusCode));
      metrics.add(answerLatencyMetric(latencyMs));
      return response;
    };

    const body = readBody(request);
    if (!body.ok) return finish(body.response, 'rejected_request');

    let current: LoadedConfig;
    try {
      current = await budget.stepIfPending('configuration', CONFIG_READ_BUDGET_MS, deps.config.current());
    } catch (error) {
      metrics.add(configurationUnavailableMetric());
      return finish(configurationUnavailable(), 'configuration_unavailable', { reason: errorReason(error) });
    }

    let decision: Awaited<ReturnType<RequestAuthenticator>>;
    try {
      decision = await budget.stepIfPending('authentication', AUTHENTICATION_BUDGET_MS, deps.authenticate(request.headers, current, log));
    } catch (error) {
      decision = { outcome: { kind: 'unavailable', reason: errorReason(error) }, loaded: current };
    }
    const { outcome: auth, loaded } = decision;
    if (auth.kind === 'unavailable') {
      const response = unavailable('authentication_unavailable', 'Deliveries cannot be authenticated right now; try again later.');
      return finish(response, 'auth_unavailable', { reason: auth.reason });
    }
    if (auth.kind === 'denied') {
      const headers: Record<string, string> = auth.challenge ? { 'www-authenticate': auth.challenge } : {};
      return finish(jsonResponse(401, { error: 'unauthorized', message: 'Authentication failed.' }, headers), 'unauthorized', {
        reason: auth.reason,
      });
    }
    if (auth.previousCredentials) record['previousCredentials'] = true;

    const json = await parseJsonBody(body.text);
    if (!json.ok) return finish(json.response, 'invalid_json');
    // Read beside the validation; only where messages name cost centers, routes match them, or
    // messages carry the picture of the account's cost trend.
    const accountId =
      deps.owners && (deps.ownerRouting || routesByCostCenter(loaded.config) || loaded.config.platform?.trend)
        ? accountOf(json.value)
        : undefined;
    const owners = accountId === undefined ? undefined : deps.owners?.(accountId, budget);

    const parsed = webhookMessageSchema.safeParse(json.value);
    if (!parsed.success) {
      const fields = describeIssues(parsed.error);
      const response = jsonResponse(422, {
        error: 'invalid_message',
        message: 'The body is JSON but not a valid webhook message.',
        fields,
      });
      return finish(response, 'invalid_message', { fields: fields.map((f) => f.path) });
    }

    const message: WebhookMessage = parsed.data;
    // Only where a kind asks, here or at the end of an escalation: the schema has checked that both
    // are objects. Parsed once more, then, keeping each number's digits as sent.
    let sent: WebhookMessage | undefined;
    const asSent = (): WebhookMessage => {
      if (!sent) {
        const exact = parseJsonAsWritten(body.text);
        const { metadata, payload } = (exact.ok ? exact.value : json.value) as ReceivedMessage;
        sent = { ...message, received: { metadata, payload } };
      }
      return sent;
    };
    const known = await owners;
    const costCenters = known?.costCenters.length ? known.costCenters : undefined;
    const facts = routeFacts(message, known?.routing);
    const names = selectDestinations(loaded.config, facts);
    const quiet = isQuietTest(request);
    Object.assign(record, {
      objectType: facts.objectType,
      accountId: facts.accountId,
      destinations: names,
      ...(costCenters ? { costCenters: costCenters.map((c) => c.id) } : {}),
      ...(quiet ? { quiet } : {}),
    });

    const results: DestinationResult[] = await Promise.all(
      names.map(async (name) => {
        // Routing only yields names the configuration's own schema has checked exist.
        const target = targetOf(name, loaded.config.destinations[name]!, loaded.config.slack, quiet, loaded.config.platform);
        const alert = {
          deliveryId: request.requestId,
          target,
          message: keepsBodyAsSent(loaded.config.destinations, name) ? asSent() : message,
          origin: request.origin,
          ...(costCenters ? { costCenters } : {}),
        };
        return { destination: name, result: await first(alert, budget) };
      }),
    );

    // Every other answer is loaded with the first delivery that fails or waits (lazy-relay-answer.ts).
    const { outcome, response } = settledAnswer(results) ?? (await import('./lazy-relay-answer.js')).answerFor(results);
    const failures = results.filter(
      (r) => r.result.escalationUnscheduled || !['delivered', 'duplicate', 'grouped', 'snoozed'].includes(r.result.kind),
    );
    const extra = failures.length ? { failures: failures.map((r) => ({ destination: r.destination, reason: reasonOf(r.result) })) } : {};
    return finish(response, outcome, extra);
  };

  // The sender must always get a contract answer; an unexpected failure is a dependency problem.
  return async (request, budget) => {
    try {
      return await relay(request, budget);
    } catch (error) {
      deps.logger.error('delivery failed unexpectedly', { requestId: request.requestId, reason: errorReason(error) });
      return unavailable('internal_error', 'The relay could not handle this delivery; try again later.');
    }
  };
}
