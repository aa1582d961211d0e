import { sleep as realSleep, type Sleep } from '../shared/sleep.js';

/** At most `requests` platform requests in any `windowMs`. */
export interface Pace {
  requests: number;
  windowMs: number;
}

/**
 * The platform counts requests per key and endpoint over a few minutes, slows down callers
 * above what it calls normal and refuses them further up (reference/cost-api.md). directory-sync
 * keeps to half of the normal rate, counted over all its keys and endpoints together, so that
 * neither its own retries nor the rotation's calls with the same login bring it near the limit.
 */
export const PLATFORM_PACE: Pace = { requests: 20, windowMs: 180_000 };

export interface RequestPacer {
  /** How long a request asked for now would wait for its place. */
  delayMs(): number;
  /** Books the next free place and waits for it; rejects with the signal's reason when it aborts first. */
  take(signal?: AbortSignal): Promise<void>;
}

function abortable(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep(ms);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    void sleep(ms).then(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    });
  });
}

/**
 * A sliding window over this container's requests: burst up to the pace, then one more each
 * time the oldest leaves the window. A container keeps it between runs, so back-to-back runs
 * share one window.
 */
export function windowPacer(pace: Pace, now: () => number = Date.now, sleep: Sleep = realSleep): RequestPacer {
  // Start times, ascending: booked ones may lie ahead, and become the actual time once reached.
  const booked: Array<{ at: number }> = [];
  const nextPlace = (): number => {
    const at = now();
    while (booked.length > 0 && (booked[0] as { at: number }).at <= at - pace.windowMs) booked.shift();
    const last = booked.at(-1)?.at ?? at;
    const bound = booked.length < pace.requests ? at : (booked[booked.length - pace.requests] as { at: number }).at + pace.windowMs;
    return Math.max(at, last, bound);
  };
  return {
    delayMs: () => nextPlace() - now(),
    async take(signal) {
      if (signal?.aborted) throw signal.reason;
      const place = { at: nextPlace() };
      booked.push(place);
      const delay = place.at - now();
      if (delay > 0) await abortable(sleep, delay, signal);
      // A request that set off late counts from when it did.
      place.at = Math.max(place.at, now());
    },
  };
}
