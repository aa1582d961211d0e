import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { setPartitionInfo, useDefaultPartitionInfo } from '@aws-sdk/core/client';
import type { HttpRequest } from '@smithy/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AwsService,
  awsEndpoint,
  awsRegion,
  EndpointSettingsError,
  endpointSettings,
  type ServiceEndpoint,
} from '../../lib/aws/endpoint.js';
import { awsJsonClient, DYNAMODB, SECRETS_MANAGER } from '../../lib/aws/json-client.js';
import { EVENTBRIDGE } from '../../lib/notify/eventbridge/lazy-eventbridge-post.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';

// Our endpoint for a service must be the one its SDK client sends to, for every partition and
// every FIPS and dual-stack setting, and where the SDK client would refuse the settings, we
// refuse them too, before anything is sent. The SDK clients read their settings from
// process.env and the profile files it names, so each case sets process.env and gives us the same.

const dir = mkdtempSync(join(tmpdir(), 'aws-endpoint-'));
const saved = { ...process.env };
let files = 0;
/** A shared config file of its own per case: the SDK keeps what it read of a file. */
function configFile(text: string): string {
  const path = join(dir, `config-${++files}`);
  writeFileSync(path, text);
  return path;
}

afterEach(() => {
  process.env = { ...saved };
});
afterAll(() => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

type Where = ServiceEndpoint | { refused: string };

/** The SDK client's own choice: the request it would send (URL and credential scope), or its error. */
async function sdkEndpoint(service: AwsService): Promise<Where> {
  const capture = {
    handle: async (request: HttpRequest) => {
      throw Object.assign(new Error('captured'), { captured: request });
    },
  };
  const options = { requestHandler: capture, maxAttempts: 1, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } };
  try {
    if (service === DYNAMODB) await new DynamoDBClient(options).send(new PutItemCommand({ TableName: 'seen', Item: {} }));
    else if (service === EVENTBRIDGE)
      await new EventBridgeClient(options).send(new PutEventsCommand({ Entries: [{ Source: 's', DetailType: 'd', Detail: '{}' }] }));
    else await new SecretsManagerClient(options).send(new GetSecretValueCommand({ SecretId: 'relay-config' }));
    throw new Error('the SDK client sent nothing');
  } catch (error) {
    const request = (error as { captured?: HttpRequest }).captured;
    if (!request) return { refused: (error as Error).name };
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(String(request.headers['authorization']));
    const port = request.port ? `:${request.port}` : '';
    return {
      url: new URL(`${request.protocol}//${request.hostname}${port}${request.path}`),
      signingRegion: scope?.[1] ?? '',
      signingName: scope?.[2] ?? '',
    };
  }
}

/** Ours, from the same environment; no profile lookup unless the case names a config file. */
async function ourEndpoint(service: AwsService, env: Record<string, string | undefined>): Promise<Where> {
  try {
    return await awsEndpoint(service, env, awsRegion(env), endpointSettings(env))();
  } catch (error) {
    if (error instanceof EndpointSettingsError) return { refused: error.reason };
    throw error;
  }
}

