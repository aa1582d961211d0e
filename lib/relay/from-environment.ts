import { createAuthenticator } from '../auth/authenticate.js';
import { createSsoVerifier } from '../auth/sso/verify.js';
import { createRefreshingCache } from '../config/cache.js';
import { ConfigUnavailableError } from '../config/errors.js';
import { parseConfigDocument, type LoadedConfig } from '../config/load.js';
import { createSecretsManagerClient, secretsManagerReader } from '../config/secrets-manager.js';
import { fileConfigSource, secretConfigSource, type ConfigSource } from '../config/source.js';
import { createLogger, type Logger } from '../log/logger.js';
import { createSlackPoster } from '../slack/post.js';
import { readRelayEnvironment } from './environment.js';
import { createRelay, type Relay } from './relay.js';

function configSource(secretId: string | undefined, log: Logger): ConfigSource {
  if (!secretId) {
    return () =>
      Promise.reject(new ConfigUnavailableError('RELAY_CONFIG_SECRET_ID is not set.', 'RELAY_CONFIG_SECRET_ID_not_set'));
  }
  if (secretId.startsWith('file:')) return fileConfigSource(secretId.slice('file:'.length));
  return secretConfigSource(secretsManagerReader(createSecretsManagerClient()), secretId, {
    onPreviousUnavailable: (reason) =>
      log.warn('cannot read the AWSPREVIOUS version of the configuration secret; only the current credentials are accepted', { reason }),
  });
}

/** Wires the relay with real clients from the Lambda environment; one instance per container. */
export function createRelayFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  logger?: Logger,
): Relay {
  const { settings, problems } = readRelayEnvironment(env);
  const log = logger ?? createLogger({ level: settings.LOG_LEVEL });
  if (problems.length > 0) log.warn('ignoring invalid environment variables; using defaults', { variables: problems });

  const source = configSource(settings.RELAY_CONFIG_SECRET_ID, log);
  let warnedNoAuth = false;
  const load = async (): Promise<LoadedConfig> => {
    const loaded = parseConfigDocument(await source());
    if (loaded.config.auth.method === 'none' && !warnedNoAuth) {
      warnedNoAuth = true;
      log.warn('auth.method is "none": anyone who knows the URL can post to your Slack channels');
    }
    return loaded;
  };
  const config = createRefreshingCache(load, {
    ttlMs: settings.RELAY_CONFIG_TTL_SECONDS * 1000,
    staleRetryMs: 30_000,
    onStale: (error) =>
      log.error('configuration refresh failed; keeping the last good configuration', {
        reason: error instanceof Error ? error.name : 'unknown',
      }),
  });

  return createRelay({
    config,
    // Creating the verifier costs nothing: the identity provider is first asked with the first token.
    authenticate: createAuthenticator(createSsoVerifier()),
    post: createSlackPoster({ timeoutMs: settings.SLACK_TIMEOUT_MS }),
    postTimeoutMs: settings.SLACK_TIMEOUT_MS,
    previousCredentialsGraceMs: settings.RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS * 1000,
    logger: log,
  });
}
