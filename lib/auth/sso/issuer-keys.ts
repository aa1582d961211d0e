import type { createLocalJWKSet, JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { fetchJwksUri, getJson } from './discovery.js';
import { IdentityProviderUnavailableError } from './errors.js';
import { loadJose } from './jose.js';

export interface IssuerKeysOptions {
  /** Bound on each download (discovery, keys), so that a slow provider answers 503 in time. */
  timeoutMs: number;
  /** A `kid` that was just looked up and is not in the set is not looked up again for this long. */
  refetchCooldownMs: number;
  /** After discovery or the first key download failed, no new attempt for this long. */
  failureBackoffMs: number;
  /** The key set is downloaded again when it is older than this, so that withdrawn keys stop working. */
  keysLifetimeMs?: number;
  /** Downloads that unknown `kid`s may cause in a burst; then one more per `refetchCooldownMs / burst`. */
  unknownKidBurst?: number;
  now: () => number;
}

export const DEFAULT_KEYS_LIFETIME_MS = 3_600_000;
const DEFAULT_UNKNOWN_KID_BURST = 3;
/** How many recently missing `kid`s are remembered; older ones are forgotten first. */
const MAX_REMEMBERED_MISSES = 256;

/** The issuer's key set as last downloaded; `reload` downloads it again. */
interface RemoteKeys {
  (...args: Parameters<JWTVerifyGetKey>): ReturnType<JWTVerifyGetKey>;
  reload(): Promise<void>;
}

// jose reports its failures by code; only these two are about the token rather than the provider.
const NO_MATCHING_KEY = 'ERR_JWKS_NO_MATCHING_KEY';
const MULTIPLE_MATCHING_KEYS = 'ERR_JWKS_MULTIPLE_MATCHING_KEYS';
const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/**
 * Keys downloaded by us (over node:http, see getJson) and handed to jose as a local set:
 * jose's remote set would use the global fetch and Headers, loading undici on the first
 * SSO delivery of every container.
 */
function remoteKeys(jwksUri: URL, timeoutMs: number): RemoteKeys {
  let local: ReturnType<typeof createLocalJWKSet> | undefined;
  const keys = ((...args: Parameters<JWTVerifyGetKey>) => {
    if (!local) throw new IdentityProviderUnavailableError('jwks_not_loaded');
    return local(...(args as Parameters<typeof local>));
  }) as RemoteKeys;
  keys.reload = async () => {
    const [jwks, { createLocalJWKSet }] = await Promise.all([getJson(jwksUri.href, timeoutMs, 'jwks'), loadJose()]);
    try {
      local = createLocalJWKSet(jwks as JSONWebKeySet);
    } catch {
      throw new IdentityProviderUnavailableError('jwks_invalid');
    }
  };
  return keys;
}

/**
 * A token bucket for downloads caused by unknown `kid`s: a provider that rotates right after
 * a cold start gets its new key looked up at once, while a flood of made-up `kid`s causes
 * only a few downloads.
 */
function downloadBudget(burst: number, refillMs: number, now: () => number) {
  let tokens = burst;
  let updatedAt = now();
  return () => {
    const t = now();
    tokens = Math.min(burst, tokens + (t - updatedAt) / refillMs);
    updatedAt = t;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/**
 * The keys of one issuer for jose's `jwtVerify`. Discovery is downloaded once per container;
 * the key set when first needed, again when it is older than its lifetime (withdrawn keys
 * stop working), and when a token names a `kid` the set does not hold (the provider may
 * have rotated), unless that same `kid` was just looked up in vain or the budget for such
 * downloads is spent. This module alone decides when the provider is asked, on an
 * injectable clock.
 */
function issuerKeys(issuer: string, options: IssuerKeysOptions): JWTVerifyGetKey {
  const { now } = options;
  const lifetimeMs = options.keysLifetimeMs ?? DEFAULT_KEYS_LIFETIME_MS;
  const burst = options.unknownKidBurst ?? DEFAULT_UNKNOWN_KID_BURST;
  const mayDownloadForKid = downloadBudget(burst, options.refetchCooldownMs / burst, now);
  const recentMisses = new Map<string, number>();
  let keys: RemoteKeys | undefined;
  let loading: Promise<RemoteKeys> | undefined;
  let failure: { at: number; reason: string } | undefined;
  let downloadedAt = Number.NEGATIVE_INFINITY;
  let downloading: Promise<void> | undefined;

  /** One download at a time: concurrent callers (a burst of tokens with a new `kid`) share it. */
  const download = (remote: RemoteKeys): Promise<void> =>
    (downloading ??= remote
      .reload()
      .then(() => {
        downloadedAt = now();
      })
      .finally(() => {
        downloading = undefined;
      }));

  const load = (): Promise<RemoteKeys> => {
    if (keys) return Promise.resolve(keys);
    if (loading) return loading;
    if (failure && now() - failure.at < options.failureBackoffMs) {
      return Promise.reject(new IdentityProviderUnavailableError(failure.reason));
    }
    loading = (async () => {
      const jwksUri = await fetchJwksUri(issuer, options.timeoutMs);
      const remote = remoteKeys(jwksUri, options.timeoutMs);
      await download(remote);
      return remote;
    })()
      .then(
        (remote) => {
          keys = remote;
          failure = undefined;
          return remote;
        },
        (error: unknown) => {
          const unavailable =
            error instanceof IdentityProviderUnavailableError ? error : new IdentityProviderUnavailableError('discovery_failed');
          failure = { at: now(), reason: unavailable.reason };
          throw unavailable;
        },
      )
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };

  /** Past its lifetime the set is downloaded again; if that fails, the old set serves until the next try. */
  const refreshIfExpired = async (remote: RemoteKeys) => {
    if (now() - downloadedAt < lifetimeMs) return;
    if (failure && now() - failure.at < options.failureBackoffMs) return;
    await download(remote).then(
      () => {
        failure = undefined;
      },
      (error: unknown) => {
        failure = { at: now(), reason: error instanceof IdentityProviderUnavailableError ? error.reason : 'jwks_failed' };
      },
    );
  };

  const select = async (remote: RemoteKeys, ...args: Parameters<RemoteKeys>) => {
    try {
      return await remote(...args);
    } catch (error) {
      const code = codeOf(error);
      if (code === NO_MATCHING_KEY || code === MULTIPLE_MATCHING_KEYS) throw error;
      // A key in the provider's set that cannot be imported is the provider's problem.
      throw new IdentityProviderUnavailableError('jwks_key_unusable');
    }
  };

  const justMissed = (kid: string) => {
    const at = recentMisses.get(kid);
    return at !== undefined && now() - at < options.refetchCooldownMs;
  };
  const rememberMiss = (kid: string) => {
    recentMisses.delete(kid);
    recentMisses.set(kid, now());
    if (recentMisses.size > MAX_REMEMBERED_MISSES) recentMisses.delete(recentMisses.keys().next().value as string);
  };

  return async (header, token) => {
    const remote = await load();
    await refreshIfExpired(remote);
    try {
      return await select(remote, header, token);
    } catch (error) {
      if (codeOf(error) !== NO_MATCHING_KEY) throw error;
      const kid = typeof header.kid === 'string' ? header.kid : '';
      if (justMissed(kid)) throw error;
      if (downloading) await downloading;
      else if (mayDownloadForKid()) await download(remote);
      else throw error;
      try {
        return await select(remote, header, token);
      } catch (again) {
        if (codeOf(again) === NO_MATCHING_KEY) rememberMiss(kid);
        throw again;
      }
    }
  };
}

/** One key source per issuer, kept for the life of the container. */
export function createIssuerKeys(options: IssuerKeysOptions): (issuer: string) => JWTVerifyGetKey {
  const byIssuer = new Map<string, JWTVerifyGetKey>();
  return (issuer) => {
    let getKey = byIssuer.get(issuer);
    if (!getKey) {
      getKey = issuerKeys(issuer, options);
      byIssuer.set(issuer, getKey);
    }
    return getKey;
  };
}
