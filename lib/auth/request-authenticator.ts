import type { LoadedConfig } from '../config/load.js';
import type { RelayConfigStore } from '../config/store.js';
import type { Logger } from '../log/logger.js';
import type { Authenticator, AuthOutcome } from './authenticate.js';
import { graceEndsAt, previousCredentials } from './previous-credentials.js';

/** A credential change is picked up at once, but a flood of bad requests re-reads at most this often. */
export const AUTH_FAILURE_REFRESH_MS = 30_000;

export interface RequestAuthenticatorOptions {
  /** Checks headers against one version's `auth` block. */
  check: Authenticator;
  store: RelayConfigStore;
  /** How long the previous secret version's credentials stay accepted; 0: not at all. */
  graceMs: number;
  now: () => number;
}

/** The outcome, and the configuration it was decided with (a refresh on denial may have replaced it). */
export interface AuthDecision {
  outcome: AuthOutcome;
  loaded: LoadedConfig;
}

/** At once when the current credentials are accepted without asking anyone (None, Basic); otherwise a promise. */
export type RequestAuthenticator = (
  headers: Record<string, string>,
  loaded: LoadedConfig,
  log: Logger,
) => AuthDecision | Promise<AuthDecision>;

/**
 * Authentication end to end: the current credentials; then, while the grace lasts, the
 * previous version's; then, because the operator may just have changed the secret, one fresh
 * read of the configuration (at most one per AUTH_FAILURE_REFRESH_MS, whatever the requests).
 * A refusal keeps the current version's reason and challenge, so the answer looks the same.
 */
export function createRequestAuthenticator(options: RequestAuthenticatorOptions): RequestAuthenticator {
  const { check, store, graceMs, now } = options;

  /** `first`: the current credentials' outcome when it is already asked for. */
  async function withGrace(
    headers: Record<string, string>,
    loaded: LoadedConfig,
    log: Logger,
    first?: ReturnType<Authenticator>,
  ): Promise<AuthOutcome> {
    const outcome = await (first ?? check(headers, loaded.config.auth));
    if (outcome.kind !== 'denied') return outcome;
    const endsAt = graceEndsAt(loaded, graceMs);
    if (endsAt === undefined || now() >= endsAt) return outcome;
    const previous = await store.previous(loaded);
    const fallback = previous && previousCredentials(loaded.config.auth, previous.auth);
    if (!fallback) return outcome;
    const old = await check(headers, loaded.config.auth, fallback);
    if (old.kind !== 'accepted') return outcome;
    log.warn('accepted credentials of the previous secret version; update the channel at the cost platform before they stop working', {
      via: old.via,
      graceEndsAt: new Date(endsAt).toISOString(),
    });
    return { ...old, previousCredentials: true };
  }

  const decide = async (
    headers: Record<string, string>,
    loaded: LoadedConfig,
    log: Logger,
    first: ReturnType<Authenticator>,
  ): Promise<AuthDecision> => {
    const outcome = await withGrace(headers, loaded, log, first);
    if (outcome.kind !== 'denied') return { outcome, loaded };
    const refreshed = await store.refreshIfOlderThan(AUTH_FAILURE_REFRESH_MS);
    if (!refreshed) return { outcome, loaded };
    return { outcome: await withGrace(headers, refreshed, log), loaded: refreshed };
  };

  return (headers, loaded, log) => {
    // The common case decides at once: accepted with the current credentials, nothing to wait for.
    const first = check(headers, loaded.config.auth);
    if (!(first instanceof Promise) && first.kind === 'accepted') return { outcome: first, loaded };
    return decide(headers, loaded, log, first);
  };
}
