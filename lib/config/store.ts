import { SECRETS_MANAGER } from '../aws/json-client.js';
import { SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import type { Logger } from '../log/logger.js';
import { errorReason } from '../shared/errors.js';
import { createRefreshingCache } from './cache.js';
import { ConfigInvalidError, ConfigUnavailableError } from './errors.js';
import { type LoadedConfig, readRelayConfig } from './load.js';
import type { RelayConfig } from './schema.js';
import { secretsManagerReader } from './secrets-manager.js';
import { type ConfigDocument, type ConfigSource, fileConfigSource, secretConfigSource } from './source.js';

/**
 * The relay configuration as every function reads it: validated, cached for the TTL, kept
 * through a failed refresh, and, for authentication only, the version before the current one.
 */
export interface RelayConfigStore {
  /**
   * The current configuration: at once while the cached copy is fresh (nearly every delivery,
   * which then needs no deadline for it), otherwise a read that rejects (after logging why)
   * when there is no usable one.
   */
  current(): LoadedConfig | Promise<LoadedConfig>;
  /** Reads again when the cached copy is older than `minAgeMs`; undefined when it is younger or the read fails. */
  refreshIfOlderThan(minAgeMs: number): Promise<LoadedConfig | undefined>;
  /** The previous version of `loaded`, read on first use and kept with it; undefined when there is none or it is unusable. */
  previous(loaded: LoadedConfig): Promise<RelayConfig | undefined>;
}

export function configSourceFor(secretId: string | undefined, logger: Logger, readPrevious: boolean, aws?: AwsPorts): ConfigSource {
  if (!secretId) {
    return () => Promise.reject(new ConfigUnavailableError('RELAY_CONFIG_SECRET_ID is not set.', 'RELAY_CONFIG_SECRET_ID_not_set'));
  }
  if (secretId.startsWith('file:')) return fileConfigSource(secretId.slice('file:'.length));
  return secretConfigSource(secretsManagerReader(jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, aws)), secretId, {
    readPrevious,
    onPreviousUnavailable: (reason) =>
      logger.warn('cannot read the AWSPREVIOUS version of the configuration secret; only the current credentials are accepted', { reason }),
  });
}

/** The log line for a configuration that cannot be used: paths and reasons, never values. */
export function logConfigFailure(logger: Logger, error: unknown): void {
  if (error instanceof ConfigInvalidError) logger.error('relay configuration is invalid', { problems: error.problems });
  else logger.error('relay configuration is unavailable', { reason: errorReason(error) });
}

export interface RelayConfigStoreOptions {
  source: ConfigSource;
  ttlSeconds: number;
  logger: Logger;
  now?: () => number;
}

/** The most one configuration read may take in an invocation (less when the invocation has less left). */
export const CONFIG_READ_BUDGET_MS = 4_000;

/** A failed refresh keeps the last good copy and tries again after this long. */
export const STALE_RETRY_MS = 30_000;

export function createRelayConfigStore(options: RelayConfigStoreOptions): RelayConfigStore {
  const { logger } = options;
  // The previous version belongs to the document it was read with; a WeakMap keeps it off the config value.
  const previousReaders = new WeakMap<LoadedConfig, NonNullable<ConfigDocument['loadPrevious']>>();
  const previousVersions = new WeakMap<LoadedConfig, Promise<RelayConfig | undefined>>();
  let warnedNoAuth = false;

  const load = async (): Promise<LoadedConfig> => {
    const document = await options.source();
    const loaded: LoadedConfig = { config: await readRelayConfig(document.current) };
    if (document.currentSince) loaded.currentSince = document.currentSince;
    if (document.loadPrevious) previousReaders.set(loaded, document.loadPrevious);
    if (loaded.config.auth.method === 'none' && !warnedNoAuth) {
      warnedNoAuth = true;
      logger.warn('auth.method is "none": anyone who knows the URL can send alerts to your destinations');
    }
    return loaded;
  };
  const cache = createRefreshingCache(load, {
    ttlMs: options.ttlSeconds * 1000,
    ...(options.now ? { now: options.now } : {}),
    staleRetryMs: STALE_RETRY_MS,
    onStale: (error) => logger.error('configuration refresh failed; keeping the last good configuration', { reason: errorReason(error) }),
  });

  const readPrevious = async (loaded: LoadedConfig): Promise<RelayConfig | undefined> => {
    const text = await previousReaders.get(loaded)?.();
    if (text === undefined) return undefined;
    try {
      return await readRelayConfig(text);
    } catch {
      // An unusable previous version only means there is nothing to fall back to.
      return undefined;
    }
  };

  return {
    current() {
      const cached = cache.fresh();
      if (cached) return cached.value;
      return cache.get().then(
        (loaded) => loaded.value,
        (error: unknown) => {
          logConfigFailure(logger, error);
          throw error;
        },
      );
    },
    async refreshIfOlderThan(minAgeMs) {
      try {
        return (await cache.refreshIfOlderThan(minAgeMs))?.value;
      } catch (error) {
        logConfigFailure(logger, error);
        return undefined;
      }
    },
    previous(loaded) {
      let version = previousVersions.get(loaded);
      if (!version) {
        version = readPrevious(loaded);
        previousVersions.set(loaded, version);
      }
      return version;
    },
  };
}
