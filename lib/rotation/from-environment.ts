import { createSecretsManagerClient } from '../aws/clients.js';
import { createCostApiClient } from '../cost-api/client.js';
import { createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import { type Metrics, rotationMetric } from '../metrics/metrics.js';
import { readEnvironment } from '../shared/environment.js';
import { apiKeyRotator } from './api-key-rotator.js';
import { rotationEnvironmentSchema } from './environment.js';
import { RotationError } from './errors.js';
import { ROTATION_SECRETS_MANAGER_LIMITS, secretsManagerRotationStore } from './secrets-manager.js';
import { createRotationSteps, type StepOutcome } from './steps.js';

export type RotationHandler = (event: unknown) => Promise<StepOutcome>;

export interface RotationWiringOptions {
  logger?: Logger;
  /** Where metrics go; EMF lines on stdout by default. */
  metrics?: Metrics;
}

/** Wires the API-key rotation with real clients from the Lambda environment; one per container. */
export function createApiKeyRotationFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: RotationWiringOptions = {},
): RotationHandler {
  const reading = readEnvironment(rotationEnvironmentSchema, env);
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  const metrics = options.metrics ?? metricsFromEnvironment('api-key-rotation', env);
  if (!reading.ok) {
    // Every step fails the same clear way, so the rotation fails and AWSCURRENT stays as it is.
    const problems = reading.problems.map((p) => `${p.path} ${p.problem}`);
    return async () => {
      log.error('rotation function is misconfigured', { reason: 'environment_invalid', problems });
      metrics.add(rotationMetric('environment', 'failed'));
      throw new RotationError(`The rotation function's environment is invalid: ${problems.join('; ')}.`, 'environment_invalid');
    };
  }
  const settings = reading.settings;
  const store = secretsManagerRotationStore(createSecretsManagerClient(ROTATION_SECRETS_MANAGER_LIMITS));
  const client = createCostApiClient({
    baseUrl: settings.COST_API_BASE_URL,
    timeoutMs: settings.COST_API_TIMEOUT_MS,
    maxAttempts: settings.COST_API_MAX_ATTEMPTS,
    logger: log,
  });
  const rotator = apiKeyRotator({
    client,
    credentialsSecretId: settings.COST_API_CREDENTIALS_SECRET_ID,
    readSecret: (secretId) => store.readStage(secretId, 'AWSCURRENT'),
  });
  return createRotationSteps({ store, rotator, logger: log, metrics });
}
