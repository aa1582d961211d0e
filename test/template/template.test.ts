import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { CONFIG_READ_BUDGET_MS } from '../../lib/config/store.js';
import { SUMMARY_ATTRIBUTES, SUMMARY_DESTINATION, SUMMARY_FIRST_SEEN, SUMMARY_INDEX } from '../../lib/dedup/summary-record.js';
import { QUEUE_CALL_BUDGET_MS } from '../../lib/delivery/deliver.js';
import { type EscalationOutcome, METRICS_NAMESPACE, ownerDirectoryUnavailableMetric } from '../../lib/metrics/metrics.js';
import { addressOf, destinationType } from '../../lib/notify/kinds.js';
import { relayEnvironmentSchema } from '../../lib/relay/environment.js';
import { AUTHENTICATION_BUDGET_MS } from '../../lib/relay/relay.js';
import { ANSWER_RESERVE_MS } from '../../lib/shared/deadline.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import {
  type CfnTemplate,
  conditionHolds,
  type Deployment,
  effectiveFunctionProperties,
  environmentVariables,
  evaluate,
  initialSecretString,
  loadTemplate,
  referencedIds,
  resourcesOfType,
} from '../helpers/cloudformation.js';
import { environmentReads } from '../helpers/environment-reads.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { eventBridgeProblems, secretsManagerProblems } from './least-privilege.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const template = loadTemplate(join(root, 'template.yaml'));
const functions = resourcesOfType(template, 'AWS::Serverless::Function');
const functionNamed = (fn: string) => functions.find(([, r]) => r.Properties?.['CodeUri'] === `dist/${fn}`);
const [relayId] = functionNamed('webhook-relay') ?? [];

// Read by the code but deliberately not set by the template.
const NOT_SET_BY_TEMPLATE: Record<string, string> = {
  SLACK_TIMEOUT_MS: 'the older name of POST_TIMEOUT_MS, still read for stacks and local setups that set it',
  AWS_REGION: 'Lambda sets it itself',
  AWS_ENDPOINT_URL: 'only tests and local emulators point the SDK elsewhere',
  AWS_ACCESS_KEY_ID: "Lambda sets the function role's credentials itself",
  AWS_SECRET_ACCESS_KEY: "Lambda sets the function role's credentials itself",
  AWS_SESSION_TOKEN: "Lambda sets the function role's credentials itself",
  AWS_DEFAULT_REGION: 'Lambda sets AWS_REGION; read as the SDK does, for runs outside Lambda',
  AWS_PROFILE: 'outside Lambda only: the profile for the SDK credential chain',
  AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'read as the SDK does, for runs outside Lambda',
  AWS_USE_FIPS_ENDPOINT: 'read as the SDK does: set it on the functions for FIPS endpoints (the SQS client follows it too)',
  AWS_USE_DUALSTACK_ENDPOINT: 'read as the SDK does: set it on the functions for dual-stack endpoints (the SQS client follows it too)',
  AWS_LAMBDA_FUNCTION_NAME: 'Lambda sets it itself; where it is set, the signed AWS calls look for no AWS profile',
  AWS_CONFIG_FILE: 'outside Lambda only: the profile file, as the SDK reads it',
  AWS_SHARED_CREDENTIALS_FILE: 'outside Lambda only: the profile file, as the SDK reads it',
  POWERTOOLS_METRICS_DISABLED: 'metrics stay on in the stack; `npm start` sets it to keep the console readable',
  AWS_LAMBDA_LOG_LEVEL: "Lambda sets it from a function's application log level, when one is configured",
  SLACK_API_URL: "unset, so Slack app destinations use Slack's own Web API; tests point it at a loopback server",
  PAGERDUTY_EVENTS_URL: "the default is PagerDuty's own endpoint; only tests point it elsewhere",
  EVENTBRIDGE_ENDPOINT_URL:
    'unset, so eventbridge destinations reach EventBridge as every AWS call does; npm start and tests point it at a loopback server',
  DELIVERY_MIN_INTERVAL_MS:
    'unset, so each chat service keeps its own pace (Slack 1.1 s per webhook, Teams 0.26 s per webhook, Google Chat 1.1 s per space)',
};

// What a user who also wants the API key rotated gives `npm run deploy` (the rest keep their defaults).
const userParameters = {
  DefaultDestinationUrl: 'https://hooks.slack.com/services/T000/B000/XXXX',
  ApiKeyRotation: 'Enabled',
  PlatformUsername: 'finops@example.com',
  PlatformPassword: 'platform-pass-1',
  ApiKeyAccount: 'Production payer',
};

const deploymentWith = (parameters: Record<string, string> = {}): Deployment => ({
  template,
  parameters: { ...userParameters, ...parameters },
});

const clone = (t: CfnTemplate): CfnTemplate => structuredClone(t);

