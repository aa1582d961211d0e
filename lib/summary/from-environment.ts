import { DYNAMODB, SECRETS_MANAGER } from '../aws/json-client.js';
import { DYNAMODB_LIMITS, SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import { configSourceFor, createRelayConfigStore } from '../config/store.js';
import { postTimeoutFrom } from '../delivery/deliver.js';
import { coldStartTracker, createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import { type Metrics, summaryMetric } from '../metrics/metrics.js';
import { type ChatServices, createChatServices } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { readEnvironment } from '../shared/environment.js';
import { triageKeyReader } from '../triage-link/key.js';
import { dynamoSummaryRecords, dynamoSummaryWeeks } from './dynamodb.js';
import { summaryEnvironmentSchema } from './environment.js';
import { summaryRequestOf } from './event.js';
import { createSummaryRun, type SummaryAnswer } from './run.js';
import type { SummaryRecords, SummaryWeeks } from './store.js';

export interface SummaryWiringOptions {
  logger?: Logger;
  metrics?: Metrics;
  services?: ChatServices;
  /** Where anomalies and weeks are kept when no table is named (`npm start` keeps them in memory). */
  records?: SummaryRecords;
  weeks?: SummaryWeeks;
  /** A key given directly, for `npm start`, which makes one per session. */
  tokenKey?: string;
  now?: () => number;
  /** Where AWS calls go; AWS itself by default (the simulation gives stand-ins). */
  aws?: AwsPorts;
}

/** One invocation: the event as Lambda delivers it, within the invocation's budget. */
export type SummaryFunction = (event: unknown, budget: InvocationBudget, requestId?: string) => Promise<SummaryAnswer>;

/** Wires the summary function with real clients from the Lambda environment; one per container. */
export function createSummaryFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: SummaryWiringOptions = {},
): SummaryFunction {
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  const reading = readEnvironment(summaryEnvironmentSchema, env);
  const tableName = reading.ok ? reading.settings.DEDUP_TABLE_NAME : undefined;
  const dynamo = tableName ? jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws) : undefined;
  const records = options.records ?? (dynamo && tableName ? dynamoSummaryRecords(dynamo, tableName) : undefined);
  const weeks = options.weeks ?? (dynamo && tableName ? dynamoSummaryWeeks(dynamo, tableName, options.now) : undefined);
  if (!reading.ok || !records || !weeks) {
    // Every run fails the same visible way, rather than a default being guessed.
    const variables = reading.ok ? ['DEDUP_TABLE_NAME'] : reading.problems.map((p) => p.path);
    const metrics = options.metrics ?? metricsFromEnvironment('summary', env);
    return async () => {
      log.error('the summary function is misconfigured: nothing read, nothing posted', { reason: 'environment_invalid', variables });
      metrics.add(summaryMetric('failed', 'unknown'));
      return { summaries: [], error: `The summary function's environment is invalid: ${variables.join(', ')}.` };
    };
  }
  const settings = reading.settings;
  const config = createRelayConfigStore({
    source: configSourceFor(settings.RELAY_CONFIG_SECRET_ID, log, false, options.aws),
    ttlSeconds: 300,
    logger: log,
  });
  const secrets = jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, options.aws);
  const readKey = settings.TRIAGE_KEY_SECRET_ID ? triageKeyReader(secrets, settings.TRIAGE_KEY_SECRET_ID) : undefined;
  const run = createSummaryRun({
    config: () => config.current(),
    records,
    weeks,
    linkKey: async (signal) => options.tokenKey ?? readKey?.(signal),
    services: options.services ?? createChatServices(undefined, settings, options.aws),
    postTimeoutMs: postTimeoutFrom(settings),
    logger: log,
    metrics: options.metrics ?? metricsFromEnvironment('summary', env),
    now: options.now ?? Date.now,
  });
  const coldStart = coldStartTracker();
  return async (event, budget, requestId) => {
    if (coldStart()) log.info('summary cold start', { requestId });
    const request = summaryRequestOf(event);
    if (request.kind === 'invalid') {
      log.warn('summary invoked with an event it cannot read; nothing posted', { reason: 'invalid_event' });
      return { summaries: [], error: request.problem };
    }
    return run(request, budget);
  };
}
