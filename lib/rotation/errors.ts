import { ReasonedError } from '../shared/errors.js';

/** A rotation step failed for a reason we can name; the message never holds a secret value. */
export class RotationError extends ReasonedError {}