describe('cfn-lint', () => {
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  const installed = !probe.error;
  const required = process.env['CI'] === 'true';
  if (!installed && !required) {
    console.warn('\n[notice] cfn-lint is not installed: the cfn-lint check of template.yaml is SKIPPED.\n');
  }

  it.skipIf(!installed && !required)('finds nothing in template.yaml', () => {
    if (!installed) throw new Error('cfn-lint is required in CI but is not installed');
    const result = spawnSync('cfn-lint', ['--', 'template.yaml'], { cwd: root, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('functions deploy what npm run build produced', () => {
  it('every function in functions/ is deployed, and every deployed function comes from functions/', () => {
    const built = readdirSync(join(root, 'functions')).filter((name) => existsSync(join(root, 'functions', name, 'handler.ts')));
    const deployed = functions.map(([, r]) => String(r.Properties?.['CodeUri']).replace(/^dist\//, ''));
    expect(deployed.sort()).toEqual(built.sort());
  });

  it.each(functions.map(([id]) => [id]))('%s runs a bundle from dist/ on nodejs24.x arm64, never rebuilt by SAM', (id) => {
    const properties = effectiveFunctionProperties(template, id);
    expect(properties['CodeUri']).toMatch(/^dist\/[a-z0-9-]+$/);
    expect(properties['Handler']).toBe('index.handler');
    expect(properties['Runtime']).toBe('nodejs24.x');
    expect(properties['Architectures']).toEqual(['arm64']);
    expect(template.Resources[id]?.Metadata?.['BuildMethod']).toBeUndefined();
  });

  it.each(functions.map(([id, r]) => [id, String(r.Properties?.['CodeUri'])]))(
    '%s: %s/index.mjs exists and exports a handler function',
    (_id, codeUri) => {
      const bundle = join(root, codeUri, 'index.mjs');
      expect(existsSync(bundle), `${codeUri}/index.mjs is missing: is there a functions/<name>/handler.ts?`).toBe(true);
      // A fresh process without configuration, like a new Lambda container, imports the bundle.
      const result = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          'const m = await import(process.argv[1]); process.stdout.write(typeof m.handler);',
          pathToFileURL(bundle).href,
        ],
        { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', AWS_REGION: 'us-east-1' } },
      );
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('function');
    },
  );

  it.each(functions.map(([id, r]) => [id, String(r.Properties?.['CodeUri']).replace(/^dist\//, '')]))(
    '%s deploys none of the code only `npm start` and the tests use: consoles, previews, scripts',
    (_id, name) => {
      // Every input of the function's bundles, the lazily imported ones included (dist/meta/<name>.json).
      const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', `${name}.json`), 'utf8')) as { inputs: Record<string, unknown> };
      const ours = Object.keys(meta.inputs).filter((path) => !path.includes('node_modules') && !path.includes('/lazy:'));
      expect(ours.length).toBeGreaterThan(10);
      expect(ours.filter((path) => /^lib\/notify\/(?:[^/]+\/)?(?:tools|preview)\.ts$|^(?:scripts|test|bench)\//.test(path))).toEqual([]);
      expect(readdirSync(join(root, 'dist', name)).filter((file) => /tools|preview|console/.test(file))).toEqual([]);
    },
  );

  it("the relay's deadline budget fits its timeout, which fits inside API Gateway's 30 s", () => {
    const properties = effectiveFunctionProperties(template, relayId as string);
    const timeoutMs = Number(properties['Timeout']) * 1000;
    expect(timeoutMs).toBeLessThanOrEqual(15_000);
    // Worst case, every dependency hanging: configuration, authentication, a queue call and the answer,
    // with at least a second left for the post (which the relay cuts to what remains).
    expect(CONFIG_READ_BUDGET_MS + AUTHENTICATION_BUDGET_MS + QUEUE_CALL_BUDGET_MS + ANSWER_RESERVE_MS + 1_000).toBeLessThan(timeoutMs);
    expect(environmentVariables(template, relayId as string)['POST_TIMEOUT_MS']).toEqual({ Ref: 'PostTimeoutMs' });
    const postTimeout = template.Parameters['PostTimeoutMs'] as unknown as { Default: number; MaxValue: number };
    expect(postTimeout.Default).toBe(5000);
    expect(postTimeout.MaxValue).toBeLessThanOrEqual(timeoutMs / 2);
  });
});

describe('environment', () => {
  it('the derivation of what code reads finds the relay environment schema (so the checks below can fail)', async () => {
    const reads = await environmentReads(root, 'webhook-relay');
    for (const key of Object.keys(relayEnvironmentSchema.shape)) expect(reads).toContain(key);
  });

  it.each(functions.map(([id, r]) => [id, String(r.Properties?.['CodeUri']).replace(/^dist\//, '')]))(
    '%s gets every variable its code reads, and none it does not read',
    async (id, fn) => {
      const reads = await environmentReads(root, fn);
      const set = Object.keys(environmentVariables(template, id));
      const missing = [...reads].filter((name) => !set.includes(name) && !(name in NOT_SET_BY_TEMPLATE));
      const unread = set.filter((name) => !reads.has(name));
      expect({ missing, unread }).toEqual({ missing: [], unread: [] });
    },
  );

  it('the relay is pointed at its configuration secret by ARN', () => {
    expect(environmentVariables(template, relayId as string)['RELAY_CONFIG_SECRET_ID']).toEqual({ Ref: 'RelayConfigSecret' });
  });
});

describe('least privilege', () => {
  /** What a function's role grants in a stack deployed with these parameters, resources by logical id. */
  const grantsWith = (id: string, parameters: Record<string, string>) =>
    (
      evaluate(
        { ...deploymentWith(parameters), resolveResource: (resource) => resource },
        effectiveFunctionProperties(template, id)['Policies'],
      ) as Array<{ Statement: Array<{ Action: unknown; Resource: unknown }> }>
    )
      .flatMap((p) => p.Statement)
      .flatMap((s) => [s.Action].flat().map((a) => `${String(a)} ${[s.Resource].flat().join()}`))
      .sort();

  it('each function may use only its own secrets, and no Secrets Manager permission uses a wildcard', () => {
    expect(secretsManagerProblems(template)).toEqual([]);
  });

  it('events:PutEvents only for the functions that post, only on the buses EventBusArns names, and with none named on none', () => {
    expect(eventBridgeProblems(template)).toEqual([]);
    const buses = ['arn:aws:events:eu-west-1:123456789012:event-bus/default', 'arn:aws:events:eu-west-1:123456789012:event-bus/finops'];
    const put = `events:PutEvents ${buses.join()}`;
    const posting = ['webhook-relay', 'delivery-retry', 'triage', 'summary'].map((fn) => functionNamed(fn)?.[0] as string);
    for (const [id] of functions) {
      expect(grantsWith(id, { EventBusArns: buses.join() }).includes(put), id).toBe(posting.includes(id));
      expect(
        grantsWith(id, {}).filter((grant) => grant.startsWith('events:')),
        id,
      ).toEqual([]);
    }
    expect(template.Parameters['EventBusArns']).toMatchObject({ Type: 'CommaDelimitedList', Default: '' });
    // The parameter takes bus ARNs, never a wildcard or another resource.
    const pattern = new RegExp(String(template.Parameters['EventBusArns']?.AllowedPattern));
    for (const bus of [...buses, 'arn:aws-cn:events:cn-north-1:123456789012:event-bus/a.b-c_d', ''])
      expect(pattern.test(bus), bus).toBe(true);
    for (const bus of [
      '*',
      'arn:aws:events:eu-west-1:123456789012:event-bus/*',
      'arn:aws:events:*:*:*',
      'arn:aws:sqs:eu-west-1:123456789012:q',
    ]) {
      expect(pattern.test(bus), bus).toBe(false);
    }
  });

  it('each function gets exactly what it needs: relay and retry read the configuration, use their queues and write the dedup table; the rotation rotates the API key', () => {
    const grants = (id: string) => grantsWith(id, {});
    expect(grants(relayId as string)).toEqual([
      'dynamodb:DeleteItem DedupTable',
      'dynamodb:GetItem DedupTable',
      'dynamodb:PutItem DedupTable',
      'dynamodb:UpdateItem DedupTable',
      'secretsmanager:GetSecretValue RelayConfigSecret',
      'secretsmanager:GetSecretValue TriageKeySecret',
      'sqs:SendMessage DeliveryQueue,DeliveryDeadLetterQueue',
    ]);
    const [retryId] = functionNamed('delivery-retry') ?? [];
    expect(grants(retryId as string)).toEqual([
      'dynamodb:DeleteItem DedupTable',
      'dynamodb:GetItem DedupTable',
      'dynamodb:PutItem DedupTable',
      'dynamodb:UpdateItem DedupTable',
      'secretsmanager:GetSecretValue RelayConfigSecret',
      'secretsmanager:GetSecretValue TriageKeySecret',
      'sqs:ChangeMessageVisibility DeliveryQueue',
      'sqs:DeleteMessage DeliveryQueue',
      'sqs:GetQueueAttributes DeliveryQueue',
      'sqs:ReceiveMessage DeliveryQueue',
      'sqs:SendMessage DeliveryDeadLetterQueue',
      'sqs:SendMessage DeliveryQueue',
    ]);
    const [rotationId] = functionNamed('api-key-rotation') ?? [];
    expect(grants(rotationId as string)).toEqual([
      'secretsmanager:DescribeSecret ApiKeySecret',
      'secretsmanager:GetSecretValue ApiKeySecret',
      'secretsmanager:GetSecretValue PlatformCredentialsSecret',
      'secretsmanager:PutSecretValue ApiKeySecret',
      'secretsmanager:UpdateSecretVersionStage ApiKeySecret',
    ]);
    // Triage reads and writes an anomaly's item, never deletes or queues; the key is its own secret.
    const [triageId] = functionNamed('triage') ?? [];
    expect(grants(triageId as string)).toEqual([
      'dynamodb:GetItem DedupTable',
      'dynamodb:UpdateItem DedupTable',
      'secretsmanager:GetSecretValue RelayConfigSecret',
      'secretsmanager:GetSecretValue TriageKeySecret',
    ]);
    expect(template.Resources['TriageKeySecret']?.Properties?.['GenerateSecretString']).toMatchObject({ PasswordLength: 64 });
    // directory-sync reads the platform login, reads, writes and deletes whole owner# items, and reads and writes its own
    // directory# items: no update, no scan.
    const [directoryId] = functionNamed('directory-sync') ?? [];
    expect(grants(directoryId as string)).toEqual([
      'dynamodb:DeleteItem DedupTable',
      'dynamodb:GetItem DedupTable',
      'dynamodb:GetItem DedupTable',
      'dynamodb:PutItem DedupTable',
      'dynamodb:PutItem DedupTable',
      'secretsmanager:GetSecretValue PlatformCredentialsSecret',
    ]);
    // The summary function queries the summaries index and takes and reads each week's summary# item; it scans nothing.
    const [summaryId] = functionNamed('summary') ?? [];
    expect(grants(summaryId as string)).toEqual([
      'dynamodb:DeleteItem DedupTable',
      'dynamodb:GetItem DedupTable',
      'dynamodb:PutItem DedupTable',
      'dynamodb:Query DedupTable/index/summaries',
      'secretsmanager:GetSecretValue RelayConfigSecret',
      'secretsmanager:GetSecretValue TriageKeySecret',
    ]);
  });

  it('the summary function queries the summaries index alone, and writes, deletes and reads summary# items alone', () => {
    const [summaryId] = functionNamed('summary') ?? [];
    const statements = (
      effectiveFunctionProperties(template, summaryId as string)['Policies'] as Array<{ Statement: Array<Record<string, unknown>> }>
    ).flatMap((p) => p.Statement);
    expect(statements.find((s) => s['Action'] === 'dynamodb:Query')?.['Resource']).toEqual({
      'Fn::Sub': `\${DedupTable.Arn}/index/${SUMMARY_INDEX}`,
    });
    const writes = statements.find((s) => JSON.stringify(s['Action']).includes('dynamodb:PutItem'));
    expect(writes).toMatchObject({
      Action: ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem'],
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['summary#*'] } },
    });
  });

  it('the relay reads owner records and directory-sync reads, writes and deletes them, kept to owner# items and its own directory# items', () => {
    const statementsOf = (id: string) =>
      (effectiveFunctionProperties(template, id)['Policies'] as Array<{ Statement: Array<Record<string, unknown>> }>).flatMap(
        (p) => p.Statement,
      );
    const [directoryId] = functionNamed('directory-sync') ?? [];
    const keys = (prefix: string) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [prefix] } });
    expect(statementsOf(relayId as string).find((s) => s['Action'] === 'dynamodb:GetItem')).toMatchObject({ Condition: keys('owner#*') });
    const onTable = statementsOf(directoryId as string)
      .filter((s) => [s['Action']].flat().some((a) => String(a).startsWith('dynamodb:')))
      .map((s) => [[s['Action']].flat().sort(), s['Condition']]);
    expect(onTable).toEqual([
      [['dynamodb:GetItem'], keys('owner#*')],
      // A record goes only when no payer covers its account any more.
      [['dynamodb:DeleteItem', 'dynamodb:PutItem'], keys('owner#*')],
      // The cursor, each payer's index and the last run: read and replaced, never deleted.
      [['dynamodb:GetItem', 'dynamodb:PutItem'], keys('directory#*')],
    ]);
  });

  describe('the check catches', () => {
    const relayPolicies = (t: CfnTemplate) => t.Resources[relayId as string]?.Properties?.['Policies'] as Array<{ Statement: unknown[] }>;

    it('a wildcard resource', () => {
      const t = clone(template);
      relayPolicies(t)[0]?.Statement.push({ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: '*' });
      expect(secretsManagerProblems(t).join('\n')).toContain('"*" (wildcard)');
    });

    it('a wildcard action', () => {
      const t = clone(template);
      relayPolicies(t)[0]?.Statement.push({ Effect: 'Allow', Action: 'secretsmanager:*', Resource: { Ref: 'RelayConfigSecret' } });
      expect(secretsManagerProblems(t).join('\n')).toContain('wildcard action secretsmanager:*');
    });

    it("a function reading another function's secret", () => {
      const t = clone(template);
      relayPolicies(t)[0]?.Statement.push({ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: 'ApiKeySecret' } });
      expect(secretsManagerProblems(t).join('\n')).toContain('may use ApiKeySecret, which is not its own secret');
    });

    it('writing a secret the function only reads', () => {
      const t = clone(template);
      relayPolicies(t)[0]?.Statement.push({
        Effect: 'Allow',
        Action: 'secretsmanager:PutSecretValue',
        Resource: { Ref: 'RelayConfigSecret' },
      });
      expect(secretsManagerProblems(t).join('\n')).toContain('PutSecretValue on RelayConfigSecret, which it does not rotate');
    });

    it("SAM's rotation policy template (it grants on every secret)", () => {
      const t = clone(template);
      relayPolicies(t).push({ AWSSecretsManagerRotationPolicy: { FunctionName: 'x' } } as never);
      expect(secretsManagerProblems(t).join('\n')).toContain('AWSSecretsManagerRotationPolicy');
    });

    it('a Secrets Manager grant under a condition (either branch may be deployed)', () => {
      const t = clone(template);
      relayPolicies(t).push({
        'Fn::If': [
          'PutEventsOnBuses',
          { Statement: [{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: '*' }] },
          { Ref: 'AWS::NoValue' },
        ],
      } as never);
      expect(secretsManagerProblems(t).join('\n')).toContain('"*" (wildcard)');
    });

    it('events:PutEvents on a wildcard, another events action, or without the condition', () => {
      const t = clone(template);
      const put = (resource: unknown, action = 'events:PutEvents') => ({
        Statement: [{ Effect: 'Allow', Action: action, Resource: resource }],
      });
      relayPolicies(t).push(
        { 'Fn::If': ['PutEventsOnBuses', put('*'), { Ref: 'AWS::NoValue' }] } as never,
        { 'Fn::If': ['PutEventsOnBuses', put({ Ref: 'EventBusArns' }, 'events:*'), { Ref: 'AWS::NoValue' }] } as never,
        put({ Ref: 'EventBusArns' }) as never,
      );
      const problems = eventBridgeProblems(t).join('\n');
      expect(problems).toContain('events:PutEvents on "*"');
      expect(problems).toContain('events:*; only events:PutEvents');
      expect(problems).toContain('without a condition');
    });

    it('a function that could not read its own secret', () => {
      const t = clone(template);
      (t.Resources[relayId as string]?.Properties as Record<string, unknown>)['Policies'] = [];
      expect(secretsManagerProblems(t)).toEqual([
        `${relayId}: cannot read its secret RelayConfigSecret`,
        `${relayId}: cannot read its secret TriageKeySecret`,
      ]);
    });
  });
});

describe('initial secret values (what a fresh stack holds)', () => {
  const relayConfigFor = (parameters: Record<string, string>) =>
    relayConfigSchema.safeParse(JSON.parse(initialSecretString(deploymentWith(parameters), 'RelayConfigSecret')));

  it('Basic (the default): a generated password that only has characters safe inside JSON', () => {
    const parsed = relayConfigFor({});
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(parsed.data?.auth.method).toBe('basic');
    expect(parsed.data?.auth.basic?.username).toBe('relay');
    // The worst-case draw of the generator (every character it may use) is still a plain string.
    expect(parsed.data?.auth.basic?.password).toMatch(/^[A-Za-z0-9]{32,}$/);
    expect(addressOf(parsed.data!.destinations['default']!)).toBe(userParameters.DefaultDestinationUrl);
  });

  it('the default destination may be a Slack, Teams workflow or Google Chat URL; the relay tells them apart by host', () => {
    const urls = {
      slack: 'https://hooks.slack.com/services/T000/B000/XXXX',
      teams:
        'https://default1.2a.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/abc/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=SIG',
      googlechat: 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=KEY&token=TOKEN%3D',
    } as const;
    for (const [type, url] of Object.entries(urls)) {
      const parsed = relayConfigFor({ DefaultDestinationUrl: url });
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expect(addressOf(parsed.data!.destinations['default']!)).toBe(url);
      expect(destinationType(parsed.data!.destinations['default']!)).toBe(type);
    }
    // The pattern the parameter enforces lets each of them through.
    const pattern = new RegExp(String(template.Parameters['DefaultDestinationUrl']?.AllowedPattern));
    for (const url of Object.values(urls)) expect(pattern.test(url)).toBe(true);
  });

  it('SSO, with and without an audience', () => {
    const sso = { AuthMethod: 'SSO', SsoIssuer: 'https://idp.example.com/oauth2/default', SsoClientId: '0oa1', SsoScope: 'cost-alerts' };
    const without = relayConfigFor(sso);
    expect(without.success, JSON.stringify(without.error?.issues)).toBe(true);
    expect(without.data?.auth).toMatchObject({ method: 'sso', sso: { issuer: sso.SsoIssuer, clientId: '0oa1', scope: 'cost-alerts' } });
    expect(without.data?.auth.sso?.audience).toBeUndefined();
    const withAudience = relayConfigFor({ ...sso, SsoAudience: 'api://cost-relay' });
    expect(withAudience.data?.auth.sso?.audience).toBe('api://cost-relay');
  });

  it('None', () => {
    const parsed = relayConfigFor({ AuthMethod: 'None' });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.auth.method).toBe('none');
  });

  it('the generated password secret exists only with Basic', () => {
    expect(template.Resources['RelayBasicPasswordSecret']?.Condition).toBe('UseBasicAuth');
    expect(conditionHolds(deploymentWith({ AuthMethod: 'Basic' }), 'UseBasicAuth')).toBe(true);
    expect(conditionHolds(deploymentWith({ AuthMethod: 'SSO' }), 'UseBasicAuth')).toBe(false);
  });

  it('the platform credentials and the API-key selection', () => {
    expect(JSON.parse(initialSecretString(deploymentWith(), 'PlatformCredentialsSecret'))).toEqual({
      username: 'finops@example.com',
      password: 'platform-pass-1',
    });
    expect(JSON.parse(initialSecretString(deploymentWith({ ApiKeyCostCenter: 'Platform team' }), 'ApiKeySecret'))).toEqual({
      account: 'Production payer',
      costCenter: 'Platform team',
    });
  });

  it('parameters written into JSON refuse the characters that would break it', () => {
    const secretProperties = resourcesOfType(template, 'AWS::SecretsManager::Secret').map(([, r]) => r.Properties);
    const interpolated = [...referencedIds(secretProperties)].filter((id) => id in template.Parameters);
    expect(interpolated).toEqual(expect.arrayContaining(['DefaultDestinationUrl', 'PlatformPassword', 'ApiKeyAccount', 'BasicUsername']));
    for (const name of interpolated) {
      const pattern = template.Parameters[name]?.AllowedPattern;
      const allowed = template.Parameters[name]?.AllowedValues;
      if (allowed) continue;
      expect(pattern, `${name} needs an AllowedPattern`).toBeDefined();
      const re = new RegExp(pattern as string);
      expect(re.test('https://x.example/a"b'), `${name} accepts a quote`).toBe(false);
      expect(re.test('https://x.example/a\\b'), `${name} accepts a backslash`).toBe(false);
    }
  });

  it('secret parameters are NoEcho', () => {
    expect(template.Parameters['DefaultDestinationUrl']?.NoEcho).toBe(true);
    expect(template.Parameters['PlatformPassword']?.NoEcho).toBe(true);
  });
});

describe('rotation', () => {
  const [[, schedule] = []] = resourcesOfType(template, 'AWS::SecretsManager::RotationSchedule');
  const [rotationId] = functionNamed('api-key-rotation') ?? [];

  it('rotates the API-key secret with the rotation function, every 4 hours by default', () => {
    expect(schedule?.Properties?.['SecretId']).toEqual({ Ref: 'ApiKeySecret' });
    expect([...referencedIds(schedule?.Properties?.['RotationLambdaARN'])]).toEqual([rotationId]);
    const rules = evaluate(deploymentWith(), schedule?.Properties?.['RotationRules']) as Record<string, unknown>;
    expect(['rate(4 hours)', 'cron(0 0/4 * * ? *)', 'cron(0 */4 * * ? *)']).toContain(rules['ScheduleExpression']);
  });

  it('Secrets Manager may invoke the rotation function, before the schedule is created', () => {
    const permissions = resourcesOfType(template, 'AWS::Lambda::Permission').filter(
      ([, p]) => p.Properties?.['Principal'] === 'secretsmanager.amazonaws.com',
    );
    expect(permissions).toHaveLength(1);
    const [permissionId, permission] = permissions[0] as [string, { Properties: Record<string, unknown> }];
    expect([...referencedIds(permission.Properties['FunctionName'])]).toEqual([rotationId]);
    expect(permission.Properties['Action']).toBe('lambda:InvokeFunction');
    expect([schedule?.DependsOn].flat()).toContain(permissionId);
  });
});

describe('HTTP API, logs and alarms', () => {
  const [[apiId, api] = []] = resourcesOfType(template, 'AWS::Serverless::HttpApi');

  it('POST /webhook to the relay; the Slack interactions, the triage page and the cost-trend picture to the triage function; payload 2.0', () => {
    const routes = functions.flatMap(([id, r]) =>
      Object.values((r.Properties?.['Events'] ?? {}) as Record<string, { Type: string; Properties: Record<string, unknown> }>)
        .filter((e) => e.Type === 'HttpApi')
        .map((e) => ({ id, ...e.Properties })),
    );
    const [triageId] = functionNamed('triage') ?? [];
    const route = (id: unknown, Method: string, Path: string) => ({ id, ApiId: { Ref: apiId }, Method, Path, PayloadFormatVersion: '2.0' });
    expect(routes).toEqual([
      route(relayId, 'POST', '/webhook'),
      route(triageId, 'GET', '/chart/{token}'),
      route(triageId, 'POST', '/slack/interactions'),
      route(triageId, 'GET', '/triage/{token}'),
      route(triageId, 'POST', '/triage/{token}'),
    ]);
  });

  it('default-route throttling and access logs without headers', () => {
    const properties = api?.Properties ?? {};
    const settings = evaluate(deploymentWith(), properties['DefaultRouteSettings']) as Record<string, string>;
    expect(Number(settings['ThrottlingRateLimit'])).toBeGreaterThan(0);
    expect(Number(settings['ThrottlingBurstLimit'])).toBeGreaterThan(0);
    const access = properties['AccessLogSettings'] as { DestinationArn: unknown; Format: string };
    expect(template.Resources[[...referencedIds(access.DestinationArn)][0] as string]?.Type).toBe('AWS::Logs::LogGroup');
    expect(() => JSON.parse(access.Format)).not.toThrow();
    expect(access.Format).not.toMatch(/header|authorization/i);
  });

  it('every function and the access log keep logs for LogRetentionDays', () => {
    const groups = [
      ...functions.map(
        ([id]) =>
          [...referencedIds((effectiveFunctionProperties(template, id)['LoggingConfig'] as Record<string, unknown>)['LogGroup'])][0],
      ),
      [...referencedIds((api?.Properties?.['AccessLogSettings'] as Record<string, unknown> | undefined)?.['DestinationArn'])][0],
    ];
    for (const group of groups) {
      expect(template.Resources[group as string]?.Properties?.['RetentionInDays']).toEqual({ Ref: 'LogRetentionDays' });
    }
  });

  it('alarms on behaviour: errors, 5xx answers, parked alerts, a blocked or slow retry, failed rotations, a stale directory; all sent to the topic', () => {
    const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties ?? {});
    const watched = alarms
      .filter((a) => a['MetricName'])
      .map((a) => `${String(a['MetricName'])} ${[...referencedIds(a['Dimensions'])].join()}`)
      .sort();
    const [[deadLetterQueueId] = []] = resourcesOfType(template, 'AWS::SQS::Queue').filter(
      ([id]) => !template.Resources[id]?.Properties?.['RedrivePolicy'],
    );
    const [[deliveryQueueId] = []] = resourcesOfType(template, 'AWS::SQS::Queue').filter(
      ([id]) => template.Resources[id]?.Properties?.['RedrivePolicy'],
    );
    const [retryId] = functionNamed('delivery-retry') ?? [];
    const [rotationId] = functionNamed('api-key-rotation') ?? [];
    expect(watched).toEqual(
      [
        `Errors ${relayId}`,
        `Errors ${retryId}`,
        `Errors ${functionNamed('triage')?.[0]}`,
        `5xx ${apiId}`,
        `ApproximateNumberOfMessagesVisible ${deadLetterQueueId}`,
        `ApproximateAgeOfOldestMessage ${deliveryQueueId}`,
        'ConfigurationUnavailable ',
        'CostEvents ',
        'Escalations ',
        'OwnerDirectoryUnavailable ',
      ].sort(),
    );
    // The relay counts an owner record it could not read (lib/metrics): that alert did not reach its team.
    const unreadable = resourcesOfType(template, 'AWS::CloudWatch::Alarm').find(
      ([, a]) => a.Properties?.['MetricName'] === ownerDirectoryUnavailableMetric().name,
    );
    expect(unreadable?.[1].Condition).toBe('RouteByOwner');
    expect(unreadable?.[1].Properties).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [{ Name: 'service', Value: 'webhook-relay' }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // A cost event neither written nor queued, where the triage function writes them (owner routing).
    expect(template.Resources['CostEventsFailedAlarm']).toMatchObject({
      Condition: 'RouteByOwner',
      Properties: {
        Namespace: 'CostAlertRelay',
        MetricName: 'CostEvents',
        Dimensions: [
          { Name: 'service', Value: 'triage' },
          { Name: 'outcome', Value: 'failed' },
        ],
      },
    });
    // The blocked-worker alarm watches the metric delivery-retry writes (lib/metrics), by its service.
    const blocked = alarms.find((a) => a['MetricName'] === 'ConfigurationUnavailable');
    expect(blocked).toMatchObject({ Namespace: 'CostAlertRelay', Dimensions: [{ Name: 'service', Value: 'delivery-retry' }] });
    // One rotation alarm sees both a failed step (our metric) and a crash or timeout (Lambda's).
    const rotation = resourcesOfType(template, 'AWS::CloudWatch::Alarm').find(([, a]) =>
      JSON.stringify(a.Properties?.['Metrics'] ?? null).includes('"MetricName":"Rotations"'),
    );
    expect(rotation?.[1].Condition).toBe('RotateApiKey');
    const metrics = JSON.stringify(rotation?.[1].Properties?.['Metrics']);
    expect(metrics).toContain('"MetricName":"Rotations"');
    expect(metrics).toContain('"Value":"failed"');
    expect([...referencedIds(rotation?.[1].Properties?.['Metrics'])]).toEqual([rotationId]);
    expect(
      resourcesOfType(template, 'AWS::CloudWatch::Alarm')
        .filter(([, a]) => a.Properties?.['Metrics'])
        .map(([id]) => id),
    ).toEqual(expect.arrayContaining(['OwnerDirectoryStaleAlarm']));
    // One summary alarm sees a summary not posted, a run that could read nothing (our metric), and a crash or timeout.
    const summary = template.Resources['SummaryFailedAlarm']?.Properties ?? {};
    const summaryMetrics = JSON.stringify(summary['Metrics']);
    expect(summaryMetrics).toContain('"MetricName":"Summaries"');
    expect(summaryMetrics).toContain('{"Name":"service","Value":"summary"},{"Name":"outcome","Value":"failed"}');
    expect([...referencedIds(summary['Metrics'])]).toEqual([functionNamed('summary')?.[0]]);
    for (const alarm of alarms) expect(alarm['AlarmActions']).toEqual([{ Ref: 'AlarmTopic' }]);
    const [[, subscription] = []] = resourcesOfType(template, 'AWS::SNS::Subscription');
    expect(subscription?.Condition).toBe('HasAlarmEmail');
    expect(conditionHolds(deploymentWith(), 'HasAlarmEmail')).toBe(false);
    expect(conditionHolds(deploymentWith({ AlarmEmail: 'ops@example.com' }), 'HasAlarmEmail')).toBe(true);
  });

  it('alarms on escalations whose wait could not be set (relay or delivery-retry) and on failed ones, by the metric the code writes', () => {
    const counted = (service: string, outcome: string) => ({
      Namespace: 'CostAlertRelay',
      MetricName: 'Escalations',
      Dimensions: [
        { Name: 'service', Value: service },
        { Name: 'outcome', Value: outcome },
      ],
    });
    // The outcomes are the code's own words (lib/metrics), so a renamed one cannot leave an alarm watching nothing.
    const outcomes: EscalationOutcome[] = ['unscheduled', 'failed'];
    const unscheduled = template.Resources['EscalationsUnscheduledAlarm']?.Properties ?? {};
    const metrics = unscheduled['Metrics'] as Array<{ Id: string; Expression?: string; MetricStat?: { Metric: unknown } }>;
    expect(metrics.find((m) => m.Expression)).toMatchObject({ Expression: 'FILL(relay, 0) + FILL(retry, 0)', ReturnData: true });
    expect(metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat?.Metric)).toEqual([
      counted('webhook-relay', outcomes[0]!),
      counted('delivery-retry', outcomes[0]!),
    ]);
    const failed = template.Resources['EscalationsFailedAlarm']?.Properties ?? {};
    expect(failed).toMatchObject({ ...counted('delivery-retry', outcomes[1]!), Statistic: 'Sum' });
    for (const alarm of [unscheduled, failed]) {
      expect(alarm).toMatchObject({
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: 'AlarmTopic' }],
      });
    }
  });

  it('a dashboard shows deliveries by outcome and type, queues, latency, parked alerts, rotations, errors, escalations and summaries', () => {
    const [[, dashboard] = []] = resourcesOfType(template, 'AWS::CloudWatch::Dashboard');
    const [body, variables] = (dashboard?.Properties?.['DashboardBody'] as { 'Fn::Sub': [string, Record<string, unknown>] } | undefined)?.[
      'Fn::Sub'
    ] ?? ['', {}];
    // What CloudFormation will substitute, so that the body is checked as the JSON CloudWatch receives.
    const json = JSON.parse(body.replace(/\$\{[^}]+\}/g, 'x')) as { widgets: Array<{ properties: { title: string; metrics: unknown } }> };
    expect(json.widgets.map((w) => w.properties.title)).toEqual([
      'Deliveries by outcome (relay and retries)',
      'Deliveries by chat service and outcome',
      'Queues: waiting and undelivered',
      'Relay answer latency (ms)',
      'Relay answers by status',
      'Parked alerts by reason',
      'API-key rotation steps',
      'Errors: functions and unreadable configuration',
      'Escalations by outcome (anomalies nobody picked up)',
      'Weekly summaries by destination type and outcome',
    ]);
    const metrics = JSON.stringify(json.widgets.map((w) => w.properties.metrics));
    for (const name of [
      'Deliveries',
      'AlertsParked',
      'Rotations',
      'AnswerLatency',
      'Answers',
      'ConfigurationUnavailable',
      'Escalations',
      'Summaries',
    ])
      expect(metrics).toContain(name);
    expect(Object.keys(variables)).toEqual(['DeliveryQueueName', 'DeadLetterQueueName']);
  });

  it('keeps undelivered alerts in encrypted queues, consumed with partial batch failures at bounded concurrency', () => {
    const queues = resourcesOfType(template, 'AWS::SQS::Queue');
    expect(queues).toHaveLength(2);
    for (const [, queue] of queues) expect(queue.Properties?.['SqsManagedSseEnabled']).toBe(true);
    const [[, delivery] = []] = queues.filter(([, q]) => q.Properties?.['RedrivePolicy']);
    const [[deadLetterId] = []] = queues.filter(([, q]) => !q.Properties?.['RedrivePolicy']);
    expect([
      ...referencedIds((delivery?.Properties?.['RedrivePolicy'] as Record<string, unknown> | undefined)?.['deadLetterTargetArn']),
    ]).toEqual([deadLetterId]);
    const [retryId] = functionNamed('delivery-retry') ?? [];
    const events = template.Resources[retryId as string]?.Properties?.['Events'] as Record<
      string,
      { Type: string; Properties: Record<string, unknown> }
    >;
    const [sqsEvent] = Object.values(events);
    expect(sqsEvent?.Type).toBe('SQS');
    expect(sqsEvent?.Properties['FunctionResponseTypes']).toEqual(['ReportBatchItemFailures']);
    expect((sqsEvent?.Properties['ScalingConfig'] as { MaximumConcurrency: number } | undefined)?.MaximumConcurrency).toBeLessThanOrEqual(
      5,
    );
    // Lambda's advice: the queue's visibility timeout at least six times the function timeout.
    const timeout = template.Resources[retryId as string]?.Properties?.['Timeout'] as number;
    expect(delivery?.Properties?.['VisibilityTimeout']).toBeGreaterThanOrEqual(6 * timeout);
  });

  it('outputs the URL to paste, the secret ARNs and the credentials command', () => {
    const outputs = template.Outputs ?? {};
    const apiRef = (id: string) => (id === apiId ? 'a1b2c3d4e5' : id);
    expect(evaluate({ ...deploymentWith(), resolveResource: apiRef }, outputs['WebhookUrl']?.Value)).toBe(
      'https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/webhook',
    );
    // The Slack app manifest: the repository's file, with this stack's interactivity URL filled in.
    const manifest = JSON.parse(String(evaluate({ ...deploymentWith(), resolveResource: apiRef }, outputs['SlackAppManifest']?.Value))) as {
      settings: { interactivity: { request_url: string } };
    };
    const file = JSON.parse(readFileSync(join(root, 'docs/slack-app-manifest.json'), 'utf8')) as typeof manifest;
    expect(manifest.settings.interactivity.request_url).toBe('https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/slack/interactions');
    expect({ ...manifest, settings: { ...manifest.settings, interactivity: file.settings.interactivity } }).toEqual(file);
    const secretOutputs = Object.values(outputs).flatMap((o) => ('Ref' in (o.Value as object) ? [(o.Value as { Ref: string }).Ref] : []));
    for (const [id, secret] of resourcesOfType(template, 'AWS::SecretsManager::Secret')) {
      if (!secret.Condition) expect(secretOutputs).toContain(id);
    }
    expect(outputs['BasicCredentialsCommand']?.Condition).toBe('UseBasicAuth');
  });
});

// A fresh Basic stack, end to end on loopback: the template's relay configuration in the
// Secrets Manager emulator, the built relay with the template's environment, and the
// credentials that the stack's output command prints.
describe.skipIf(!motoUrl())('a fresh Basic stack relays an alert (moto)', () => {
  const url = motoUrl() as string;
  let slack: FakeSlack;
  let relay: RunningBundle;
  let secretName: string;
  let config: { auth: { basic: { username: string; password: string } } };

  beforeAll(async () => {
    slack = await startFakeSlack();
    // The URL pattern demands https; the relay allows plain http to loopback for exactly this.
    const value = initialSecretString(deploymentWith({ DefaultDestinationUrl: slack.url() }), 'RelayConfigSecret');
    config = JSON.parse(value) as typeof config;
    secretName = await createSecret(secretsClient(url), value, 'cost-alert-relay/relay-config');
    const env = evaluate(deploymentWith(), environmentVariables(template, relayId as string)) as Record<string, string>;
    relay = await startBundle('webhook-relay', { ...env, RELAY_CONFIG_SECRET_ID: secretName, ...awsEnvironment(url) });
  });

  afterAll(async () => {
    await relay?.stop();
    await slack?.close();
  });

  const deliver = (authorization?: string) =>
    relay.invoke<{ statusCode: number; body: string }>(
      httpApiEvent({
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({
          metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-21T14:32:05Z' },
          payload: { title: 'Cost anomaly', message: 'EC2 rose', cloud_provider_type: 'aws', account_id: '1', account_name: 'P' },
        }),
      }),
      { timeoutMs: Number(effectiveFunctionProperties(template, relayId as string)['Timeout']) * 1000 },
    );
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  it('accepts a delivery with the generated credentials and posts it to Slack', async () => {
    const answer = await deliver(basic(config.auth.basic.username, config.auth.basic.password));
    expect(answer.statusCode).toBe(200);
    expect(slack.accepted()).toHaveLength(1);
  });

  it('refuses a delivery with a wrong password, and never logs the real one', async () => {
    const answer = await deliver(basic('relay', 'wrong'));
    expect(answer.statusCode).toBe(401);
    expect(relay.output()).not.toContain(config.auth.basic.password);
  });

  const aws = spawnSync('aws', ['--version'], { encoding: 'utf8' });
  it.skipIf(Boolean(aws.error))('the BasicCredentialsCommand output prints exactly those credentials', () => {
    const command = String(
      evaluate(
        { ...deploymentWith(), resolveResource: (id) => (id === 'RelayConfigSecret' ? secretName : id) },
        template.Outputs?.['BasicCredentialsCommand']?.Value,
      ),
    );
    const result = spawnSync('bash', ['-c', command], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...awsEnvironment(url) },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`username: ${config.auth.basic.username}\npassword: ${config.auth.basic.password}\n`);
  });
});

describe('operations', () => {
  const rotationResources = [
    'ApiKeyRotationFunction',
    'ApiKeyRotationLogGroup',
    'ApiKeyRotationInvokePermission',
    'ApiKeyRotationSchedule',
    'ApiKeySecret',
  ];
  const ownerResources = ['DirectorySyncFunction', 'DirectorySyncLogGroup', 'OwnerDirectoryStaleAlarm', 'OwnerDirectoryUnreadableAlarm'];

  /** The AssertDescriptions of the stack's Rules that a deploy with these parameters would fail. */
  const ruleFailures = (deployment: Deployment): string[] =>
    Object.values(template.Rules ?? {}).flatMap((rule) => {
      const { RuleCondition, Assertions } = rule as {
        RuleCondition?: unknown;
        Assertions: Array<{ Assert: unknown; AssertDescription: string }>;
      };
      if (RuleCondition !== undefined && evaluate(deployment, RuleCondition) !== true) return [];
      return Assertions.filter((a) => evaluate(deployment, a.Assert) !== true).map((a) => a.AssertDescription);
    });

  /** Resources and outputs outside `condition` that reference one of `ids`: a stack without them would not deploy. */
  /** A value as a stack without `conditions` has it: each `Fn::If` on one of them takes its other branch. */
  function withoutBranches(value: unknown, conditions: string[]): unknown {
    if (Array.isArray(value)) return value.map((item) => withoutBranches(item, conditions));
    if (typeof value !== 'object' || value === null) return value;
    const node = value as Record<string, unknown>;
    const branch = node['Fn::If'] as [string, unknown, unknown] | undefined;
    if (branch && conditions.includes(branch[0])) return withoutBranches(branch[2], conditions);
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, withoutBranches(v, conditions)]));
  }

  function danglingReferences(ids: string[], ...conditions: string[]): string[] {
    const dangling: string[] = [];
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Condition && conditions.includes(resource.Condition)) continue;
      for (const ref of referencedIds(withoutBranches(resource.Properties, conditions) as never))
        if (ids.includes(ref)) dangling.push(`${id} -> ${ref}`);
    }
    for (const [name, output] of Object.entries(template.Outputs ?? {})) {
      if (output.Condition && conditions.includes(output.Condition)) continue;
      for (const ref of referencedIds(output.Value)) if (ids.includes(ref)) dangling.push(`output ${name} -> ${ref}`);
    }
    return dangling;
  }

  it('API-key rotation is off unless asked for: the webhook URL alone deploys the relay', () => {
    expect(template.Parameters['ApiKeyRotation']?.Default).toBe('Disabled');
    const alertsOnly: Deployment = { template, parameters: { DefaultDestinationUrl: userParameters.DefaultDestinationUrl } };
    expect(conditionHolds(alertsOnly, 'RotateApiKey')).toBe(false);
    const required = Object.entries(template.Parameters)
      .filter(([, p]) => p.Default === undefined)
      .map(([name]) => name);
    expect(required).toEqual(['DefaultDestinationUrl']);
  });

  it('API-key rotation can be left out: no platform credentials asked, no rotation resources or outputs', () => {
    const relayOnly = deploymentWith({ ApiKeyRotation: 'Disabled', PlatformUsername: '', PlatformPassword: '', ApiKeyAccount: '' });
    expect(conditionHolds(relayOnly, 'RotateApiKey')).toBe(false);
    expect(conditionHolds(deploymentWith(), 'RotateApiKey')).toBe(true);
    const conditional = Object.entries(template.Resources)
      .filter(([, r]) => r.Condition === 'RotateApiKey')
      .map(([id]) => id);
    expect(conditional).toEqual(expect.arrayContaining(rotationResources));
    // Everything left references nothing that a relay-only stack lacks.
    expect(danglingReferences(rotationResources, 'RotateApiKey')).toEqual([]);
    expect(conditionHolds(relayOnly, 'UsePlatformLogin')).toBe(false);
    expect(danglingReferences(['PlatformCredentialsSecret'], 'RotateApiKey', 'RouteByOwner', 'UsePlatformLogin')).toEqual([]);
    expect(ruleFailures(relayOnly)).toEqual([]);
    // With rotation on, the platform settings are required by a rule, not by a pattern that would also bind relay-only users.
    const rule = JSON.stringify(template.Rules?.['RotationNeedsItsSettings']);
    for (const name of ['PlatformUsername', 'PlatformPassword', 'ApiKeyAccount']) {
      expect((template.Parameters[name] as { Default?: string }).Default).toBe('');
      expect(rule).toContain(name);
    }
  });

  it('owner routing is off unless asked for; on, it runs directory-sync with the rotation’s platform login, even without the rotation', () => {
    expect(template.Parameters['OwnerRouting']).toMatchObject({ Default: 'Disabled', AllowedValues: ['Enabled', 'Disabled'] });
    expect(conditionHolds(deploymentWith(), 'RouteByOwner')).toBe(false);
    for (const id of ownerResources)
      expect({ id, condition: template.Resources[id]?.Condition }).toEqual({ id, condition: 'RouteByOwner' });
    for (const name of ['DirectorySyncLogGroup', 'SyncDirectoryCommand']) expect(template.Outputs?.[name]?.Condition).toBe('RouteByOwner');
    expect(danglingReferences(ownerResources, 'RouteByOwner')).toEqual([]);

    const ownersOnly = deploymentWith({ ApiKeyRotation: 'Disabled', ApiKeyAccount: '', OwnerRouting: 'Enabled' });
    expect(conditionHolds(ownersOnly, 'RouteByOwner')).toBe(true);
    expect(conditionHolds(ownersOnly, 'RotateApiKey')).toBe(false);
    // The login secret exists, and the deploy needs the login: a rule says so, naming the parameter.
    expect(template.Resources['PlatformCredentialsSecret']?.Condition).toBe('UsePlatformLogin');
    expect(template.Outputs?.['PlatformCredentialsSecretArn']?.Condition).toBe('UsePlatformLogin');
    expect(conditionHolds(ownersOnly, 'UsePlatformLogin')).toBe(true);
    expect(JSON.parse(initialSecretString(ownersOnly, 'PlatformCredentialsSecret'))).toEqual({
      username: 'finops@example.com',
      password: 'platform-pass-1',
    });
    expect(ruleFailures(ownersOnly)).toEqual([]);
    expect(ruleFailures({ ...ownersOnly, parameters: { ...ownersOnly.parameters, PlatformUsername: '', PlatformPassword: '' } })).toEqual([
      'PlatformUsername is required when OwnerRouting is Enabled (or set OwnerRouting to Disabled).',
      'PlatformPassword is required when OwnerRouting is Enabled.',
    ]);

    // The same login parameters as the rotation, and the table the relay reads.
    const [directoryId] = functionNamed('directory-sync') ?? [];
    const [rotationId] = functionNamed('api-key-rotation') ?? [];
    const [[tableId] = []] = resourcesOfType(template, 'AWS::DynamoDB::Table');
    const { DEDUP_TABLE_NAME, ...login } = environmentVariables(template, directoryId as string);
    expect(login).toEqual(environmentVariables(template, rotationId as string));
    expect(DEDUP_TABLE_NAME).toEqual({ Ref: tableId });

    // On DirectorySchedule, hourly by default; a failed run waits for the next one rather than being retried at once.
    const properties = effectiveFunctionProperties(template, directoryId as string);
    expect(Object.values(properties['Events'] as Record<string, unknown>)).toEqual([
      { Type: 'Schedule', Properties: expect.objectContaining({ Schedule: { Ref: 'DirectorySchedule' } }) },
    ]);
    expect(template.Parameters['DirectorySchedule']?.Default).toBe('rate(1 hour)');
    expect(new RegExp(String(template.Parameters['DirectorySchedule']?.AllowedPattern)).test('cron(0 * * * ? *)')).toBe(true);
    expect(properties['EventInvokeConfig']).toEqual({ MaximumRetryAttempts: 0 });

    // The relay is told, so that every message names its account's cost centers, whatever the routes.
    expect(environmentVariables(template, relayId as string)['OWNER_ROUTING']).toEqual({ Ref: 'OwnerRouting' });
    expect(relayEnvironmentSchema.shape.OWNER_ROUTING.parse(undefined)).toBe('Disabled');
    expect((template.Parameters['OwnerRouting'] as { AllowedValues: string[] }).AllowedValues.sort()).toEqual(
      relayEnvironmentSchema.shape.OWNER_ROUTING.def.innerType.options.slice().sort(),
    );
  });

  it('SyncDirectoryCommand runs directory-sync once, waits for the whole run, and works with aws-cli v1 and v2', () => {
    const [directoryId] = functionNamed('directory-sync') ?? [];
    const properties = effectiveFunctionProperties(template, directoryId as string);
    // One run at a time: a second invocation meanwhile is refused, not run beside the first.
    expect(properties['ReservedConcurrentExecutions']).toBe(1);
    const command = String(
      evaluate(
        { ...deploymentWith({ OwnerRouting: 'Enabled' }), resolveResource: (id) => (id === directoryId ? 'relay-directory-sync' : id) },
        template.Outputs?.['SyncDirectoryCommand']?.Value,
      ),
    );
    const words = command.split(' ');
    // No retry of an invocation that is still running: the CLI's own attempts are one.
    expect(words[0]).toBe('AWS_MAX_ATTEMPTS=1');
    expect(words.slice(1, 4)).toEqual(['aws', 'lambda', 'invoke']);
    expect(words[words.indexOf('--function-name') + 1]).toBe('relay-directory-sync');
    // The CLI waits longer than the function may run (its default read timeout is 60 s, after which it invokes again).
    expect(Number(words[words.indexOf('--cli-read-timeout') + 1])).toBeGreaterThan(Number(properties['Timeout']));
    // Options aws-cli v1 does not know, and a payload it would send as base64 text, are not used.
    expect(command).not.toContain('--cli-binary-format');
    expect(command).not.toContain('--payload');
    expect(words.at(-1)).toBe('/dev/stdout');
  });

  it('an alarm when no directory-sync run has succeeded or continued for a day, whatever kept it from renewing', () => {
    const alarm = template.Resources['OwnerDirectoryStaleAlarm'];
    expect(alarm?.Condition).toBe('RouteByOwner');
    const p = alarm?.Properties ?? {};
    // The metric directory-sync writes (lib/metrics), for the two outcomes that renew what a run reached.
    const metrics = p['Metrics'] as Array<{ Id: string; Expression?: string; ReturnData: boolean; MetricStat?: unknown }>;
    const counted = (outcome: string) =>
      expect.objectContaining({
        Id: outcome,
        ReturnData: false,
        MetricStat: {
          Stat: 'Sum',
          Period: 3600,
          Metric: {
            Namespace: 'CostAlertRelay',
            MetricName: 'DirectorySyncs',
            Dimensions: [
              { Name: 'service', Value: 'directory-sync' },
              { Name: 'outcome', Value: outcome },
            ],
          },
        },
      });
    expect(metrics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Id: 'renewed', Expression: 'FILL(succeeded, 0) + FILL(continued, 0)', ReturnData: true }),
        counted('succeeded'),
        counted('continued'),
      ]),
    );
    expect(metrics).toHaveLength(3);
    expect(p).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      // No data (a crash, a timeout, a schedule that stopped) counts against it too.
      TreatMissingData: 'breaching',
    });
    expect(3600 * Number(p['EvaluationPeriods'])).toBe(86_400);
    expect(p['DatapointsToAlarm']).toBe(p['EvaluationPeriods']);
  });

  it('operational settings are stack parameters wired to the functions', () => {
    const [retryId] = functionNamed('delivery-retry') ?? [];
    expect(environmentVariables(template, relayId as string)).toMatchObject({
      RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS: { Ref: 'PreviousCredentialsGraceSeconds' },
      RELAY_CONFIG_TTL_SECONDS: { Ref: 'ConfigTtlSeconds' },
      POST_TIMEOUT_MS: { Ref: 'PostTimeoutMs' },
    });
    expect(environmentVariables(template, retryId as string)).toMatchObject({ DELIVERY_MAX_ATTEMPTS: { Ref: 'DeliveryMaxAttempts' } });
    expect(effectiveFunctionProperties(template, relayId as string)['Environment']).toMatchObject({
      Variables: { LOG_LEVEL: { Ref: 'LogLevel' } },
    });
  });

  it('every function runs nodejs24.x', () => {
    for (const [id] of functions)
      expect({ id, runtime: effectiveFunctionProperties(template, id)['Runtime'] }).toEqual({ id, runtime: 'nodejs24.x' });
  });

  it('outputs give both queue ARNs, the redrive command, the dashboard and every log group', () => {
    const outputs = template.Outputs ?? {};
    for (const name of [
      'DeliveryQueueArn',
      'UndeliveredQueueArn',
      'RedriveUndeliveredCommand',
      'DashboardUrl',
      'WebhookUrl',
      'RelayConfigSecretArn',
    ]) {
      expect(outputs).toHaveProperty(name);
    }
    const logGroups = resourcesOfType(template, 'AWS::Logs::LogGroup')
      .map(([id]) => id)
      .sort();
    const logOutputs = Object.values(outputs)
      .flatMap((o) => [...referencedIds((o as { Value: never }).Value)])
      .filter((id) => logGroups.includes(id))
      .sort();
    expect(logOutputs).toEqual(logGroups);
  });

  it('the dedup table: key id, TTL expiresAt, on demand, encrypted, given to the relay and delivery-retry', () => {
    const [[tableId, table] = []] = resourcesOfType(template, 'AWS::DynamoDB::Table');
    expect(table?.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: expect.arrayContaining([{ AttributeName: 'id', AttributeType: 'S' }]),
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    const [retryId] = functionNamed('delivery-retry') ?? [];
    for (const id of [relayId as string, retryId as string]) {
      expect(environmentVariables(template, id)).toMatchObject({
        DEDUP_TABLE_NAME: { Ref: tableId },
        DEDUP_WINDOW_SECONDS: { Ref: 'DedupWindowSeconds' },
      });
    }
    expect((template.Parameters['DedupWindowSeconds'] as { Default: number }).Default).toBe(86_400);
  });

  it('the dedup table declares the sparse summaries index the code queries, projecting what a summary shows', () => {
    const [[, table] = []] = resourcesOfType(template, 'AWS::DynamoDB::Table');
    const properties = table?.Properties as {
      AttributeDefinitions: Array<{ AttributeName: string; AttributeType: string }>;
      GlobalSecondaryIndexes: Array<{
        IndexName: string;
        KeySchema: unknown;
        Projection: { ProjectionType: string; NonKeyAttributes: string[] };
      }>;
    };
    expect(properties.AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: SUMMARY_DESTINATION, AttributeType: 'S' },
        { AttributeName: SUMMARY_FIRST_SEEN, AttributeType: 'N' },
      ]),
    );
    const [index] = properties.GlobalSecondaryIndexes;
    expect(index).toMatchObject({
      IndexName: SUMMARY_INDEX,
      KeySchema: [
        { AttributeName: SUMMARY_DESTINATION, KeyType: 'HASH' },
        { AttributeName: SUMMARY_FIRST_SEEN, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE' },
    });
    expect([...(index?.Projection.NonKeyAttributes ?? [])].sort()).toEqual([...SUMMARY_ATTRIBUTES].sort());
  });

  it('the summary function runs every hour on the hour, with the table, the configuration and the link key; a failed run is not retried at once', () => {
    const [summaryId] = functionNamed('summary') ?? [];
    const properties = effectiveFunctionProperties(template, summaryId as string);
    expect(Object.values(properties['Events'] as Record<string, unknown>)).toEqual([
      { Type: 'Schedule', Properties: expect.objectContaining({ Schedule: 'cron(0 * * * ? *)' }) },
    ]);
    expect(properties['EventInvokeConfig']).toEqual({ MaximumRetryAttempts: 0 });
    expect(environmentVariables(template, summaryId as string)).toMatchObject({
      RELAY_CONFIG_SECRET_ID: { Ref: 'RelayConfigSecret' },
      DEDUP_TABLE_NAME: { Ref: 'DedupTable' },
      TRIAGE_KEY_SECRET_ID: { Ref: 'TriageKeySecret' },
    });
    expect(template.Outputs?.['SummaryFunctionName']?.Value).toEqual({ Ref: summaryId });
  });

  it('what deleting the stack does to secrets, queues and the dedup table is decided explicitly', () => {
    for (const [id, resource] of [
      ...resourcesOfType(template, 'AWS::SecretsManager::Secret'),
      ...resourcesOfType(template, 'AWS::SQS::Queue'),
      ...resourcesOfType(template, 'AWS::DynamoDB::Table'),
    ]) {
      if (id === 'RelayBasicPasswordSecret') continue;
      expect({ id, deletion: resource.DeletionPolicy, replace: resource.UpdateReplacePolicy }).toEqual({
        id,
        deletion: 'Delete',
        replace: 'Delete',
      });
    }
  });
});
