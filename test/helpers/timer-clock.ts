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

/**
 * A clock for work that waits in several places side by side (a batch's pace keys, say). Its
 * `sleep` resolves when the clock reaches the sleeper's end; `run` moves the clock to the next
 * sleeper's end only once everything else has settled, so waits that overlap take as long as
 * the longest of them, as in real time, and no test waits for real.
 */
export function virtualClock(start = Date.parse('2026-11-22T12:00:00Z')) {
  let t = start;
  const sleepers: Array<{ at: number; wake: () => void }> = [];
  const slept: number[] = [];
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => t,
    /** Moves the clock between runs, as time passes between two invocations. */
    advance(ms: number) {
      t += ms;
    },
    /** Every sleep asked for, in the order asked. */
    slept,
    sleep: (ms: number) =>
      new Promise<void>((wake) => {
        slept.push(ms);
        sleepers.push({ at: t + Math.max(0, ms), wake });
      }),
    /** Runs `work` to its end on this clock; fails if it waits for something other than the clock. */
    async run<T>(work: () => Promise<T>): Promise<T> {
      let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
      work().then(
        (value) => (outcome = { ok: true, value }),
        (error: unknown) => (outcome = { ok: false, error }),
      );
      for (;;) {
        await settle();
        // A module loaded with import() settles on the machine's time, not this clock's: a few
        // real turns before the work counts as waiting for something that never comes.
        for (let turn = 0; !outcome && sleepers.length === 0 && turn < 100; turn++) await new Promise((r) => setTimeout(r, 1));
        if (outcome) break;
        sleepers.sort((a, b) => a.at - b.at);
        const next = sleepers.shift();
        if (!next) throw new Error('the work waits for something other than the clock');
        t = Math.max(t, next.at);
        next.wake();
      }
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    },
  };
}
