/**
 * Keeps posts to one webhook at least `intervalMs` apart within this container, which is
 * Slack's documented rate (about one message per second per webhook).
 */
export interface Pacer {
  /** Resolves when a post to `key` may be sent, and books that slot. */
  wait(key: string): Promise<void>;
  /** No post to `key` for `ms`, as a Retry-After demands. */
  holdFor(key: string, ms: number): void;
  /** Time until the next free slot for `key`. */
  delayFor(key: string): number;
}

export function createPacer(
  intervalMs: number,
  now: () => number = Date.now,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Pacer {
  const nextSlot = new Map<string, number>();
  const delayFor = (key: string) => Math.max(0, (nextSlot.get(key) ?? 0) - now());
  return {
    delayFor,
    async wait(key) {
      const delay = delayFor(key);
      nextSlot.set(key, now() + delay + intervalMs);
      if (delay > 0) await sleep(delay);
    },
    holdFor(key, ms) {
      nextSlot.set(key, Math.max(nextSlot.get(key) ?? 0, now() + ms));
    },
  };
}
