/** How long a 429 asks us to wait, in ms; undefined when it does not say (or says nonsense). */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+(?:\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with a little jitter so that parallel rotations do not retry in step. */
export function backoffMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  return Math.round(baseMs * 2 ** (attempt - 1) * (1 + random() / 2));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
