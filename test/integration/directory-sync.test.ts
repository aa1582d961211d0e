import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeAccount, type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { emfRecords } from '../helpers/memory-metrics.js';
import { createDedupTable } from '../helpers/relay-stack.js';

const url = motoUrl();

/** One payer names its linked accounts in v2 (as strings and objects), one only in v1, one is Azure with `linkedAccountsIds`. */
const PAYERS: FakeAccount[] = [
  {
    accountKey: 12345,
    accountId: '123456789012',
    accountName: 'Production payer',
    cloudTypeId: 0,
    costCenters: [
      { id: 'cc-100', name: 'Data Platform', linkedAccounts: ['111111111111', { linkedAccountId: '222222222222' }] },
      { id: 7, name: 'Web shop', linkedAccounts: [222222222222] },
      { id: 'cc-150', name: 'Mobile', linkedAccounts: [{ accountId: '444444444444' }] },
    ],
  },
  {
    accountKey: 67890,
    accountId: '210987654321',
    accountName: 'Staging payer',
    cloudTypeId: 0,
    // It shares one account with the first payer.
    costCenters: [{ id: 'cc-300', name: 'QA', v1LinkedAccounts: ['333333333333', '111111111111'] }],
  },
  {
    accountKey: 24680,
    accountId: 'sub-azure-0001',
    accountName: 'Azure EA',
    cloudTypeId: 1,
    costCenters: [{ id: 'az-1', name: 'Analytics', linkedAccountsIds: [{ accountId: 'sub-0002' }] }],
  },
];

const scheduledEvent = {
  version: '0',
  id: 'e5d2c1f0-0000-4000-8000-000000000001',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-11-26T13:00:00Z',
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/cost-alert-relay-DirectorySyncSchedule'],
  detail: {},
};

type Item = Record<string, { S?: string; N?: string; L?: Array<{ M: Record<string, { S: string }> }> }>;

