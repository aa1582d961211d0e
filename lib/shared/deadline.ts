import { ReasonedError } from './errors.js';

/** A dependency did not answer within the time this invocation could give it. */
export class DeadlineExceededError extends ReasonedError<`${string}_deadline`> {}

/**
 * Runs `work` for at most `ms`. The signal is aborted at the deadline so that clients that
 * honour it (the AWS SDK's `abortSignal`) close their sockets; the race makes sure the
 * caller goes on even when a client does not.
 */
export function withDeadline<T>(what: string, ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new DeadlineExceededError(`${what} did not answer within ${Math.round(ms)} ms`, `${what}_deadline`);
      controller.abort(error);
      reject(error);
    }, Math.max(0, ms));
  });
  return Promise.race([work(controller.signal), expired]).finally(() => clearTimeout(timer));
}

/**
 * A value that is already there as it is; a promise waited for at most `ms` (withDeadline).
 * What needs no waiting (a cached configuration, Basic credentials) then costs no timer,
 * AbortController and race.
 */
export function withDeadlineIfPending<T>(what: string, ms: number, value: T | Promise<T>): T | Promise<T> {
  return value instanceof Promise ? withDeadline(what, ms, () => value) : value;
}

/** Time for one step: at most `capMs`, and never past what the invocation has left minus `reserveMs`. */
export function budget(remainingTimeMs: () => number, capMs: number, reserveMs: number): number {
  return Math.max(0, Math.min(capMs, remainingTimeMs() - reserveMs));
}
