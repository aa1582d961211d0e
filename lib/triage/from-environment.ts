import { lazySqs } from '../aws/clients.js';
import { DYNAMODB, SECRETS_MANAGER } from '../aws/json-client.js';
import { DYNAMODB_LIMITS, SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import type { ChatService } from '../chat/service.js';
import { configSourceFor, createRelayConfigStore } from '../config/store.js';
import { coldStartTracker, createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import { chartMetric, type Metrics } from '../metrics/metrics.js';
import type { DestinationKind } from '../notify/kind.js';
import { addressOf, createChatServices, DESTINATION_TYPES, destinationType, KINDS, kindOf, serviceFor } from '../notify/kinds.js';
import { sendMessage } from '../queue/sqs.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { readEnvironment } from '../shared/environment.js';
import { ReasonedError } from '../shared/errors.js';
import { fetchOverNodeHttp, type NodeFetch } from '../transport/fetch-over-node-http.js';
import { triageKeyReader } from '../triage-link/key.js';
import { COST_EVENT_BUDGET_MS, costEventsPort } from './cost-events.js';
import { dynamoTriageStore } from './dynamodb.js';
import { triageEnvironmentSchema } from './environment.js';
import { createTriageHandler, SLACK_UPDATE_BUDGET_MS, type TriageAnswer, type TriagePorts, type TriageRequest } from './handle.js';
import { memoryTriageStore, type TriageStore } from './store.js';

/** A chat did not take what the triage function posted to it (a note, an edited message). */
export class TriagePostRefusedError extends ReasonedError {}

export interface TriageWiringOptions {
  logger?: Logger;
  metrics?: Metrics;
  transport?: NodeFetch;
  /** Where triage state lives when no table is configured (npm start shares the relay's). */
  store?: TriageStore;
  /** A key given directly, for npm start; never read from the relay configuration. */
  tokenKey?: string;
  now?: () => number;
  /** Where AWS calls go; AWS itself by default (the simulation gives stand-ins). */
  aws?: AwsPorts;
  /** `npm start`'s pictures: a route of its own (a sample series); in AWS the platform's login decides. */
  chart?: TriagePorts['chart'];
  /** `npm start`'s cost events, printed; in AWS the platform's login decides. */
  costEvents?: TriagePorts['costEvents'];
}

export type TriageFunction = (request: TriageRequest, budget: InvocationBudget, requestId?: string) => Promise<TriageAnswer>;

export function createTriageFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: TriageWiringOptions = {},
): TriageFunction {
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  const reading = readEnvironment(triageEnvironmentSchema, env);
  if (!reading.ok) {
    const variables = reading.problems.map((p) => p.path);
    return async () => {
      log.error('triage is misconfigured', { variables });
      return { statusCode: 503, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Triage is misconfigured.' };
    };
  }
  const settings = reading.settings;
  const transport = options.transport ?? fetchOverNodeHttp;
  const now = options.now ?? Date.now;
  const config = createRelayConfigStore({
    source: configSourceFor(settings.RELAY_CONFIG_SECRET_ID, log, false, options.aws),
    ttlSeconds: 300,
    logger: log,
  });
  const secrets = jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, options.aws);
  const readKey = settings.TRIAGE_KEY_SECRET_ID ? triageKeyReader(secrets, settings.TRIAGE_KEY_SECRET_ID) : undefined;
  const tokenKey = async (signal: AbortSignal) => options.tokenKey ?? readKey?.(signal);
  const store =
    options.store ??
    (settings.DEDUP_TABLE_NAME
      ? dynamoTriageStore(jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws), settings.DEDUP_TABLE_NAME)
      : memoryTriageStore());
  const currentConfig = async () => (await config.current()).config;
  const metrics = options.metrics ?? metricsFromEnvironment('triage', env);
  const queueUrl = settings.DELIVERY_QUEUE_URL;
  const sqs = options.aws?.sqs ?? lazySqs();
  const loginId = settings.COST_API_CREDENTIALS_SECRET_ID;
  const tableName = settings.DEDUP_TABLE_NAME;
  const costEvents: TriagePorts['costEvents'] =
    options.costEvents ??
    (loginId && tableName
      ? costEventsPort({
          writer: async () => {
            const { costEventWriterFrom } = await import('../cost-events/lazy-cost-events.js');
            return costEventWriterFrom({
              dynamo: jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws),
              tableName,
              secrets,
              credentialsSecretId: loginId,
              baseUrl: settings.COST_API_BASE_URL,
              timeoutMs: COST_EVENT_BUDGET_MS,
              now,
              logger: log,
            });
          },
          enabled: async () => Boolean((await currentConfig()).platform?.costEvents),
          enqueue: queueUrl
            ? (body, delaySeconds, signal) => sendMessage(sqs, queueUrl, body, { kind: 'cost_event' }, delaySeconds, signal)
            : undefined,
          metrics,
          logger: log,
        })
      : undefined);
  // The pictures of accounts' cost trends: their code loads with the first one asked for.
  let chartRoute: Promise<NonNullable<TriagePorts['chart']>> | undefined;
  const chart: TriagePorts['chart'] =
    options.chart ??
    (loginId && settings.DEDUP_TABLE_NAME && readKey
      ? async (token, budget) => {
          chartRoute ??= import('../trend/lazy-trend.js').then(({ chartRouteFrom }) =>
            chartRouteFrom({
              key: tokenKey,
              dynamo: jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws),
              tableName: settings.DEDUP_TABLE_NAME as string,
              secrets,
              credentialsSecretId: loginId,
              baseUrl: settings.COST_API_BASE_URL,
              now,
              logger: log,
              count: (outcome) => metrics.add(chartMetric(outcome)),
            }),
          );
          // A failed import is tried again with the next picture rather than remembered.
          chartRoute.catch(() => {
            chartRoute = undefined;
          });
          return (await chartRoute)(token, budget);
        }
      : undefined);
  const services = createChatServices(transport, settings, options.aws);
  const post = async (service: ChatService, address: string, payload: unknown, botToken: string | undefined, timeoutMs: number) => {
    const outcome = await service.post(address, payload, { timeoutMs, ...(botToken ? { botToken } : {}) });
    if (outcome.kind !== 'delivered') throw new TriagePostRefusedError('The destination did not take the post.', outcome.reason);
  };
  // Which kind's app posts clicks to which path: known without loading any kind's extras.
  const appPaths = new Map(
    DESTINATION_TYPES.flatMap((type) => {
      const path = (KINDS[type] as DestinationKind).interactionPath;
      return path === undefined ? [] : [[path, type] as const];
    }),
  );
  const ports: TriagePorts = {
    tokenKey,
    interactionsAt(path) {
      const type = appPaths.get(path);
      if (type === undefined) return undefined;
      return async () => {
        const [extras, loaded] = await Promise.all([KINDS[type].extras(), currentConfig()]);
        if (!extras.interactions) throw new TriagePostRefusedError('This kind takes no clicks.', 'no_interactions');
        return { type, interactions: extras.interactions, secret: loaded.slack?.signingSecret };
      };
    },
    store,
    async postAsApp(to, payload) {
      const app = (await currentConfig()).slack;
      if (!app) return;
      await post(serviceFor(services, to), addressOf(to), payload, app.botToken, SLACK_UPDATE_BUDGET_MS);
    },
    async destinationTypeOf(name) {
      const destination = (await currentConfig()).destinations[name];
      return destination && destinationType(destination);
    },
    async postFollowUp(token, note, signal) {
      const loaded = await currentConfig();
      const destination = loaded.destinations[token.d];
      if (!destination) return;
      const kind = kindOf(destination);
      const [record, extras] = await Promise.all([store.read(token.a, signal), kind.extras()]);
      const payload = extras.triageNote(destination, {
        ...note,
        destination: token.d,
        anomalyId: token.a,
        thread: token.k,
        title: token.t,
        account: token.c,
        ...(record?.opening ? { opening: record.opening } : {}),
      });
      const botToken = kind.app?.(destination, loaded.slack)?.botToken;
      await post(serviceFor(services, destination), addressOf(destination), payload, botToken, 2_500);
    },
    metrics,
    logger: log,
    now,
    ...(chart ? { chart } : {}),
    ...(costEvents ? { costEvents } : {}),
  };
  const coldStart = coldStartTracker();
  const handle = createTriageHandler(ports);
  return (request, budget, requestId) => {
    if (coldStart()) log.info('triage cold start', { requestId });
    return handle(request, budget);
  };
}
