import { ReasonedError } from './errors.js';

/** A dependency did not answer within the time this invocation could give it. */
export class DeadlineExceededError extends ReasonedError<`${string}_deadline`> {}

/**
 * Runs `work` for at most `ms`. The signal is aborted at the deadline so that clients that
 * honour it close their sockets; the race makes sure the caller goes on even when a client
 * does not.
 */
export function withDeadline<T>(what: string, ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        const error = new DeadlineExceededError(`${what} did not answer within ${Math.round(ms)} ms`, `${what}_deadline`);
        controller.abort(error);
        reject(error);
      },
      Math.max(0, ms),
    );
  });
  return Promise.race([work(controller.signal), expired]).finally(() => clearTimeout(timer));
}

/** Kept free at the end of every invocation, so that the answer or the batch result still gets out in time. */
export const ANSWER_RESERVE_MS = 500;

/** What the budget reads of Lambda's context object. */
export interface RemainingTime {
  getRemainingTimeInMillis(): number;
}

/**
 * The time of one invocation, handed out step by step: every call to a dependency gets a
 * deadline that ends before the invocation does, less the answer's reserve and whatever the
 * caller says must still fit after the step (`keepMs`).
 */
export interface InvocationBudget {
  /** What the invocation has left, reserve included. */
  remainingMs(): number;
  /** Time for one step: at most `capMs`, never into the reserve or the `keepMs` after it. */
  ms(capMs: number, keepMs?: number): number;
  /** Whether `ms` more still fits before the reserve. */
  fits(ms: number): boolean;
  /** Runs `work` within its step's time; `DeadlineExceededError` (`<name>_deadline`) when that runs out. */
  step<T>(name: string, capMs: number, work: (signal: AbortSignal) => Promise<T>, keepMs?: number): Promise<T>;
  /**
   * A value that is already there, as it is; a promise waited for within its step's time. What
   * needs no waiting (a cached configuration, Basic credentials) then costs no timer and race.
   */
  stepIfPending<T>(name: string, capMs: number, value: T | Promise<T>): T | Promise<T>;
}

/** Made once per invocation from Lambda's context (or anything that tells the time left). */
export function invocationBudget(context: RemainingTime, reserveMs: number = ANSWER_RESERVE_MS): InvocationBudget {
  const remainingMs = () => context.getRemainingTimeInMillis();
  const ms = (capMs: number, keepMs = 0) => Math.max(0, Math.min(capMs, remainingMs() - reserveMs - keepMs));
  return {
    remainingMs,
    ms,
    fits: (needed) => needed <= remainingMs() - reserveMs,
    step: (name, capMs, work, keepMs) => withDeadline(name, ms(capMs, keepMs), work),
    stepIfPending: (name, capMs, value) => (value instanceof Promise ? withDeadline(name, ms(capMs), () => value) : value),
  };
}
