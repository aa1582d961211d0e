/**
 * How long an HTTP `Retry-After` header asks to wait, in ms (RFC 9110 section 10.2.3: delay
 * seconds or an HTTP date). Undefined when absent, blank or unreadable, so that the caller
 * applies its own default wait rather than retrying at once.
 */
export function parseRetryAfterMs(header: string | null | undefined, now: number = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
