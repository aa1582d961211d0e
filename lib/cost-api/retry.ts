/** Exponential backoff with a little jitter so that parallel rotations do not retry in step. */
export function backoffMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  return Math.round(baseMs * 2 ** (attempt - 1) * (1 + random() / 2));
}
