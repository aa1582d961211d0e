import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import type { AwsCallLimits } from '../aws/limits.js';
import { errorName } from '../shared/errors.js';
import { RotationError } from './errors.js';
import type { RotationStore } from './store.js';

/** A rotation has minutes, so Secrets Manager gets more attempts and time than on the delivery path. */
export const ROTATION_SECRETS_MANAGER_LIMITS: AwsCallLimits = { connectionTimeoutMs: 3_000, requestTimeoutMs: 5_000, maxAttempts: 3 };

/** SDK errors reduced to the operation and the error's type: their messages are not ours to forward. */
async function call<T>(operation: string, secretLabel: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    const name = errorName(error);
    throw new RotationError(`Secrets Manager ${operation} on ${secretLabel} failed (${name}).`, 'secrets_manager_error', { cause: error });
  }
}

export function secretsManagerRotationStore(client: SecretsManagerClient): RotationStore {
  return {
    async describe(secretId) {
      const out = await call('DescribeSecret', 'the rotated secret', () => client.send(new DescribeSecretCommand({ SecretId: secretId })));
      return { rotationEnabled: out.RotationEnabled === true, stagesByVersion: out.VersionIdsToStages ?? {} };
    },
    async readStage(secretId, stage) {
      const out = await call(`GetSecretValue (${stage})`, `"${secretId}"`, () =>
        client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage })),
      );
      if (out.SecretString === undefined) {
        throw new RotationError(`The ${stage} version of "${secretId}" has no string value.`, 'no_secret_string');
      }
      return out.SecretString;
    },
    async readVersion(secretId, versionId, stage) {
      try {
        const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionId: versionId, VersionStage: stage }));
        return out.SecretString;
      } catch (error) {
        // How Secrets Manager says that the version exists but holds no value yet.
        if (errorName(error) === 'ResourceNotFoundException') return undefined;
        throw new RotationError(`Secrets Manager GetSecretValue (${stage}) failed (${errorName(error)}).`, 'secrets_manager_error', {
          cause: error,
        });
      }
    },
    async putPending(secretId, versionId, value) {
      await call('PutSecretValue (AWSPENDING)', 'the rotated secret', () =>
        client.send(
          new PutSecretValueCommand({
            SecretId: secretId,
            ClientRequestToken: versionId,
            SecretString: value,
            VersionStages: ['AWSPENDING'],
          }),
        ),
      );
    },
    async moveStage(secretId, stage, change) {
      await call(`UpdateSecretVersionStage (${stage})`, 'the rotated secret', () =>
        client.send(
          new UpdateSecretVersionStageCommand({
            SecretId: secretId,
            VersionStage: stage,
            ...(change.moveTo ? { MoveToVersionId: change.moveTo } : {}),
            ...(change.removeFrom ? { RemoveFromVersionId: change.removeFrom } : {}),
          }),
        ),
      );
    },
  };
}
