import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { awsCredentials } from '../../lib/aws/credentials.js';
import { awsRegion, RegionMissingError, serviceEndpoint } from '../../lib/aws/endpoint.js';
import { type AwsJsonClientOptions, type AwsJsonService, awsJsonClient, DYNAMODB, SECRETS_MANAGER } from '../../lib/aws/json-client.js';
import { retryDelayMs, retryKind } from '../../lib/aws/retry.js';
import { signRequest, updatedClockOffset } from '../../lib/aws/sign.js';
import { RedirectRefusedError } from '../../lib/transport/node-request.js';
import { type AwsCall, type FakeAws, startFakeAws } from '../helpers/fake-aws.js';

// The calls we sign ourselves must be indistinguishable from the SDK's where it matters: the
// signature, the errors, the retries and deadlines, and where the settings come from.
let aws: FakeAws;
beforeAll(async () => {
  aws = await startFakeAws();
});
afterEach(() => {
  aws.calls.length = 0;
});
afterAll(() => aws.close());

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token-1',
};
const env = () => ({
  AWS_ENDPOINT_URL: aws.url,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  AWS_SESSION_TOKEN: credentials.sessionToken,
});
const limits = { connectionTimeoutMs: 500, requestTimeoutMs: 300, maxAttempts: 2 };
const fixedNow = () => Date.parse('2026-11-23T10:20:30Z');
const client = (service: AwsJsonService, options: Partial<AwsJsonClientOptions> = {}) =>
  awsJsonClient(service, { limits, env: env(), now: fixedNow, sleep: async () => {}, ...options });

/** The headers a captured request signed, as `SignedHeaders=` lists them. */
function signedHeaders(call: AwsCall): Record<string, string> {
  const list = /SignedHeaders=([^,]+)/.exec(call.headers['authorization'] ?? '')?.[1]?.split(';') ?? [];
  return Object.fromEntries(list.map((name) => [name, call.headers[name] ?? '']));
}

/** `20261123T102030Z` as a Date. */
const amzDate = (value: string) => new Date(value.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));

/** Our signer on a captured request: the same method, path, signed headers and body. */
async function resign(call: AwsCall, service: string, region: string) {
  const { 'x-amz-date': date, 'x-amz-security-token': _token, ...headers } = signedHeaders(call);
  const signed = await signRequest(
    { method: call.method, url: new URL(call.path, `http://${call.headers['host']}`), headers, body: call.rawBody },
    { credentials, region, service, signingDate: amzDate(date ?? '') },
  );
  return signed['authorization'];
}

describe('signing', () => {
  // A copy: the SDK marks the credentials object it is given.
  const sdkOptions = () => ({ endpoint: aws.url, region: 'eu-west-1', credentials: { ...credentials }, maxAttempts: 1 });

  it('gives the SDK client’s signature for the SDK client’s own request (Secrets Manager)', async () => {
    aws.answer('secretsmanager.GetSecretValue', { SecretString: '{}' });
    await new SecretsManagerClient(sdkOptions()).send(new GetSecretValueCommand({ SecretId: 'relay-config', VersionStage: 'AWSPREVIOUS' }));
    const [call] = aws.calls;
    expect(call?.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request/,
    );
    expect(await resign(call!, 'secretsmanager', 'eu-west-1')).toBe(call?.headers['authorization']);
  });

  it('gives the SDK client’s signature for the SDK client’s own request (DynamoDB)', async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    await new DynamoDBClient(sdkOptions()).send(
      new PutItemCommand({ TableName: 'seen', Item: { id: { S: 'a/b+c é' } }, ConditionExpression: 'attribute_not_exists(id)' }),
    );
    const [call] = aws.calls;
    expect(await resign(call!, 'dynamodb', 'eu-west-1')).toBe(call?.headers['authorization']);
  });

  it('a wrong key or region gives another signature, so the comparison above can fail', async () => {
    aws.answer('secretsmanager.GetSecretValue', { SecretString: '{}' });
    await new SecretsManagerClient(sdkOptions()).send(new GetSecretValueCommand({ SecretId: 'relay-config' }));
    const [call] = aws.calls;
    expect(await resign(call!, 'secretsmanager', 'eu-west-2')).not.toBe(call?.headers['authorization']);
  });

  it('sends exactly what it signed, with the session token, the date of its clock and the operation', async () => {
    aws.answer('secretsmanager.GetSecretValue', { SecretString: 'x' });
    await client(SECRETS_MANAGER)('GetSecretValue', { SecretId: 'relay-config' });
    const [call] = aws.calls;
    expect(call).toMatchObject({
      method: 'POST',
      path: '/',
      target: 'secretsmanager.GetSecretValue',
      body: { SecretId: 'relay-config' },
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-date': '20261123T102030Z',
        'x-amz-security-token': 'session-token-1',
      },
    });
    const signed = signedHeaders(call!);
    expect(Object.keys(signed)).toEqual(
      expect.arrayContaining(['host', 'content-type', 'x-amz-target', 'x-amz-date', 'x-amz-security-token']),
    );
    // Checked with the SDK's own signer and hash over the request as it arrived.
    const verifier = new SignatureV4({ credentials, region: 'eu-west-1', service: 'secretsmanager', sha256: Sha256 });
    const { 'x-amz-date': _date, 'x-amz-security-token': _token, ...headers } = signed;
    const url = new URL(call!.path, `http://${call!.headers['host']}`);
    const expected = await verifier.sign(
      {
        method: 'POST',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query: {},
        headers,
        body: call!.rawBody,
      },
      { signingDate: new Date(fixedNow()) },
    );
    expect(call?.headers['authorization']).toBe(expected.headers['authorization']);
  });
});

