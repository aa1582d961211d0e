import { GetSecretValueCommand, type GetSecretValueCommandOutput, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { errorName } from '../shared/errors.js';
import { ConfigUnavailableError } from './errors.js';
import type { SecretReader } from './source.js';

export function secretsManagerReader(client: SecretsManagerClient): SecretReader {
  return {
    async getSecretString(secretId, versionStage) {
      let output: GetSecretValueCommandOutput;
      try {
        output = await client.send(
          new GetSecretValueCommand({ SecretId: secretId, ...(versionStage ? { VersionStage: versionStage } : {}) }),
        );
      } catch (error) {
        const name = errorName(error);
        throw new ConfigUnavailableError(`Cannot read the configuration secret (${name}).`, name);
      }
      if (output.SecretString === undefined) {
        throw new ConfigUnavailableError('The configuration secret has no string value.', 'no_secret_string');
      }
      return { value: output.SecretString, ...(output.CreatedDate ? { createdDate: output.CreatedDate } : {}) };
    },
  };
}
