import { sleep as realSleep, type Sleep } from '../shared/sleep.js';

/**
 * Keeps posts to one webhook at least the service's interval apart within this container,
 * as each chat service documents its rate (Slack about one message per second per webhook).
 */
export interface Pacer {
  /** Resolves when a post to `key` may be sent, and books that slot; the next one waits `intervalMs` more. */
  wait(key: string, intervalMs: number): Promise<void>;
  /** No post to `key` for `ms`, as a Retry-After demands. */
  holdFor(key: string, ms: number): void;
  /** Time until the next free slot for `key`. */
  delayFor(key: string): number;
}

export function createPacer(now: () => number = Date.now, sleep: Sleep = realSleep): Pacer {
  const nextSlot = new Map<string, number>();
  const delayFor = (key: string) => Math.max(0, (nextSlot.get(key) ?? 0) - now());
  return {
    delayFor,
    async wait(key, intervalMs) {
      const delay = delayFor(key);
      nextSlot.set(key, now() + delay + intervalMs);
      if (delay > 0) await sleep(delay);
    },
    holdFor(key, ms) {
      nextSlot.set(key, Math.max(nextSlot.get(key) ?? 0, now() + ms));
    },
  };
}