describe('errors', () => {
  it('are named by the AWS error code, from the header or the namespaced __type, and keep the answer’s fields but not its message', async () => {
    aws.answer('secretsmanager.GetSecretValue', { error: 'ResourceNotFoundException' });
    await expect(client(SECRETS_MANAGER)('GetSecretValue', { SecretId: 'x' })).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      status: 400,
    });
    const item = { id: { S: 'abc' }, state: { S: 'delivered' } };
    aws.answer('DynamoDB_20120810.PutItem', {
      error: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
      errorHeader: '',
      fields: { Item: item },
    });
    const failure = await client(DYNAMODB)('PutItem', { TableName: 't' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'ConditionalCheckFailedException', fields: { Item: item } });
    expect(JSON.stringify(failure)).not.toContain('fake');
    aws.answer('secretsmanager.GetSecretValue', { error: 'AccessDeniedException:http://internal/', status: 403 });
    await expect(client(SECRETS_MANAGER)('GetSecretValue', {})).rejects.toMatchObject({ name: 'AccessDeniedException', status: 403 });
  });

  it('an answer that is not JSON is an error, whatever its status', async () => {
    aws.answer('secretsmanager.GetSecretValue', { status: 200, raw: '<html>' });
    await expect(client(SECRETS_MANAGER)('GetSecretValue', {})).rejects.toMatchObject({ name: 'InvalidAnswer' });
    aws.answer('secretsmanager.GetSecretValue', { status: 403, raw: 'Forbidden' });
    await expect(client(SECRETS_MANAGER)('GetSecretValue', {})).rejects.toMatchObject({ name: 'UnknownError', status: 403 });
  });

  it('keep the answer’s Retry-After as sent, for a caller that retries on its own schedule', async () => {
    aws.answer('secretsmanager.GetSecretValue', { status: 429, raw: '{"__type":"ThrottlingException"}', headers: { 'retry-after': '7' } });
    await expect(client(SECRETS_MANAGER, { limits: { ...limits, maxAttempts: 1 } })('GetSecretValue', {})).rejects.toMatchObject({
      name: 'ThrottlingException',
      status: 429,
      retryAfter: '7',
    });
    aws.answer('secretsmanager.GetSecretValue', { error: 'ThrottlingException' });
    const without = await client(SECRETS_MANAGER, { limits: { ...limits, maxAttempts: 1 } })('GetSecretValue', {}).catch((e: unknown) => e);
    expect(without).toMatchObject({ name: 'ThrottlingException', retryAfter: undefined });
  });

  it('a redirect is refused, not followed', async () => {
    aws.answer('secretsmanager.GetSecretValue', { status: 307, raw: '', headers: { location: 'http://127.0.0.1:9/steal' } });
    await expect(client(SECRETS_MANAGER)('GetSecretValue', {})).rejects.toBeInstanceOf(RedirectRefusedError);
    expect(aws.calls).toHaveLength(1);
  });
});

