import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { fetchJwksUri, getJson } from './discovery.js';
import { IdentityProviderUnavailableError } from './errors.js';

export interface IssuerKeysOptions {
  /** Bound on each download (discovery, keys), so that a slow provider answers 503 in time. */
  timeoutMs: number;
  /** At most one key download for an unknown `kid` per this long, whatever the traffic. */
  refetchCooldownMs: number;
  /** After discovery or the first key download failed, no new attempt for this long. */
  failureBackoffMs: number;
  now: () => number;
}

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
    const jwks = await getJson(jwksUri.href, timeoutMs, 'jwks');
    try {
      local = createLocalJWKSet(jwks as JSONWebKeySet);
    } catch {
      throw new IdentityProviderUnavailableError('jwks_invalid');
    }
  };
  return keys;
}

/**
 * The keys of one issuer for jose's `jwtVerify`. Discovery and the key set are downloaded
 * once per container and kept; the key set is downloaded again only when a token names a
 * key it does not hold (the provider may have rotated), at most once per cooldown. This
 * module alone decides when the provider is asked, on an injectable clock.
 */
function issuerKeys(issuer: string, options: IssuerKeysOptions): JWTVerifyGetKey {
  const { now } = options;
  let keys: RemoteKeys | undefined;
  let loading: Promise<RemoteKeys> | undefined;
  let failure: { at: number; reason: string } | undefined;
  let lastDownload = Number.NEGATIVE_INFINITY;

  const load = (): Promise<RemoteKeys> => {
    if (keys) return Promise.resolve(keys);
    if (loading) return loading;
    if (failure && now() - failure.at < options.failureBackoffMs) {
      return Promise.reject(new IdentityProviderUnavailableError(failure.reason));
    }
    loading = (async () => {
      const jwksUri = await fetchJwksUri(issuer, options.timeoutMs);
      const remote = remoteKeys(jwksUri, options.timeoutMs);
      lastDownload = now();
      await remote.reload();
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

  return async (header, token) => {
    const remote = await load();
    try {
      return await select(remote, header, token);
    } catch (error) {
      if (codeOf(error) !== NO_MATCHING_KEY || now() - lastDownload < options.refetchCooldownMs) throw error;
      lastDownload = now();
      await remote.reload();
      return select(remote, header, token);
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
