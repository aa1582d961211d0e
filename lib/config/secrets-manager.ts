import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigUnavailableError } from './errors.js';
import type { SecretReader } from './source.js';

export function createSecretsManagerClient(): SecretsManagerClient {
  // Bounded so that a Secrets Manager hiccup answers 503 well inside the Lambda timeout.
  return new SecretsManagerClient({
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 4_000 },
  });
}

export function secretsManagerReader(client: SecretsManagerClient): SecretReader {
  return {
    async getSecretString(secretId, versionStage) {
      let output;
      try {
        output = await client.send(
          new GetSecretValueCommand({ SecretId: secretId, ...(versionStage ? { VersionStage: versionStage } : {}) }),
        );
      } catch (error) {
        const name = error instanceof Error ? error.name : 'UnknownError';
        throw new ConfigUnavailableError(`Cannot read the configuration secret (${name}).`, name);
      }
      if (output.SecretString === undefined) {
        throw new ConfigUnavailableError('The configuration secret has no string value.', 'no_secret_string');
      }
      return { value: output.SecretString, ...(output.CreatedDate ? { createdDate: output.CreatedDate } : {}) };
    },
  };
}
