import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSecretsManagerClient } from '../../lib/aws/clients.js';
import { createApiKeyRotationFromEnvironment } from '../../lib/rotation/from-environment.js';
import { secretsManagerRotationStore } from '../../lib/rotation/secrets-manager.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';
import { emfRecords, memoryMetrics } from '../helpers/memory-metrics.js';

let aws: FakeAws;
const saved = { ...process.env };
beforeAll(async () => {
  aws = await startFakeAws();
  Object.assign(process.env, { AWS_ENDPOINT_URL: aws.url, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' });
});
afterAll(async () => {
  process.env = saved;
  await aws.close();
});

describe('the rotation function wiring', () => {
  it('a missing or invalid setting fails every step with the variable named', async () => {
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const rotate = createApiKeyRotationFromEnvironment({ COST_API_TIMEOUT_MS: 'soon' }, { logger: log.logger, metrics });
    const failure = rotate({ Step: 'createSecret', SecretId: 's', ClientRequestToken: 't' });
    await expect(failure).rejects.toMatchObject({ reason: 'environment_invalid' });
    await expect(failure).rejects.toThrow(/COST_API_CREDENTIALS_SECRET_ID is required; COST_API_TIMEOUT_MS/);
    expect(metrics.count('Rotations', { outcome: 'failed', step: 'environment' })).toBe(1);
  });

  it('a base URL that is plain http to a remote host is refused', async () => {
    const metrics = memoryMetrics();
    const rotate = createApiKeyRotationFromEnvironment(
      { COST_API_CREDENTIALS_SECRET_ID: 'c', COST_API_BASE_URL: 'http://api.example.com' },
      { logger: capturedLogger().logger, metrics },
    );
    await expect(rotate({})).rejects.toThrow(/COST_API_BASE_URL must be an https URL/);
    expect(metrics.count('Rotations', { outcome: 'failed', step: 'environment' })).toBe(1);
  });

  it('with a good environment, a malformed event is refused by the steps themselves', async () => {
    // The default metric sink, as the bundle has it: its line is read here rather than left in the test output.
    const written: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const rotate = createApiKeyRotationFromEnvironment({ COST_API_CREDENTIALS_SECRET_ID: 'c' }, { logger: capturedLogger().logger });
      await expect(rotate({ Step: 'createSecret' })).rejects.toMatchObject({ reason: 'invalid_event' });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      stdout.mockRestore();
    }
    expect(emfRecords(written.join('').split('\n'))).toEqual([
      expect.objectContaining({ service: 'api-key-rotation', outcome: 'failed', step: 'invalid_event', Rotations: 1 }),
    ]);
  });
});

describe('the Secrets Manager rotation store', () => {
  const store = () =>
    secretsManagerRotationStore(createSecretsManagerClient({ connectionTimeoutMs: 500, requestTimeoutMs: 500, maxAttempts: 1 }));

  it('speaks the rotation protocol: describe, read, write AWSPENDING, move labels', async () => {
    aws.answer('secretsmanager.DescribeSecret', { RotationEnabled: true, VersionIdsToStages: { v0: ['AWSCURRENT'], v1: ['AWSPENDING'] } });
    aws.answer('secretsmanager.GetSecretValue', (call) =>
      call.body['VersionId'] === 'v1' ? { error: 'ResourceNotFoundException' } : { SecretString: '{"account":"a"}' },
    );
    aws.answer('secretsmanager.PutSecretValue', {});
    aws.answer('secretsmanager.UpdateSecretVersionStage', {});
    const s = store();
    expect(await s.describe('api-key')).toEqual({ rotationEnabled: true, stagesByVersion: { v0: ['AWSCURRENT'], v1: ['AWSPENDING'] } });
    expect(await s.readStage('api-key', 'AWSCURRENT')).toBe('{"account":"a"}');
    expect(await s.readVersion('api-key', 'v1', 'AWSPENDING')).toBeUndefined();
    await s.putPending('api-key', 'v1', '{"apikey":"k"}');
    await s.moveStage('api-key', 'AWSCURRENT', { moveTo: 'v1', removeFrom: 'v0' });
    const put = aws.calls.find((c) => c.target === 'secretsmanager.PutSecretValue');
    expect(put?.body).toEqual({
      SecretId: 'api-key',
      ClientRequestToken: 'v1',
      SecretString: '{"apikey":"k"}',
      VersionStages: ['AWSPENDING'],
    });
    const move = aws.calls.find((c) => c.target === 'secretsmanager.UpdateSecretVersionStage');
    expect(move?.body).toEqual({ SecretId: 'api-key', VersionStage: 'AWSCURRENT', MoveToVersionId: 'v1', RemoveFromVersionId: 'v0' });
  });

  it('names failures by operation and AWS error type, never by value', async () => {
    aws.answer('secretsmanager.GetSecretValue', { error: 'AccessDeniedException' });
    await expect(store().readStage('api-key', 'AWSCURRENT')).rejects.toMatchObject({
      reason: 'secrets_manager_error',
      message: expect.stringContaining('AccessDeniedException'),
    });
    await expect(store().readVersion('api-key', 'v1', 'AWSPENDING')).rejects.toMatchObject({ reason: 'secrets_manager_error' });
    aws.answer('secretsmanager.GetSecretValue', { SecretBinary: 'AAAA' });
    await expect(store().readStage('api-key', 'AWSCURRENT')).rejects.toMatchObject({ reason: 'no_secret_string' });
  });
});
