// `npm run config -- explain` and `npm run owners`: which destinations an account's alerts reach,
// and why, from an owners file or a deployed stack's owner directory (moto), without posting.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { startAwsProxy } from '../helpers/aws-proxy.js';
import { createDedupTable } from '../helpers/relay-stack.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const moto = motoUrl();

const DATA_HOOK = 'https://x.logic.azure.com/workflows/data?sig=DATA-HOOK-SECRET';
const DEFAULT_HOOK = 'https://hooks.slack.com/services/T0/B0/DEFAULT-HOOK-SECRET';
const config = {
  auth: { method: 'none' },
  destinations: { default: { url: DEFAULT_HOOK }, data: { type: 'teams', url: DATA_HOOK } },
  routes: [{ when: { costCenter: ['data platform'] }, to: ['data'] }],
};
const SECRETS = ['DATA-HOOK-SECRET', 'DEFAULT-HOOK-SECRET'];

function run(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(tsx, [join(root, 'scripts', script), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('checking the routing by cost center before an anomaly happens', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'owners-'));
    await writeFile(join(dir, 'relay.json'), JSON.stringify(config));
    const byCloud = {
      ...config,
      routes: [
        ...config.routes,
        { when: { cloudProvider: ['AWS'], accountId: ['123456789012'] }, to: ['default', 'data'] },
        { when: { cloudProvider: ['azure'] }, to: ['data'] },
      ],
    };
    await writeFile(join(dir, 'relay-by-cloud.json'), JSON.stringify(byCloud));
    await writeFile(join(dir, 'bad-delivery.json'), JSON.stringify({ metadata: {}, payload: { title: 'x' } }));
    // Two payers give id 7 to different cost centers.
    await writeFile(
      join(dir, 'owners-two-payers.json'),
      JSON.stringify({
        accounts: {
          '012345678901': [{ id: '7', name: 'Data Platform', payer: '12345' }],
          '210987654321': [{ id: '7', name: 'Marketing', payer: '67890' }],
        },
      }),
    );
    const byId = (entry: string) => ({ ...config, routes: [{ when: { costCenter: [entry] }, to: ['data'] }] });
    await writeFile(join(dir, 'relay-by-id.json'), JSON.stringify(byId('7')));
    await writeFile(join(dir, 'relay-by-payer-id.json'), JSON.stringify(byId('12345:7')));
    await writeFile(
      join(dir, 'numeric-account.json'),
      JSON.stringify({
        metadata: { object_type: 'anomaly_alert' },
        payload: { title: 'EC2 up', account_id: 12345678901, cloud_provider_type: 'AWS' },
      }),
    );
  });

  it('explain says which destination a delivery reaches and which route sends it, by the owners file; no URL shown', async () => {
    const sample = join(root, 'events/anomaly-alert.json');
    const owners = join(root, 'events/owners/sample.json');
    const routed = await run('config.ts', ['explain', join(dir, 'relay.json'), sample, '--owners', owners]);
    expect(routed.code).toBe(0);
    expect(routed.out).toContain('cost centers: Data Platform (cc-42)');
    expect(routed.out).toMatch(/data \(teams\): route 1 \(costCenter data platform\)/);
    expect(routed.out).not.toContain('default (slack)');
    // Without a directory the cost-center route cannot match: the delivery goes to default, and the output says why.
    const unknown = await run('config.ts', ['explain', join(dir, 'relay.json'), sample]);
    expect(unknown.out).toContain('cost-center routes do not match');
    expect(unknown.out).toContain('default (slack): no route matched');
    const bad = await run('config.ts', ['explain', join(dir, 'relay.json'), join(dir, 'bad-delivery.json')]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('metadata.object_type');
    expect(bad.out).toContain('(it answers 422)');
    // A body that is not JSON is answered 400 by the relay, and explain says so.
    const notJson = await run('config.ts', ['explain', join(dir, 'relay.json'), join(root, 'events/bad/not-json.txt')]);
    expect(notJson.code).toBe(1);
    expect(notJson.out).toContain('(it answers 400): it is not valid JSON');
    // Its hint names explain, not another command.
    const noFile = await run('config.ts', ['explain']);
    expect(noFile.out).toContain('npm run config -- explain relay.config.json events/anomaly-alert.json');
    expect(noFile.out).not.toContain('-- validate');
    for (const secret of SECRETS) expect(routed.out + unknown.out + bad.out).not.toContain(secret);
  });

  it('explain says when a route’s id is one that several payers use, and how to name the payer’s; a numeric id is looked up with its zero', async () => {
    const delivery = join(dir, 'numeric-account.json');
    const owners = join(dir, 'owners-two-payers.json');
    const bare = await run('config.ts', ['explain', join(dir, 'relay-by-id.json'), delivery, '--owners', owners]);
    expect(bare.code).toBe(0);
    expect(bare.out).toContain('account 12345678901 (looked up as 012345678901)');
    expect(bare.out).toContain('cost centers: Data Platform (12345:7)');
    expect(bare.out).toContain(
      'note: costCenter "7" is an id that more than one payer gives a cost center, so by itself it matches none; name it with its payer\'s account key (12345:7) or by its name',
    );
    expect(bare.out).toContain('default (slack): no route matched');
    const qualified = await run('config.ts', ['explain', join(dir, 'relay-by-payer-id.json'), delivery, '--owners', owners]);
    expect(qualified.out).toContain('data (teams): route 1 (costCenter 12345:7)');
    expect(qualified.out).not.toContain('note:');
    const listed = await run('owners.ts', ['--owners', owners, '--config', join(dir, 'relay-by-payer-id.json')]);
    expect(listed.out).toContain('012345678901: Data Platform (12345:7) -> data (teams)');
    expect(listed.out).toContain('210987654321: Marketing (67890:7) -> default (slack)');
  });

  it('owners lists every account, its cost centers and where its alerts go', async () => {
    const listed = await run('owners.ts', ['--owners', join(root, 'events/owners/sample.json'), '--config', join(dir, 'relay.json')]);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain('123456789012: Data Platform (cc-42) -> data (teams)');
    expect(listed.out).toContain('210987654321: Finance (cc-7), Data Platform (cc-42) -> data (teams)');
    expect((await run('owners.ts', ['--owners', 'x.json'])).code).toBe(2);
    for (const secret of SECRETS) expect(listed.out).not.toContain(secret);
  });

  it('owners says where alerts go from each cloud provider when routes by provider send them elsewhere', async () => {
    const listed = await run('owners.ts', [
      '--owners',
      join(root, 'events/owners/sample.json'),
      '--config',
      join(dir, 'relay-by-cloud.json'),
    ]);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(
      '123456789012: Data Platform (cc-42) -> by cloud provider: AWS: data (teams), default (slack); azure: data (teams); any other: data (teams)',
    );
    // Where every provider leads to the same place, one answer.
    expect(listed.out).toContain('210987654321: Finance (cc-7), Data Platform (cc-42) -> data (teams)\n');
  });

  it.skipIf(!moto)("owners --stack and explain --stack read the stack's owner directory and live configuration", async () => {
    const table = await createDedupTable(moto as string);
    const item = (account: string, costCenters: Array<{ id: string; name: string }>, expiresAt: number) =>
      table.dynamo.send(
        new PutItemCommand({
          TableName: table.name,
          Item: {
            id: { S: `owner#${account}` },
            costCenters: { L: costCenters.map(({ id, name }) => ({ M: { id: { S: id }, name: { S: name } } })) },
            readAt: { N: String(expiresAt - 3 * 86_400) },
            expiresAt: { N: String(expiresAt) },
          },
        }),
      );
    const soon = Math.floor(Date.now() / 1000) + 86_400;
    await item('123456789012', [{ id: 'cc-42', name: 'Data Platform' }], soon);
    await item('555555555555', [{ id: 'cc-9', name: 'Marketing' }], soon);
    // Expired an hour ago; TTL deletes lazily, and the relay no longer routes by it.
    await item('666666666666', [{ id: 'cc-42', name: 'Data Platform' }], soon - 86_400 - 3_600);
    // Other items in the table are not owners.
    await table.dynamo.send(new PutItemCommand({ TableName: table.name, Item: { id: { S: 'anomaly#x' }, firstSeen: { N: '1' } } }));
    // The last run, as directory-sync keeps it: it failed three hours ago.
    const ranAt = Math.floor(Date.now() / 1000) - 3 * 3_600;
    await table.dynamo.send(
      new PutItemCommand({
        TableName: table.name,
        Item: {
          id: { S: 'directory#last-run' },
          at: { N: String(ranAt) },
          outcome: { S: 'failed' },
          ...Object.fromEntries(
            ['payers', 'payersRead', 'payersSkipped', 'accountsWritten', 'accountsRemoved', 'accountsNotWritten'].map((n) => [
              n,
              { N: '0' },
            ]),
          ),
          expiresAt: { N: String(ranAt + 30 * 86_400) },
        },
      }),
    );
    const configId = await createSecret(secretsClient(moto as string), config, 'relay-config');
    const stackName = `relay-${randomUUID()}`;
    const cloudformation = new CloudFormationClient({
      endpoint: moto,
      region: 'us-east-1',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await cloudformation.send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
          Outputs: { DedupTableName: { Value: table.name }, RelayConfigSecretArn: { Value: configId } },
        }),
      }),
    );
    cloudformation.destroy();
    const env = awsEnvironment(moto as string);
    const proxy = await startAwsProxy(moto as string);
    const listed = await run('owners.ts', ['--stack', stackName], { ...env, AWS_ENDPOINT_URL: proxy.url }).finally(() => proxy.close());
    expect(listed.code).toBe(0);
    // One DescribeStacks (CloudFormation's query protocol has no target) for both the table and the configuration.
    expect(proxy.count('none')).toBe(1);
    expect(listed.out).toContain('2 accounts');
    // Each record's age: these were read two days ago, and expire in one.
    expect(listed.out).toContain('123456789012: Data Platform (cc-42) -> data (teams); read 48 h ago, expires in 24 h');
    expect(listed.out).toContain('555555555555: Marketing (cc-9) -> default (slack); read 48 h ago, expires in 24 h');
    expect(listed.out).not.toContain('666666666666');
    expect(listed.out).toMatch(
      /directory-sync last ran 3 h ago \(.*Z\): failed; 0 of 0 payers read, 0 accounts written\. Records are renewed only/,
    );
    const explained = await run(
      'config.ts',
      ['explain', join(dir, 'relay.json'), join(root, 'events/anomaly-alert.json'), '--stack', stackName],
      env,
    );
    expect(explained.out).toContain('data (teams): route 1');
    expect(explained.out).toContain('cost centers: Data Platform (cc-42) (read 48 h ago, expires in 24 h)');
    expect(explained.out).toContain('directory-sync last ran 3 h ago');
    for (const secret of SECRETS) expect(listed.out + explained.out).not.toContain(secret);
  });
});
