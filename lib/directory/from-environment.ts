import { platformCredentialsIn } from '../api-key/credentials.js';
import { DYNAMODB, SECRETS_MANAGER } from '../aws/json-client.js';
import { DYNAMODB_LIMITS, SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import { createCostApiClient } from '../cost-api/client.js';
import { createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import { directorySyncMetric, type Metrics } from '../metrics/metrics.js';
import { dynamoOwnerStore } from '../owners/dynamodb.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { readEnvironment } from '../shared/environment.js';
import { dynamoSyncCursor } from './cursor.js';
import { directoryEnvironmentSchema } from './environment.js';
import { dynamoLastRun } from './last-run.js';
import { PLATFORM_PACE, windowPacer } from './pace.js';
import { dynamoPayerIndex } from './payer-index.js';
import { createDirectorySync, type DirectorySyncSummary, failedRun } from './sync.js';

export type DirectorySyncFunction = (budget: InvocationBudget) => Promise<DirectorySyncSummary>;

export interface DirectoryWiringOptions {
  logger?: Logger;
  /** Where metrics go; EMF lines on stdout by default. */
  metrics?: Metrics;
  /** Where AWS calls go; AWS itself by default (the simulation gives stand-ins). */
  aws?: AwsPorts;
  /** How the platform is reached; the global fetch by default. */
  fetch?: typeof globalThis.fetch;
}

/** Wires directory-sync with real clients from the Lambda environment; one per container, so its pace spans runs. */
export function createDirectorySyncFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: DirectoryWiringOptions = {},
): DirectorySyncFunction {
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  const metrics = options.metrics ?? metricsFromEnvironment('directory-sync', env);
  const reading = readEnvironment(directoryEnvironmentSchema, env);
  if (!reading.ok) {
    // Every run fails the same visible way, so the alarm fires rather than a default being guessed.
    const variables = reading.problems.map((p) => p.path);
    return async () => {
      log.error('directory-sync is misconfigured: nothing read, nothing written', { reason: 'environment_invalid', variables });
      metrics.add(directorySyncMetric('failed'));
      return failedRun('environment_invalid');
    };
  }
  const settings = reading.settings;
  const secrets = jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, options.aws);
  const dynamo = jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws);
  const pacer = windowPacer(PLATFORM_PACE);
  const platform = createCostApiClient({
    baseUrl: settings.COST_API_BASE_URL,
    timeoutMs: settings.COST_API_TIMEOUT_MS,
    maxAttempts: settings.COST_API_MAX_ATTEMPTS,
    pace: pacer.take,
    logger: log,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return createDirectorySync({
    platform,
    readCredentials: platformCredentialsIn(secrets, settings.COST_API_CREDENTIALS_SECRET_ID),
    store: dynamoOwnerStore(dynamo, settings.DEDUP_TABLE_NAME),
    cursor: dynamoSyncCursor(dynamo, settings.DEDUP_TABLE_NAME),
    payerIndex: dynamoPayerIndex(dynamo, settings.DEDUP_TABLE_NAME),
    lastRun: dynamoLastRun(dynamo, settings.DEDUP_TABLE_NAME),
    paceDelayMs: pacer.delayMs,
    logger: log,
    metrics,
  });
}
