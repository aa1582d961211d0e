const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/**
 * Credentials, tokens and alerts travel to the URLs we accept: https everywhere, plain http
 * only towards this machine (local use and tests). Returns the parsed URL when allowed.
 */
export function parseHttpsOrLoopbackUrl(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol === 'https:') return url;
  return url.protocol === 'http:' && LOOPBACK.test(url.hostname) ? url : undefined;
}

export const isHttpsOrLoopbackUrl = (value: string): boolean => parseHttpsOrLoopbackUrl(value) !== undefined;
