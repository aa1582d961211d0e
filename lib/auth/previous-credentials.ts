import type { LoadedConfig } from '../config/load.js';
import type { AuthConfig } from '../config/schema.js';
import type { AuthOutcome, Authenticator } from './authenticate.js';

/**
 * What the previous version of the secret may still vouch for: its Basic credentials and
 * its custom header values, nothing else. SSO settings always come from the current version
 * (a previous issuer or client is not a "credential" the platform keeps sending), and a
 * previous version that demanded nothing at all grants nothing, so that adding credentials
 * to an open relay takes effect at once.
 */
export function previousCredentials(current: AuthConfig, previous: AuthConfig): AuthConfig | undefined {
  if (previous.method === 'sso') {
    return current.method === 'sso' && current.sso ? { ...previous, sso: current.sso } : undefined;
  }
  if (previous.method === 'none' && previous.headers.length === 0) return undefined;
  return previous;
}

/** When the grace for the previous version's credentials ends; undefined when there is none. */
export function graceEndsAt(loaded: LoadedConfig, graceMs: number): number | undefined {
  if (!loaded.previous || !loaded.currentSince || graceMs <= 0) return undefined;
  return loaded.currentSince.getTime() + graceMs;
}

/**
 * Checks the current version first; only a request it refuses is checked against the
 * previous version's credentials, and only while the grace lasts. A refusal keeps the
 * current version's reason and challenge, so the answer looks the same either way.
 */
export async function authenticateWithGrace(
  authenticate: Authenticator,
  headers: Record<string, string>,
  loaded: LoadedConfig,
  grace: { graceMs: number; now: number },
): Promise<AuthOutcome> {
  const outcome = await authenticate(headers, loaded.config.auth);
  if (outcome.kind !== 'denied') return outcome;
  const endsAt = graceEndsAt(loaded, grace.graceMs);
  if (endsAt === undefined || grace.now >= endsAt) return outcome;
  const previous = await loaded.previous?.();
  if (!previous) return outcome;
  const fallback = previousCredentials(loaded.config.auth, previous.auth);
  if (!fallback) return outcome;
  const old = await authenticate(headers, fallback);
  return old.kind === 'accepted' ? { ...old, previousCredentials: true } : outcome;
}