/** Both, for one environment: the SDK's and ours, as comparable strings. */
async function both(service: AwsService, env: Record<string, string>) {
  const withoutAws = Object.fromEntries(Object.entries(saved).filter(([name]) => !name.startsWith('AWS_')));
  process.env = { ...withoutAws, AWS_CONFIG_FILE: join(dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'), ...env };
  const show = (where: Where) =>
    'refused' in where ? 'refused' : `${where.url.href} signed for ${where.signingRegion}/${where.signingName}`;
  const [sdk, ours] = [await sdkEndpoint(service), await ourEndpoint(service, { ...process.env })];
  return { sdk: show(sdk), ours: show(ours), sdkWhere: sdk, oursWhere: ours };
}

const REGIONS = [
  'us-east-1',
  // The common case, answered without the rules: every prefix of the aws partition, and aws-cn.
  'eu-west-1',
  'ap-northeast-3',
  'sa-east-1',
  'ca-west-1',
  'me-south-1',
  'af-south-1',
  'il-central-1',
  'mx-central-1',
  'cn-northwest-1',
  'us-gov-west-1',
  'cn-north-1',
  // The EU sovereign cloud, and the ISO partitions.
  'eusc-de-east-1',
  'eu-isoe-west-1',
  'us-iso-east-1',
  'us-isob-east-1',
  'us-isof-south-1',
  // Regions the installed partition data does not list: by their partition's pattern, or none at all.
  'ap-southeast-9',
  'eusc-de-north-7',
  'us-isob-west-9',
  'xx-future-1',
  // The SDK's FIPS pseudo-regions, and DynamoDB's local endpoint.
  'us-east-1-fips',
  'fips-us-gov-west-1',
  'local',
];
const SETTINGS: Array<Record<string, string>> = [
  {},
  { AWS_USE_FIPS_ENDPOINT: 'true' },
  { AWS_USE_DUALSTACK_ENDPOINT: 'true' },
  { AWS_USE_FIPS_ENDPOINT: 'true', AWS_USE_DUALSTACK_ENDPOINT: 'true' },
  { AWS_USE_FIPS_ENDPOINT: 'false', AWS_USE_DUALSTACK_ENDPOINT: 'false' },
];

describe.each([
  ['Secrets Manager', SECRETS_MANAGER],
  ['DynamoDB', DYNAMODB],
  // A destination kind's own service (lib/notify/eventbridge), through the same client and rules.
  ['EventBridge', EVENTBRIDGE],
])('the %s endpoint is the SDK client’s', (_name, service) => {
  it.each(REGIONS)('in %s, with FIPS and dual-stack off, on and both', async (region) => {
    for (const settings of SETTINGS) {
      const { sdk, ours } = await both(service, { AWS_REGION: region, ...settings });
      expect({ settings, ours }).toEqual({ settings, ours: sdk });
      // Not a comparison of two refusals: without FIPS and dual-stack every region has an endpoint.
      if (!settings['AWS_USE_FIPS_ENDPOINT'] && !settings['AWS_USE_DUALSTACK_ENDPOINT']) expect(sdk).toMatch(/^https?:\/\//);
    }
  });

  it('with a configured endpoint: it wins, and FIPS or dual-stack with it is refused, as by the SDK', async () => {
    const configured = { AWS_REGION: 'us-gov-west-1', [`AWS_ENDPOINT_URL_${service.endpointId}`]: 'http://127.0.0.1:9/' };
    for (const settings of SETTINGS) {
      for (const env of [configured, { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:10' }]) {
        const { sdk, ours } = await both(service, { ...env, ...settings });
        expect({ settings, ours }).toEqual({ settings, ours: sdk });
      }
    }
  });
});

describe('the common case', () => {
  it('needs no endpoint rules: a region of the aws or aws-cn partition, FIPS and dual-stack off', async () => {
    const withoutRules: AwsService = { ...DYNAMODB, endpointRules: () => Promise.reject(new Error('the rules were loaded')) };
    for (const region of ['us-east-1', 'eu-central-2', 'cn-north-1']) {
      const where = await ourEndpoint(withoutRules, { AWS_REGION: region });
      expect('url' in where && where.url.hostname).toBe(
        `dynamodb.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`,
      );
    }
    await expect(ourEndpoint(withoutRules, { AWS_REGION: 'us-gov-west-1' })).rejects.toThrow('the rules were loaded');
    await expect(ourEndpoint(withoutRules, { AWS_REGION: 'us-east-1', AWS_USE_FIPS_ENDPOINT: 'true' })).rejects.toThrow(
      'the rules were loaded',
    );
  });
});

describe('what the SDK would refuse is refused, with a typed error, never another endpoint', () => {
  it('FIPS or dual-stack with a configured endpoint', async () => {
    const { sdkWhere, oursWhere } = await both(SECRETS_MANAGER, {
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_USE_FIPS_ENDPOINT: 'true',
    });
    expect(sdkWhere).toEqual({ refused: 'EndpointError' });
    expect(oursWhere).toEqual({ refused: 'endpoint_unsupported' });
    const error = await awsEndpoint(SECRETS_MANAGER, process.env, async () => 'us-east-1', endpointSettings(process.env))().catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EndpointSettingsError);
    expect(String(error)).toMatch(
      /^EndpointSettingsError: No secretsmanager endpoint for region us-east-1 with FIPS on, dual-stack off and a configured endpoint URL: .*FIPS and custom endpoint are not supported/,
    );
    expect(String(error)).not.toContain('127.0.0.1');
  });

  it('FIPS or dual-stack in a partition that has neither (here the partition data says so)', async () => {
    setPartitionInfo({
      partitions: [
        {
          id: 'aws',
          outputs: {
            name: 'aws',
            dnsSuffix: 'amazonaws.com',
            dualStackDnsSuffix: 'api.aws',
            supportsFIPS: false,
            supportsDualStack: false,
          },
          regionRegex: '^(us|eu)\\-\\w+\\-\\d+$',
          regions: { 'eu-west-1': {} },
        },
      ],
    });
    try {
      for (const service of [SECRETS_MANAGER, DYNAMODB]) {
        for (const settings of SETTINGS.slice(1, 4)) {
          const { sdkWhere, oursWhere } = await both(service, { AWS_REGION: 'eu-west-1', ...settings });
          expect(sdkWhere).toEqual({ refused: 'EndpointError' });
          expect(oursWhere).toEqual({ refused: 'endpoint_unsupported' });
        }
      }
      const error = await awsEndpoint(
        DYNAMODB,
        {},
        async () => 'eu-west-1',
        async () => ({ useFipsEndpoint: true, useDualstackEndpoint: true }),
      )().catch(String);
      expect(error).toContain('FIPS and DualStack are enabled, but this partition does not support one or both');
    } finally {
      useDefaultPartitionInfo();
    }
  });

  it('a region that is no host name label', async () => {
    const { sdkWhere, oursWhere } = await both(DYNAMODB, { AWS_REGION: 'us-east-1.evil.example' });
    expect(sdkWhere).toHaveProperty('refused');
    expect(oursWhere).toEqual({ refused: 'region_invalid' });
  });

  it('a configured endpoint that is no URL', async () => {
    const error = await awsEndpoint(
      DYNAMODB,
      { AWS_ENDPOINT_URL: 'not a url' },
      async () => 'eu-west-1',
      endpointSettings({}, async () => undefined),
    )().catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'endpoint_url_invalid' });
  });

  it('a FIPS setting that is neither true nor false, where the SDK would quietly go to the non-FIPS host', async () => {
    const { sdk, oursWhere } = await both(SECRETS_MANAGER, { AWS_REGION: 'us-east-1', AWS_USE_FIPS_ENDPOINT: 'TRUE' });
    expect(sdk).toBe('https://secretsmanager.us-east-1.amazonaws.com/ signed for us-east-1/secretsmanager');
    expect(oursWhere).toEqual({ refused: 'endpoint_setting_invalid' });
    await expect(endpointSettings({ AWS_USE_DUALSTACK_ENDPOINT: '1' })()).rejects.toThrow(
      /AWS_USE_DUALSTACK_ENDPOINT must be "true" or "false"/,
    );
  });

  describe('by the signed client, before it sends anything', () => {
    let aws: FakeAws;
    beforeAll(async () => {
      aws = await startFakeAws();
    });
    afterAll(() => aws.close());

    it('on every call', async () => {
      const env = {
        AWS_ENDPOINT_URL: aws.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
        AWS_USE_FIPS_ENDPOINT: 'true',
      };
      const call = awsJsonClient(SECRETS_MANAGER, { env, limits: { connectionTimeoutMs: 500, requestTimeoutMs: 500, maxAttempts: 2 } });
      await expect(call('GetSecretValue', { SecretId: 'x' })).rejects.toMatchObject({
        name: 'EndpointSettingsError',
        reason: 'endpoint_unsupported',
      });
      await expect(call('GetSecretValue', { SecretId: 'x' })).rejects.toBeInstanceOf(EndpointSettingsError);
      expect(aws.calls).toEqual([]);
    });
  });
});

describe('FIPS and dual-stack settings, read as the SDK reads them', () => {
  it('from the profile when the environment does not set them, the environment winning', async () => {
    const config = configFile(
      '[default]\nuse_fips_endpoint = true\n[profile relay]\nuse_dualstack_endpoint = true\nuse_fips_endpoint = false\n',
    );
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'https://dynamodb-fips.us-east-1.amazonaws.com/'],
      [{ AWS_USE_FIPS_ENDPOINT: 'false' }, 'https://dynamodb.us-east-1.amazonaws.com/'],
      [{ AWS_PROFILE: 'relay' }, 'https://dynamodb.us-east-1.api.aws/'],
      [{ AWS_PROFILE: 'relay', AWS_USE_FIPS_ENDPOINT: 'true' }, 'https://dynamodb-fips.us-east-1.api.aws/'],
    ];
    for (const [env, expected] of cases) {
      const { sdk, ours } = await both(DYNAMODB, { AWS_REGION: 'us-east-1', AWS_CONFIG_FILE: config, ...env });
      expect({ env, ours }).toEqual({ env, ours: sdk });
      expect(ours).toBe(`${expected} signed for us-east-1/dynamodb`);
    }
  });

  it('a profile value that is neither true nor false is refused too', async () => {
    const config = configFile('[default]\nuse_dualstack_endpoint = yes\n');
    await expect(endpointSettings({ AWS_CONFIG_FILE: config, AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none') })()).rejects.toMatchObject({
      reason: 'endpoint_setting_invalid',
      message: expect.stringContaining('use_dualstack_endpoint in the AWS profile'),
    });
  });

  it('in Lambda, where there is no profile, without looking for one; unless a config file is named', async () => {
    const asked: string[] = [];
    const profile = async (key: string) => {
      asked.push(key);
      return 'true';
    };
    await expect(endpointSettings({ AWS_LAMBDA_FUNCTION_NAME: 'relay' }, profile)()).resolves.toEqual({
      useFipsEndpoint: false,
      useDualstackEndpoint: false,
    });
    expect(asked).toEqual([]);
    await expect(endpointSettings({ AWS_LAMBDA_FUNCTION_NAME: 'relay', AWS_USE_FIPS_ENDPOINT: 'true' }, profile)()).resolves.toEqual({
      useFipsEndpoint: true,
      useDualstackEndpoint: false,
    });
    expect(asked).toEqual([]);
    await expect(
      endpointSettings({ AWS_LAMBDA_FUNCTION_NAME: 'relay', AWS_CONFIG_FILE: '/var/task/aws-config' }, profile)(),
    ).resolves.toEqual({
      useFipsEndpoint: true,
      useDualstackEndpoint: true,
    });
    expect(asked).toEqual(['use_fips_endpoint', 'use_dualstack_endpoint']);
  });

  it('once per client: the settings and the endpoint are resolved on first use and kept', async () => {
    let lookups = 0;
    const settings = endpointSettings({}, async () => {
      lookups += 1;
      return undefined;
    });
    const endpoint = awsEndpoint(SECRETS_MANAGER, {}, async () => 'eusc-de-east-1', settings);
    const [first, second] = await Promise.all([endpoint(), endpoint()]);
    expect(first).toBe(second);
    expect(first.url.href).toBe('https://secretsmanager.eusc-de-east-1.amazonaws.eu/');
    expect(lookups).toBe(2);
  });
});
