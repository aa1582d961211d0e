export const DEFAULT_COST_API_BASE_URL = 'https://api.umbrellacost.io';

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/** Credentials travel to this URL: https only, plain http only to this machine (tests, local fakes). */
export function isAllowedBaseUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.search || url.hash || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK.test(url.hostname);
}

export function joinUrl(baseUrl: string, path: string): URL {
  // Keep any path prefix of the base URL (a proxy in front of the platform), unlike new URL(path, base).
  return new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);
}
