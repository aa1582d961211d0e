import type { AwsJsonCall } from '../aws/json-client.js';
import { errorName } from '../shared/errors.js';
import { ConfigUnavailableError } from './errors.js';
import type { SecretReader } from './source.js';

/** Reads the configuration secret with GetSecretValue; failures are named by AWS's error code, never its message. */
export function secretsManagerReader(secretsManager: AwsJsonCall): SecretReader {
  return {
    async getSecretString(secretId, versionStage) {
      let output: Record<string, unknown>;
      try {
        output = await secretsManager('GetSecretValue', { SecretId: secretId, ...(versionStage ? { VersionStage: versionStage } : {}) });
      } catch (error) {
        const name = errorName(error);
        throw new ConfigUnavailableError(`Cannot read the configuration secret (${name}).`, name, { cause: error });
      }
      const { SecretString, CreatedDate } = output;
      if (typeof SecretString !== 'string') {
        throw new ConfigUnavailableError('The configuration secret has no string value.', 'no_secret_string');
      }
      // The JSON protocol sends timestamps as epoch seconds.
      return { value: SecretString, ...(typeof CreatedDate === 'number' ? { createdDate: new Date(CreatedDate * 1000) } : {}) };
    },
  };
}
