/** A rotation step failed for a reason we can name; the message never holds a secret value. */
export class RotationError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'RotationError';
  }
}
