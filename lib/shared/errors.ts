/**
 * Marks our errors across bundles: a lazily imported module (`lazy-*.mjs`) is bundled with its
 * own copy of ReasonedError, so `instanceof` fails for its errors in the code that called it.
 */
const REASONED: unique symbol = Symbol.for('cost-alert-relay.reasoned-error');

/**
 * The base of every error this project raises on purpose. `reason` is a short code for logs,
 * metrics and tests; the message is for people. Neither ever holds a secret value, a URL or
 * message text, so either may be logged as it is.
 */
export class ReasonedError<Reason extends string = string> extends Error {
  constructor(
    message: string,
    readonly reason: Reason,
    options?: { cause?: unknown },
  ) {
    // The cause stays for a debugger and for instanceof checks; logs still name only its class.
    super(message, options);
    // The subclass's own name, so logs say `ConfigInvalidError` rather than `Error`.
    this.name = new.target.name;
    (this as { [REASONED]?: true })[REASONED] = true;
  }
}

/** One of our errors, whichever bundle's copy of the class raised it. */
export const isReasonedError = (error: unknown): error is ReasonedError =>
  error instanceof ReasonedError || (error instanceof Error && (error as { [REASONED]?: unknown })[REASONED] === true);

/**
 * What may be logged about any thrown value: its class name. Messages of foreign errors
 * (SDK, network) can carry URLs or request details, so they are never forwarded.
 */
export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'UnknownError';
}

/** The `reason` of one of our errors, else the class name of a foreign one. */
export function errorReason(error: unknown): string {
  return isReasonedError(error) ? error.reason : errorName(error);
}
