import type { Logger } from '../log/logger.js';
import { createRefreshingCache, type RefreshingCache } from './cache.js';
import { ConfigUnavailableError } from './errors.js';
import { parseConfigDocument, type LoadedConfig } from './load.js';
import { createSecretsManagerClient, secretsManagerReader } from './secrets-manager.js';
import { fileConfigSource, secretConfigSource, type ConfigSource } from './source.js';

export function configSourceFor(secretId: string | undefined, logger: Logger, readPrevious: boolean): ConfigSource {
  if (!secretId) {
    return () =>
      Promise.reject(new ConfigUnavailableError('RELAY_CONFIG_SECRET_ID is not set.', 'RELAY_CONFIG_SECRET_ID_not_set'));
  }
  if (secretId.startsWith('file:')) return fileConfigSource(secretId.slice('file:'.length));
  return secretConfigSource(secretsManagerReader(createSecretsManagerClient()), secretId, {
    readPrevious,
    onPreviousUnavailable: (reason) =>
      logger.warn('cannot read the AWSPREVIOUS version of the configuration secret; only the current credentials are accepted', { reason }),
  });
}

export interface RelayConfigCacheOptions {
  secretId: string | undefined;
  ttlSeconds: number;
  logger: Logger;
  now?: () => number;
  source?: ConfigSource;
  /** Only the relay authenticates, so only it needs the previous version's credentials. */
  readPrevious?: boolean;
}

/**
 * The relay configuration as every function reads it: validated, cached for the TTL, and
 * kept through a failed refresh so an outage of Secrets Manager does not stop deliveries.
 */
export function createRelayConfigCache(options: RelayConfigCacheOptions): RefreshingCache<LoadedConfig> {
  const { logger } = options;
  const source = options.source ?? configSourceFor(options.secretId, logger, options.readPrevious ?? false);
  let warnedNoAuth = false;
  const load = async (): Promise<LoadedConfig> => {
    const loaded = parseConfigDocument(await source());
    if (loaded.config.auth.method === 'none' && !warnedNoAuth) {
      warnedNoAuth = true;
      logger.warn('auth.method is "none": anyone who knows the URL can post to your Slack channels');
    }
    return loaded;
  };
  return createRefreshingCache(load, {
    ttlMs: options.ttlSeconds * 1000,
    ...(options.now ? { now: options.now } : {}),
    staleRetryMs: 30_000,
    onStale: (error) =>
      logger.error('configuration refresh failed; keeping the last good configuration', {
        reason: error instanceof Error ? error.name : 'unknown',
      }),
  });
}
