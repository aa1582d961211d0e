import { parseHttpsOrLoopbackUrl } from '../transport/allowed-url.js';

export const DEFAULT_COST_API_BASE_URL = 'https://api.umbrellacost.io';

/** Credentials travel to this URL: https only (plain http only to this machine), and nothing that a path join would mangle. */
export function isAllowedBaseUrl(value: string): boolean {
  const url = parseHttpsOrLoopbackUrl(value);
  return url !== undefined && !url.search && !url.hash && !url.username && !url.password;
}

export function joinUrl(baseUrl: string, path: string): URL {
  // Keep any path prefix of the base URL (a proxy in front of the platform), unlike new URL(path, base).
  return new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);
}
