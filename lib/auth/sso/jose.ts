type Jose = typeof import('jose');

let loaded: Promise<Jose> | undefined;

/**
 * JOSE is imported on the first bearer token, not with the relay: a configuration without
 * SSO never parses it on its cold start, and one with SSO loads it while
 * the key set downloads.
 */
export function loadJose(): Promise<Jose> {
  loaded ??= import('jose');
  return loaded;
}
