import type { AwsJsonCall } from '../aws/json-client.js';
import { ReasonedError } from '../shared/errors.js';

/** The triage key secret is too short to sign with. */
export class TriageKeyInvalidError extends ReasonedError {}

export const MIN_TRIAGE_KEY_LENGTH = 32;

/**
 * The key that signs triage links, read from Secrets Manager once per container: the stack
 * generates it once and never rotates it. A failed read is tried again on the next call
 * rather than remembered.
 */
export function triageKeyReader(secrets: AwsJsonCall, secretId: string): (signal?: AbortSignal) => Promise<string> {
  let key: Promise<string> | undefined;
  return (signal) => {
    key ??= secrets('GetSecretValue', { SecretId: secretId }, signal).then((output) => {
      const value = output['SecretString'];
      if (typeof value !== 'string' || value.length < MIN_TRIAGE_KEY_LENGTH) {
        throw new TriageKeyInvalidError(`The triage key secret is shorter than ${MIN_TRIAGE_KEY_LENGTH} characters.`, 'triage_key_invalid');
      }
      return value;
    });
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
}
