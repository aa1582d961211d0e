import { randomUUID } from 'node:crypto';
import { CreateSecretCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { inject } from 'vitest';

/** Environment that points the AWS SDK at the emulator; moto accepts any credentials. */
export function awsEnvironment(motoUrl: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: motoUrl,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
  };
}

export function motoUrl(): string | undefined {
  return inject('motoUrl');
}

export function secretsClient(url: string): SecretsManagerClient {
  return new SecretsManagerClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
}

export async function createSecret(client: SecretsManagerClient, value: unknown, prefix = 'test'): Promise<string> {
  const name = `${prefix}-${randomUUID()}`;
  await client.send(new CreateSecretCommand({ Name: name, SecretString: typeof value === 'string' ? value : JSON.stringify(value) }));
  return name;
}

export async function putSecret(client: SecretsManagerClient, name: string, value: unknown): Promise<void> {
  await client.send(new PutSecretValueCommand({ SecretId: name, SecretString: typeof value === 'string' ? value : JSON.stringify(value) }));
}
