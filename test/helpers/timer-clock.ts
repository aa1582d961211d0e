import { vi } from 'vitest';

/**
 * Starts `work` on vitest's fake timer clock, moves that clock `ms` forward and returns what
 * `work` settled to; fails at once if it is still pending. Deadlines (lib/shared/deadline.ts)
 * run on setTimeout, so this shows a hung dependency is given up on within `ms` without
 * waiting for it, and without depending on how busy the machine is.
 */
export async function settledWithin<T>(ms: number, work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    work().then(
      (value) => (outcome = { ok: true, value }),
      (error: unknown) => (outcome = { ok: false, error }),
    );
    await vi.advanceTimersByTimeAsync(ms);
    if (!outcome) throw new Error(`still pending after ${ms} ms on the timer clock`);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  } finally {
    vi.useRealTimers();
  }
}
