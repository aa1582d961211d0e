import { randomUUID } from 'node:crypto';
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  RotateSecretCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { awsEnvironment, createSecret, motoUrl, putSecret, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';

const url = motoUrl();
const ACCOUNTS_PATH = '/api/v2/user-management/accounts/data-access/payer-accounts';
const COST_CENTERS_PATH = '/api/v2/user-management/cost-centers/management/list';
const STEPS = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const;
type Step = (typeof STEPS)[number];

describe.skipIf(!url)('API-key rotation function (built bundle, Secrets Manager in moto, loopback platform)', () => {
  let platform: FakePlatform;
  let sm: SecretsManagerClient;
  let bundle: RunningBundle;
  let credentialsSecretId: string;

  beforeAll(async () => {
    platform = await startFakePlatform();
    sm = secretsClient(url!);
    credentialsSecretId = await createSecret(sm, { username: platform.username, password: platform.password }, 'cost-api-credentials');
    bundle = await startBundle('api-key-rotation', {
      ...awsEnvironment(url!),
      COST_API_BASE_URL: platform.url,
      COST_API_CREDENTIALS_SECRET_ID: credentialsSecretId,
      COST_API_TIMEOUT_MS: '1500',
    });
  });
  afterAll(async () => {
    await bundle?.stop();
    await platform?.close();
  });
  beforeEach(() => platform.reset());

  /**
   * What Secrets Manager does before it invokes the function: enable rotation and add an empty
   * version labelled AWSPENDING. moto does exactly that in RotateSecret, then fails to find the
   * Lambda function to invoke (it runs none), which is why the error is expected here.
   */
  async function beginRotation(secretId: string): Promise<string> {
    const token = randomUUID();
    await sm
      .send(
        new RotateSecretCommand({
          SecretId: secretId,
          ClientRequestToken: token,
          RotationLambdaARN: 'arn:aws:lambda:us-east-1:123456789012:function:api-key-rotation',
          RotationRules: { AutomaticallyAfterDays: 1 },
        }),
      )
      .catch((error: Error) => expect(error.name).toBe('ResourceNotFoundException'));
    const described = await sm.send(new DescribeSecretCommand({ SecretId: secretId }));
    expect(described.RotationEnabled).toBe(true);
    expect(described.VersionIdsToStages?.[token]).toEqual(['AWSPENDING']);
    return token;
  }

  const step = (name: Step, secretId: string, token: string) =>
    bundle.invoke<{ step: string; outcome: string }>({ Step: name, SecretId: secretId, ClientRequestToken: token });

  async function rotate(secretId: string): Promise<string> {
    const token = await beginRotation(secretId);
    for (const name of STEPS) await step(name, secretId, token);
    return token;
  }

  async function stagesOf(secretId: string): Promise<Record<string, string[]>> {
    return (await sm.send(new DescribeSecretCommand({ SecretId: secretId }))).VersionIdsToStages ?? {};
  }

  async function valueAt(secretId: string, stage: string): Promise<{ versionId: string; value: Record<string, unknown> }> {
    const out = await sm.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
    return { versionId: out.VersionId ?? '', value: JSON.parse(out.SecretString ?? '') as Record<string, unknown> };
  }

  /** Whether the pending version got a value: a failed step must not leave a half-written secret. */
  async function pendingValue(secretId: string, token: string): Promise<string | undefined> {
    try {
      return (await sm.send(new GetSecretValueCommand({ SecretId: secretId, VersionId: token }))).SecretString;
    } catch (error) {
      expect((error as Error).name).toBe('ResourceNotFoundException');
      return undefined;
    }
  }

  async function failedStep(name: Step, secretId: string, token: string): Promise<Error> {
    try {
      await step(name, secretId, token);
    } catch (error) {
      return error as Error;
    }
    throw new Error(`${name} was expected to fail`);
  }

  const errorRecords = (since: number) =>
    bundle
      .logRecords()
      .slice(since)
      .filter((r) => r['level'] === 'error');

  function expectNothingSecretIn(text: string): void {
    expect(text).not.toContain(platform.password);
    expect(text).not.toContain(platform.userKey);
    for (const token of platform.issuedTokens) expect(text).not.toContain(token);
  }

  const expiryOf = (token: string) => {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number };
    return new Date(payload.exp * 1000).toISOString().replace('.000Z', 'Z');
  };

  it('rotates a secret selected by account name: AWSCURRENT gets the new key and token, AWSPREVIOUS the old value', async () => {
    const initial = { account: 'Production payer', costCenter: '' };
    const secretId = await createSecret(sm, initial, 'api-key');
    const before = await valueAt(secretId, 'AWSCURRENT');
    const token = await beginRotation(secretId);

    const outcomes = [];
    for (const name of STEPS) outcomes.push((await step(name, secretId, token)).outcome);
    expect(outcomes).toEqual(['created', 'nothing_to_set', 'tested', 'finished']);

    const current = await valueAt(secretId, 'AWSCURRENT');
    expect(current.versionId).toBe(token);
    const issued = platform.issuedTokens.at(-1)!;
    expect(current.value).toMatchObject({
      account: 'Production payer',
      costCenter: '',
      apikey: `${platform.userKey}:12345:`,
      authorization: issued,
      accountKey: '12345',
      accountName: 'Production payer',
      costCenterId: '',
      costCenterName: '',
      expiresAt: expiryOf(issued),
    });
    expect(Math.abs(Date.parse(current.value['issuedAt'] as string) - Date.now())).toBeLessThan(60_000);
    expect(current.value['issuedAt']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const previous = await valueAt(secretId, 'AWSPREVIOUS');
    expect(previous).toEqual({ versionId: before.versionId, value: initial });
    // The rotation ends with AWSPENDING on no version, so the next one can start.
    expect(Object.values(await stagesOf(secretId)).flat()).not.toContain('AWSPENDING');

    // testSecret proved the pending key and token against the platform, exactly as stored.
    const test = platform.requests.filter((r) => r.path === ACCOUNTS_PATH).at(-1);
    expect(test?.headers['apikey']).toBe(`${platform.userKey}:12345:`);
    expect(test?.headers['authorization']).toBe(issued);
    expect(test?.status).toBe(200);

    // A retried finishSecret changes nothing.
    expect((await step('finishSecret', secretId, token)).outcome).toBe('already_current');
    expect((await valueAt(secretId, 'AWSCURRENT')).versionId).toBe(token);

    // The next rotation keeps the selection and moves the first result to AWSPREVIOUS.
    const second = await rotate(secretId);
    const next = await valueAt(secretId, 'AWSCURRENT');
    expect(next.versionId).toBe(second);
    expect(next.value['account']).toBe('Production payer');
    expect(next.value['authorization']).toBe(platform.issuedTokens.at(-1));
    expect(next.value['authorization']).not.toBe(issued);
    expect((await valueAt(secretId, 'AWSPREVIOUS')).value).toEqual(current.value);
  });

  it('selects by account key with a cost center by name, through a 429 from the platform', async () => {
    platform.configure({ rateLimitEvery: 2, accountsEnvelope: 'accounts', costCentersEnvelope: 'costCenters' });
    const secretId = await createSecret(sm, { account: '67890', costCenter: 'QA', note: 'kept as written' }, 'api-key');
    await rotate(secretId);
    const { value } = await valueAt(secretId, 'AWSCURRENT');
    expect(value).toMatchObject({
      account: '67890',
      costCenter: 'QA',
      note: 'kept as written',
      apikey: `${platform.userKey}:67890:cc-300`,
      accountKey: '67890',
      accountName: 'Staging payer',
      costCenterId: 'cc-300',
      costCenterName: 'QA',
    });
    const costCenters = platform.requests.filter((r) => r.path === COST_CENTERS_PATH);
    expect(costCenters.map((r) => r.status)).toEqual([429, 200]);
    expect(costCenters.every((r) => r.headers['apikey'] === `${platform.userKey}:67890:`)).toBe(true);
  });

  it('selects by cloud account id with a cost center by id, across paginated lists', async () => {
    platform.configure({ pageSize: 1, accountsEnvelope: 'items', costCentersEnvelope: 'items' });
    const secretId = await createSecret(sm, { account: '123456789012', costCenter: 'cc-200' }, 'api-key');
    await rotate(secretId);
    const { value } = await valueAt(secretId, 'AWSCURRENT');
    expect(value).toMatchObject({ account: '123456789012', costCenter: 'cc-200', apikey: `${platform.userKey}:12345:cc-200` });
    expect(value['costCenterName']).toBe('Web shop');
    expect(platform.requests.some((r) => r.path === ACCOUNTS_PATH && r.query['token'])).toBe(true);
  });

  it('does nothing on a repeated createSecret with the same token', async () => {
    const secretId = await createSecret(sm, { account: 'Staging payer' }, 'api-key');
    const token = await beginRotation(secretId);
    expect((await step('createSecret', secretId, token)).outcome).toBe('created');
    const first = await pendingValue(secretId, token);
    expect((await step('createSecret', secretId, token)).outcome).toBe('pending_exists');
    expect(await pendingValue(secretId, token)).toBe(first);
    expect(platform.requests.filter((r) => r.path === '/api/v1/authentication/token/generate')).toHaveLength(1);
    for (const name of ['setSecret', 'testSecret', 'finishSecret'] as const) await step(name, secretId, token);
    expect((await valueAt(secretId, 'AWSCURRENT')).value['apikey']).toBe(`${platform.userKey}:67890:`);
  });

  it('leaves AWSCURRENT alone when testSecret fails, and the next rotation succeeds', async () => {
    const secretId = await createSecret(sm, { account: 'Production payer' }, 'api-key');
    await rotate(secretId);
    const good = await valueAt(secretId, 'AWSCURRENT');

    const token = await beginRotation(secretId);
    await step('createSecret', secretId, token);
    await step('setSecret', secretId, token);
    // The platform stops accepting the token it just issued.
    platform.revokeTokens();
    const since = bundle.logRecords().length;
    const error = await failedStep('testSecret', secretId, token);
    expect(error.message).toContain('refused the API key or token (HTTP 401)');
    expect(errorRecords(since)).toEqual([
      expect.objectContaining({ message: 'rotation step failed', step: 'testSecret', reason: 'unauthorized' }),
    ]);

    expect(await valueAt(secretId, 'AWSCURRENT')).toEqual(good);
    expect((await stagesOf(secretId))[token]).toEqual([]);
    // Secrets Manager retrying the failed rotation finds nothing pending to promote.
    expect((await failedStep('finishSecret', secretId, token)).message).toContain('not AWSPENDING');
    expect(await valueAt(secretId, 'AWSCURRENT')).toEqual(good);

    const next = await rotate(secretId);
    const now = await valueAt(secretId, 'AWSCURRENT');
    expect(now.versionId).toBe(next);
    expect(now.value['authorization']).toBe(platform.issuedTokens.at(-1));
    expect((await valueAt(secretId, 'AWSPREVIOUS')).value).toEqual(good.value);
  });

  describe('failures leave AWSCURRENT untouched, with a clear logged reason', () => {
    async function expectFailedCreate(secret: unknown, reason: string, messagePart: string | RegExp): Promise<Error> {
      const secretId = await createSecret(sm, secret, 'api-key');
      const before = await valueAt(secretId, 'AWSCURRENT');
      const token = await beginRotation(secretId);
      const since = bundle.logRecords().length;
      const error = await failedStep('createSecret', secretId, token);
      expect(error.message).toMatch(messagePart);
      const [record, ...others] = errorRecords(since);
      expect(others).toEqual([]);
      expect(record).toMatchObject({ message: 'rotation step failed', step: 'createSecret', secretId, versionId: token, reason });
      expect(String(record?.['detail'])).toMatch(messagePart);
      expect(await valueAt(secretId, 'AWSCURRENT')).toEqual(before);
      expect(await pendingValue(secretId, token)).toBeUndefined();
      expect(Object.values(await stagesOf(secretId)).flat()).not.toContain('AWSPENDING');
      expectNothingSecretIn(bundle.output());
      return error;
    }

    it('a wrong password names the credentials secret, never the password', async () => {
      await putSecret(sm, credentialsSecretId, { username: platform.username, password: 'not-the-password-42' });
      try {
        const error = await expectFailedCreate({ account: 'Production payer' }, 'login_failed', /refused the username and password/);
        expect(error.message).toContain(credentialsSecretId);
        expect(bundle.output()).not.toContain('not-the-password-42');
        expect(platform.requests.map((r) => r.status)).toEqual([401]);
      } finally {
        await putSecret(sm, credentialsSecretId, { username: platform.username, password: platform.password });
      }
    });

    it('an unknown account lists the available accounts by name and key', async () => {
      const error = await expectFailedCreate(
        { account: 'Marketing payer' },
        'account_not_found',
        /No payer account matches "Marketing payer"/,
      );
      expect(error.message).toContain('"Production payer" (accountKey 12345');
      expect(error.message).toContain('"Staging payer" (accountKey 67890');
    });

    it('an unknown cost center lists the cost centers of the account', async () => {
      const error = await expectFailedCreate(
        { account: '12345', costCenter: 'Marketing' },
        'cost_center_not_found',
        /No cost center matches/,
      );
      expect(error.message).toContain('"Web shop" (id cc-200)');
    });

    it('a platform outage fails after bounded retries', async () => {
      platform.setBehaviour('accounts', { kind: 'error', status: 503 });
      await expectFailedCreate({ account: '12345' }, 'platform_unavailable', /HTTP 503 on 3 attempt/);
      expect(platform.requests.filter((r) => r.path === ACCOUNTS_PATH)).toHaveLength(3);
    });

    it('a platform that does not answer fails after the timeout', async () => {
      platform.setBehaviour('token', { kind: 'hang' });
      await expectFailedCreate({ account: '12345' }, 'timeout', /no answer within 1500 ms/);
    });

    it('a secret without a selection names the missing field', async () => {
      await expectFailedCreate({ costCenter: 'QA' }, 'selection_invalid', /account is required/);
      expect(platform.requests).toHaveLength(0);
    });
  });

  it('refuses to act on a secret whose rotation is not enabled, or on a version that is not pending', async () => {
    const secretId = await createSecret(sm, { account: '12345' }, 'api-key');
    const { versionId } = await valueAt(secretId, 'AWSCURRENT');
    const notEnabled = await failedStep('createSecret', secretId, versionId);
    expect(notEnabled.message).toContain('Rotation is not enabled');

    await rotate(secretId);
    const unknown = await failedStep('createSecret', secretId, randomUUID());
    expect(unknown.message).toContain('is not a version of this secret');
    const old = await failedStep('createSecret', secretId, versionId);
    expect(old.message).toContain('not AWSPENDING');
    const current = (await valueAt(secretId, 'AWSCURRENT')).versionId;
    expect((await step('createSecret', secretId, current)).outcome).toBe('already_current');
  });

  it('fails every step with the variable named when its environment is incomplete', async () => {
    const secretId = await createSecret(sm, { account: '12345' }, 'api-key');
    const before = await valueAt(secretId, 'AWSCURRENT');
    const token = await beginRotation(secretId);
    const misconfigured = await startBundle('api-key-rotation', { ...awsEnvironment(url!), COST_API_BASE_URL: 'http://cost.example.com' });
    try {
      const error = await misconfigured.invoke({ Step: 'createSecret', SecretId: secretId, ClientRequestToken: token }).then(
        () => new Error('expected a failure'),
        (e: Error) => e,
      );
      expect(error.message).toContain('COST_API_CREDENTIALS_SECRET_ID is required');
      expect(error.message).toContain('COST_API_BASE_URL must be an https URL');
      expect(misconfigured.logRecords()).toEqual([expect.objectContaining({ level: 'error', reason: 'environment_invalid' })]);
    } finally {
      await misconfigured.stop();
    }
    expect(await valueAt(secretId, 'AWSCURRENT')).toEqual(before);
    expect(await pendingValue(secretId, token)).toBeUndefined();
  });

  it('never writes the password, the user key or a token to its log', () => {
    expect(platform.issuedTokens.length).toBeGreaterThan(5);
    expect(bundle.logRecords().length).toBeGreaterThan(20);
    expectNothingSecretIn(bundle.output());
  });
});