describe('retries, as the SDK’s standard mode', () => {
  const failing = (...answers: Array<Parameters<FakeAws['answer']>[1]>) => {
    let n = 0;
    aws.answer('DynamoDB_20120810.PutItem', () => {
      const next = answers[Math.min(n++, answers.length - 1)]!;
      return typeof next === 'function' ? next(aws.calls.at(-1)!) : next;
    });
  };

  it('a 5xx or a throttle is tried again, with full-jitter backoff, until maxAttempts', async () => {
    const delays: number[] = [];
    failing({ error: 'InternalServerError', status: 500 }, {});
    await expect(client(DYNAMODB, { sleep: async (ms) => void delays.push(ms), random: () => 0.5 })('PutItem', {})).resolves.toEqual({});
    failing({ error: 'ProvisionedThroughputExceededException' }, {});
    await client(DYNAMODB, { sleep: async (ms) => void delays.push(ms), random: () => 0.5 })('PutItem', {});
    expect(aws.calls).toHaveLength(4);
    expect(delays).toEqual([50, 250]);
    failing({ error: 'ServiceUnavailable', status: 503 });
    await expect(client(DYNAMODB)('PutItem', {})).rejects.toMatchObject({ name: 'ServiceUnavailable' });
    expect(aws.calls).toHaveLength(6);
  });

  it('a refusal is not tried again', async () => {
    failing({ error: 'ValidationException' }, {});
    await expect(client(DYNAMODB)('PutItem', {})).rejects.toMatchObject({ name: 'ValidationException' });
    expect(aws.calls).toHaveLength(1);
  });

  it('classifies as the SDK does', () => {
    expect(retryKind({ name: 'TimeoutError' })).toBe('transient');
    expect(retryKind(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('transient');
    expect(retryKind({ name: 'ThrottlingException', status: 400 })).toBe('throttling');
    expect(retryKind({ name: 'Whatever', status: 429 })).toBe('throttling');
    expect(retryKind({ name: 'AccessDeniedException', status: 403 })).toBeUndefined();
    expect(retryKind(new DOMException('aborted', 'AbortError'))).toBeUndefined();
    expect(retryDelayMs('transient', 30, () => 1)).toBe(20_000);
  });
});

describe('clock skew, corrected as the SDK client corrects it', () => {
  // AWS refuses a signature more than 5 minutes off its clock; the fake does too once it has a clock.
  const ahead = 20 * 60_000;
  afterEach(() => aws.clock(undefined));
  const realClock = (options: Partial<AwsJsonClientOptions> = {}) => client(SECRETS_MANAGER, { now: Date.now, ...options });
  const signedAt = (call: AwsCall | undefined) => amzDate(call?.headers['x-amz-date'] ?? '').getTime();

  it.each([
    ['Secrets Manager', SECRETS_MANAGER, 'GetSecretValue', { SecretString: 'x' }],
    ['DynamoDB', DYNAMODB, 'PutItem', {}],
  ] as const)(
    'against a service clock 20 minutes ahead (%s), the first call succeeds on its second attempt and the next at once',
    async (_name, service, operation, answer) => {
      aws.clock(ahead);
      aws.answer(`${service.targetPrefix}.${operation}`, answer);
      const call = client(service, { now: Date.now });
      await expect(call(operation, {})).resolves.toEqual(answer);
      expect(aws.calls).toHaveLength(2);
      // The first attempt was signed with our clock, the second with AWS's.
      expect(Math.abs(signedAt(aws.calls[0]) - Date.now())).toBeLessThan(60_000);
      expect(Math.abs(signedAt(aws.calls[1]) - (Date.now() + ahead))).toBeLessThan(60_000);
      await expect(call(operation, {})).resolves.toEqual(answer);
      expect(aws.calls).toHaveLength(3);
    },
  );

  it('as the SDK client does against the same service', async () => {
    aws.clock(ahead);
    aws.answer('secretsmanager.GetSecretValue', { SecretString: 'x' });
    const sdk = new SecretsManagerClient({ endpoint: aws.url, region: 'eu-west-1', credentials: { ...credentials }, maxAttempts: 2 });
    const first = await sdk.send(new GetSecretValueCommand({ SecretId: 'relay-config' }));
    const second = await sdk.send(new GetSecretValueCommand({ SecretId: 'relay-config' }));
    expect([first.$metadata.attempts, second.$metadata.attempts]).toEqual([2, 1]);
  });

  it('a clock behind AWS is corrected too; with one attempt the call fails, and the next one succeeds at once', async () => {
    aws.clock(-ahead);
    aws.answer('secretsmanager.GetSecretValue', { SecretString: 'x' });
    const call = realClock({ limits: { ...limits, maxAttempts: 1 } });
    await expect(call('GetSecretValue', {})).rejects.toMatchObject({ name: 'InvalidSignatureException', clockSkewCorrected: true });
    await expect(call('GetSecretValue', {})).resolves.toEqual({ SecretString: 'x' });
    expect(aws.calls).toHaveLength(2);
  });

  it('a refusal signed with the corrected clock is not tried again: the skew was not the cause', async () => {
    aws.clock(ahead);
    aws.answer('secretsmanager.GetSecretValue', { error: 'ResourceNotFoundException' });
    const call = realClock();
    // The skewed attempt is tried again; the refusal of the corrected one is final.
    await expect(call('GetSecretValue', {})).rejects.toMatchObject({ name: 'ResourceNotFoundException', clockSkewCorrected: false });
    expect(aws.calls).toHaveLength(2);
    await expect(call('GetSecretValue', {})).rejects.toMatchObject({ name: 'ResourceNotFoundException', clockSkewCorrected: false });
    expect(aws.calls).toHaveLength(3);
  });

  it('an answer without a Date leaves the clock alone; "Signature expired" alone is still worth a second attempt, as in the SDK', async () => {
    aws.answer('secretsmanager.GetSecretValue', {
      error: 'InvalidSignatureException',
      fields: { message: 'Signature expired: 20261123T000000Z is now earlier than 20261123T100000Z' },
    });
    await expect(client(SECRETS_MANAGER)('GetSecretValue', {})).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      clockSkewCorrected: false,
      signatureExpired: true,
    });
    expect(aws.calls).toHaveLength(2);
    expect(aws.calls.map((call) => call.headers['x-amz-date'])).toEqual(['20261123T102030Z', '20261123T102030Z']);
  });

  it('the offset follows the SDK’s getUpdatedSystemClockOffset', () => {
    const sent = Date.parse('2026-11-23T10:00:00Z');
    const date = 'Mon, 23 Nov 2026 10:20:00 GMT';
    expect(updatedClockOffset({ date }, 0, sent, sent + 1_000)).toBe(20 * 60_000 - 1_000);
    // Any Date sets it, near or far; none, an unreadable one, a cache's (Age) or a very slow answer's do not.
    expect(updatedClockOffset({ date: 'Mon, 23 Nov 2026 10:00:03 GMT' }, 20 * 60_000, sent, sent)).toBe(3_000);
    expect(updatedClockOffset({}, 42, sent, sent)).toBe(42);
    expect(updatedClockOffset({ date: 'soon' }, 42, sent, sent)).toBe(42);
    expect(updatedClockOffset({ date, age: '3' }, 42, sent, sent)).toBe(42);
    expect(updatedClockOffset({ date }, 42, sent, sent + 900_001)).toBe(42);
  });

  it('classifies as the SDK does', () => {
    expect(retryKind({ name: 'AccessDeniedException', status: 403, clockSkewCorrected: true })).toBe('transient');
    expect(retryKind({ name: 'InvalidSignatureException', status: 400, signatureExpired: true })).toBe('transient');
    expect(
      retryKind({ name: 'InvalidSignatureException', status: 400, signatureExpired: false, clockSkewCorrected: false }),
    ).toBeUndefined();
  });
});

