import type { LoadedConfig } from '../config/load.js';
import type { AuthConfig, BasicCredentials, CustomHeader } from '../config/schema.js';

/** Old values the previous secret version may still vouch for, one per requirement that both versions have. */
export interface PreviousCredentials {
  basic?: BasicCredentials;
  headers: CustomHeader[];
}

/**
 * Grace covers changed values only: the previous Basic pair while both versions use Basic,
 * and the previous value of each custom header that both versions require. A requirement
 * the current version adds, or a change of method, takes effect at once; SSO tokens are
 * always checked against the current settings. Undefined when nothing qualifies.
 */
export function previousCredentials(current: AuthConfig, previous: AuthConfig): PreviousCredentials | undefined {
  const basic = current.method === 'basic' && previous.method === 'basic' ? previous.basic : undefined;
  const required = new Set(current.headers.map((h) => h.key.toLowerCase()));
  const headers = previous.headers.filter((h) => required.has(h.key.toLowerCase()));
  if (!basic && headers.length === 0) return undefined;
  return { ...(basic ? { basic } : {}), headers };
}

/** When the grace for the previous version's credentials ends; undefined when there is none. */
export function graceEndsAt(loaded: LoadedConfig, graceMs: number): number | undefined {
  if (!loaded.currentSince || graceMs <= 0) return undefined;
  return loaded.currentSince.getTime() + graceMs;
}