describe.skipIf(!url)('directory-sync (built bundle, loopback platform, DynamoDB in moto)', () => {
  let platform: FakePlatform;
  let bundle: RunningBundle;
  let table: { name: string; dynamo: DynamoDBClient };
  let environment: Record<string, string>;
  const answers: unknown[] = [];

  beforeAll(async () => {
    // Two records a page, so the payer accounts and the first payer's list come in pages; both
    // runs' requests together stay within one window of the pace (lib/directory/pace.ts), so no run waits.
    platform = await startFakePlatform({ accounts: structuredClone(PAYERS), costCentersEnvelope: 'data', pageSize: 2 });
    const secretId = await createSecret(
      secretsClient(url!),
      { username: platform.username, password: platform.password },
      'platform-credentials',
    );
    table = await createDedupTable(url!);
    environment = {
      ...awsEnvironment(url!),
      COST_API_BASE_URL: platform.url,
      COST_API_CREDENTIALS_SECRET_ID: secretId,
      COST_API_TIMEOUT_MS: '2000',
      COST_API_MAX_ATTEMPTS: '2',
      DEDUP_TABLE_NAME: table.name,
    };
    bundle = await startBundle('directory-sync', environment);
  });
  afterAll(async () => {
    await bundle?.stop();
    await platform?.close();
  });

  const run = async () => {
    const answer = await bundle.invoke<{ outcome: string; skipped: Array<{ payer: string; reason: string }> }>(scheduledEvent, {
      timeoutMs: 60_000,
    });
    answers.push(answer);
    return answer;
  };
  const items = async (): Promise<Record<string, Item>> => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name }));
    return Object.fromEntries(Items.map((item) => [String(item['id']?.S), item as Item]));
  };
  const costCentersOf = (item: Item | undefined) => item?.['costCenters']?.L?.map((c) => [c.M['id']?.S, c.M['name']?.S]);

  /** Searched for the configured password, the user key and every token the platform issued. */
  async function expectNoSecrets(): Promise<void> {
    const texts = [bundle.output(), JSON.stringify(await items()), JSON.stringify(answers)];
    for (const text of texts) {
      expect(text).not.toContain(platform.password);
      expect(text).not.toContain(platform.userKey);
      for (const token of platform.issuedTokens) expect(text).not.toContain(token);
    }
  }

  it('writes one owner# item per linked cloud account: its cost centers and when they were read, expiring three days later', async () => {
    const answer = await run();
    expect(answer).toMatchObject({ outcome: 'succeeded', payers: 3, payersRead: 3, v1Fallbacks: 1, accountsWritten: 5 });
    const written = await items();
    expect(Object.keys(written).sort()).toEqual([
      'directory#last-run',
      'directory#payer#12345',
      'directory#payer#24680',
      'directory#payer#67890',
      'owner#111111111111',
      'owner#222222222222',
      'owner#333333333333',
      'owner#444444444444',
      'owner#sub-0002',
    ]);
    // Each payer's part names its account key, for the functions that call the platform per account.
    const payers = written['owner#111111111111']?.['payers'] as unknown as { M: Record<string, { M: { accountKey: { S: string } } }> };
    expect(Object.entries(payers.M).map(([key, part]) => [key, part.M.accountKey.S])).toEqual([
      ['12345', '12345'],
      ['67890', '67890'],
    ]);
    expect(written['directory#last-run']).toMatchObject({ outcome: { S: 'succeeded' }, accountsWritten: { N: '5' } });
    expect(costCentersOf(written['owner#222222222222'])).toEqual([
      ['7', 'Web shop'],
      ['cc-100', 'Data Platform'],
    ]);
    expect(costCentersOf(written['owner#333333333333'])).toEqual([['cc-300', 'QA']]);
    expect(costCentersOf(written['owner#111111111111'])).toEqual([
      ['cc-100', 'Data Platform'],
      ['cc-300', 'QA'],
    ]);
    for (const item of Object.values(written).filter((i) => i['id']?.S?.startsWith('owner#'))) {
      expect(Object.keys(item).sort()).toEqual(['costCenters', 'expiresAt', 'id', 'payers', 'readAt']);
      expect(Math.abs(Number(item['readAt']?.N) - Date.now() / 1000)).toBeLessThan(60);
      expect(Number(item['expiresAt']?.N) - Number(item['readAt']?.N)).toBe(3 * 86_400);
    }
    // Each payer's list with its own key; the one whose v2 list named nobody was read from v1.
    const lists = platform.requests.filter((r) => r.path.includes('cost-centers'));
    expect(lists.filter((r) => r.query['token'])).toHaveLength(1);
    expect(new Set(lists.map((r) => `${r.path} ${r.headers['apikey']}`))).toEqual(
      new Set([
        ...['12345', '67890', '24680'].map((k) => `/api/v2/user-management/cost-centers/management/list ${platform.userKey}:${k}:`),
        `/api/v1/users/cost-centers ${platform.userKey}:67890:`,
      ]),
    );
    expect(emfRecords(bundle.output().split('\n'))).toContainEqual(
      expect.objectContaining({ service: 'directory-sync', outcome: 'succeeded', DirectorySyncs: 1 }),
    );
    await expectNoSecrets();
  });

  it('a run where one payer’s list fails keeps that payer’s accounts’ items, and its part of shared ones, and updates the others', async () => {
    const before = await items();
    platform.accounts[0]!.costCenters[0]!.name = 'Data Platform (renamed)';
    platform.accounts[2]!.costCenters[0]!.linkedAccountsIds = [{ accountId: 'sub-0002' }, { id: 'sub-0003' }];
    platform.setBehaviour('costCentersV1', { kind: 'error', status: 503 }, 67890);

    const answer = await run();
    expect(answer).toMatchObject({ outcome: 'partial', payersRead: 2, payersSkipped: 1, accountsWritten: 5 });
    expect(answer.skipped).toEqual([expect.objectContaining({ payer: '67890', reason: 'platform_unavailable' })]);
    const after = await items();
    expect(after['owner#333333333333']).toEqual(before['owner#333333333333']);
    expect(costCentersOf(after['owner#111111111111'])).toEqual([
      ['cc-100', 'Data Platform (renamed)'],
      ['cc-300', 'QA'],
    ]);
    expect(costCentersOf(after['owner#sub-0003'])).toEqual([['az-1', 'Analytics']]);
    // The log says which payer it skipped and why, in words.
    expect(bundle.logRecords()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'payer skipped: its accounts keep their records as they were',
        payer: '67890',
        payerName: 'Staging payer',
        why: expect.stringContaining('the older cost-centers list (GET /api/v1/users/cost-centers) failed: the platform answered HTTP 503'),
      }),
    );
    expect(emfRecords(bundle.output().split('\n'))).toContainEqual(
      expect.objectContaining({ service: 'directory-sync', outcome: 'partial', DirectorySyncs: 1 }),
    );
    await expectNoSecrets();
  });

  it('a run stopped by a 429 keeps where it stopped in directory#cursor, and the next run starts there', async () => {
    // A container of its own, so that its pace has room for both runs.
    await bundle.stop();
    bundle = await startBundle('directory-sync', environment);
    platform.reset();
    platform.setBehaviour('costCenters', { kind: 'rate_limited', retryAfter: '600' }, 67890);
    const stopped = await run();
    expect(stopped.skipped.map((p) => [p.payer, p.reason])).toEqual([
      ['67890', 'rate_limited'],
      ['24680', 'rate_limited'],
    ]);
    const cursor = (await items())['directory#cursor'];
    expect(Object.keys(cursor ?? {}).sort()).toEqual(['expiresAt', 'id', 'nextPayer']);
    expect(cursor?.['nextPayer']?.S).toBe('67890');

    platform.reset();
    expect(await run()).toMatchObject({ outcome: 'succeeded', payersRead: 3 });
    const lists = platform.requests.filter((r) => r.path.includes('cost-centers') && !r.query['token']);
    expect(lists.map((r) => r.headers['apikey'])).toEqual(['67890', '67890', '24680', '12345'].map((key) => `${platform.userKey}:${key}:`));
    await expectNoSecrets();
  });

  it('an account taken out of its cost center loses that payer’s part in the same run, and its item goes when none is left', async () => {
    // A container of its own, so that its pace has room for both runs.
    await bundle.stop();
    bundle = await startBundle('directory-sync', environment);
    platform.reset();
    expect(await run()).toMatchObject({ outcome: 'succeeded', payersRead: 3 });
    // The first payer no longer covers 444444444444 (only it did), nor 111111111111 (the second payer still does).
    platform.accounts[0]!.costCenters = platform.accounts[0]!.costCenters.filter((c) => c.id !== 'cc-150');
    platform.accounts[0]!.costCenters[0]!.linkedAccounts = [{ linkedAccountId: '222222222222' }];
    const answer = await run();
    expect(answer).toMatchObject({ outcome: 'succeeded', accountsRemoved: 1 });
    const after = await items();
    expect(after['owner#444444444444']).toBeUndefined();
    expect(costCentersOf(after['owner#111111111111'])).toEqual([['cc-300', 'QA']]);
    expect(JSON.parse(String(after['directory#payer#12345']?.['data']?.S)).accounts).toEqual(['222222222222']);
    await expectNoSecrets();
  });
});