describe('deadlines', () => {
  it('an attempt that never answers ends at the request timeout, and is tried again within maxAttempts', async () => {
    aws.answer('secretsmanager.GetSecretValue', 'hang');
    const started = Date.now();
    await expect(client(SECRETS_MANAGER)('GetSecretValue', {})).rejects.toMatchObject({ name: 'TimeoutError' });
    const elapsed = Date.now() - started;
    expect(aws.calls).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(2 * limits.requestTimeoutMs - 20);
    expect(elapsed).toBeLessThan(2 * limits.requestTimeoutMs + 1_500);
  });

  it('the caller’s signal ends the call at once, with its reason, and nothing is tried again', async () => {
    aws.answer('secretsmanager.GetSecretValue', 'hang');
    const controller = new AbortController();
    const reason = new Error('invocation deadline');
    setTimeout(() => controller.abort(reason), 50);
    const call = client(SECRETS_MANAGER, { limits: { ...limits, requestTimeoutMs: 10_000 } })('GetSecretValue', {}, controller.signal);
    await expect(call).rejects.toBe(reason);
    expect(aws.calls).toHaveLength(1);
  });
});

describe('endpoint, region and credentials from the environment', () => {
  it('AWS_ENDPOINT_URL_<SERVICE> wins over AWS_ENDPOINT_URL, as in the SDK', async () => {
    aws.answer('secretsmanager.GetSecretValue', { SecretString: 'x' });
    const call = client(SECRETS_MANAGER, {
      env: { ...env(), AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url },
    });
    await expect(call('GetSecretValue', {})).resolves.toEqual({ SecretString: 'x' });
  });

  it('without a configured endpoint, the regional one', async () => {
    const plain = { useFipsEndpoint: false, useDualstackEndpoint: false };
    expect((await serviceEndpoint(SECRETS_MANAGER, 'eu-west-1', plain, {})).url.href).toBe(
      'https://secretsmanager.eu-west-1.amazonaws.com/',
    );
    expect((await serviceEndpoint(DYNAMODB, 'cn-north-1', plain, {})).url.href).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn/');
    const ignored = { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' };
    expect((await serviceEndpoint(DYNAMODB, 'us-east-2', plain, ignored)).url.href).toBe('https://dynamodb.us-east-2.amazonaws.com/');
  });

  it('signs for AWS_REGION, else AWS_DEFAULT_REGION, else the profile’s; none at all is a clear error', async () => {
    aws.answer('secretsmanager.GetSecretValue', { SecretString: 'x' });
    const { AWS_REGION: _region, ...withoutRegion } = env();
    await client(SECRETS_MANAGER, { env: { ...withoutRegion, AWS_DEFAULT_REGION: 'ap-southeast-2' } })('GetSecretValue', {});
    expect(aws.calls[0]?.headers['authorization']).toContain('/ap-southeast-2/secretsmanager/aws4_request');
    await expect(awsRegion({}, async () => 'sa-east-1')()).resolves.toBe('sa-east-1');
    await expect(awsRegion({}, async () => undefined)()).rejects.toBeInstanceOf(RegionMissingError);
  });

  it('Lambda’s environment credentials, without loading the SDK’s chain', async () => {
    let fallbacks = 0;
    const source = awsCredentials(env(), () => {
      fallbacks += 1;
      return async () => ({ accessKeyId: 'other', secretAccessKey: 'other' });
    });
    await expect(source()).resolves.toEqual(credentials);
    expect(fallbacks).toBe(0);
  });

  it('outside Lambda, the SDK’s default chain: here a profile in a shared credentials file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aws-profile-'));
    const saved = { ...process.env };
    try {
      await writeFile(
        join(dir, 'credentials'),
        '[relay-test]\naws_access_key_id = AKIDFROMPROFILE\naws_secret_access_key = secret-from-profile\n',
      );
      for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) delete process.env[name];
      // The chain reads its file locations from process.env; no instance metadata is ever asked for.
      Object.assign(process.env, {
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
        AWS_CONFIG_FILE: join(dir, 'config'),
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      aws.answer('secretsmanager.GetSecretValue', { SecretString: 'x' });
      const call = awsJsonClient(SECRETS_MANAGER, {
        limits,
        env: { AWS_ENDPOINT_URL: aws.url, AWS_REGION: 'eu-west-1', AWS_PROFILE: 'relay-test' },
      });
      await expect(call('GetSecretValue', {})).resolves.toEqual({ SecretString: 'x' });
      expect(aws.calls[0]?.headers['authorization']).toContain('Credential=AKIDFROMPROFILE/');
      expect(aws.calls[0]?.headers).not.toHaveProperty('x-amz-security-token');
    } finally {
      process.env = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
