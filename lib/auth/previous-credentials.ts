import type { LoadedConfig } from '../config/load.js';
import type { AuthConfig } from '../config/schema.js';

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
  if (!loaded.currentSince || graceMs <= 0) return undefined;
  return loaded.currentSince.getTime() + graceMs;
}
