import { ReasonedError } from '../../shared/errors.js';

/**
 * The identity provider could not be asked (discovery or key download failed or timed out).
 * Not the sender's fault: the relay answers 503 so that the delivery may be tried again.
 * `reason` is a short code for the log, never a URL or a response body.
 */
export class IdentityProviderUnavailableError extends ReasonedError {
  constructor(reason: string) {
    super(`The identity provider is unavailable (${reason}).`, reason);
  }
}
