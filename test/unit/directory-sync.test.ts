import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readPlatformCredentials } from '../../lib/api-key/credentials.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { type CostApiClientOptions, createCostApiClient } from '../../lib/cost-api/client.js';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { cloudAccountIdOf } from '../../lib/directory/coverage.js';
import type { SyncCursor } from '../../lib/directory/cursor.js';
import { createDirectorySyncFromEnvironment } from '../../lib/directory/from-environment.js';
import type { LastRun, LastRunStore } from '../../lib/directory/last-run.js';
import { type Pace, windowPacer } from '../../lib/directory/pace.js';
import type { PayerIndex, PayerIndexStore } from '../../lib/directory/payer-index.js';
import { createDirectorySync, type DirectorySyncLimits, type DirectorySyncSummary } from '../../lib/directory/sync.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { type OwnerRecord, type OwnerStore, ownersOfRecord } from '../../lib/owners/directory.js';
import { routeFacts, selectDestinations } from '../../lib/routing/route.js';
import { invocationBudget } from '../../lib/shared/deadline.js';
import { type FakeAccount, type FakePlatform, type PlatformBehaviour, startFakePlatform } from '../helpers/cost-platform.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const COST_CENTERS_PATH = '/api/v2/user-management/cost-centers/management/list';
const V1_PATH = '/api/v1/users/cost-centers';
const ACCOUNTS_PATH = '/api/v2/user-management/accounts/data-access/payer-accounts';

/**
 * Three payers: the first names its linked accounts in the v2 list (as strings, a number and an
 * object), the second names none there (so the v1 list is read), the third is an Azure payer that
 * uses `linkedAccountsIds` with objects carrying `accountId` or `id`.
 */
const PAYERS: FakeAccount[] = [
  {
    accountKey: 12345,
    accountId: '123456789012',
    accountName: 'Production payer',
    cloudTypeId: 0,
    costCenters: [
      { id: 'cc-100', name: 'Data Platform', linkedAccounts: ['111111111111', 222222222222] },
      { id: 'cc-200', name: 'Web shop', linkedAccounts: [{ linkedAccountId: '222222222222', linkedAccountName: 'Shop' }] },
    ],
  },
  {
    accountKey: 67890,
    accountId: '210987654321',
    accountName: 'Staging payer',
    cloudTypeId: 0,
    costCenters: [{ id: 300, name: 'QA', v1LinkedAccounts: ['333333333333'] }],
  },
  {
    accountKey: 24680,
    accountId: 'sub-azure-0001',
    accountName: 'Azure EA',
    cloudTypeId: 1,
    costCenters: [{ id: 'az-1', name: 'Analytics', linkedAccountsIds: [{ accountId: 'sub-0002' }, { id: 'sub-0003' }] }],
  },
];

/** What a full run of PAYERS writes, account by account. */
const DIRECTORY: Record<string, Array<{ id: string; name: string }>> = {
  '111111111111': [{ id: 'cc-100', name: 'Data Platform' }],
  '222222222222': [
    { id: 'cc-100', name: 'Data Platform' },
    { id: 'cc-200', name: 'Web shop' },
  ],
  '333333333333': [{ id: '300', name: 'QA' }],
  'sub-0002': [{ id: 'az-1', name: 'Analytics' }],
  'sub-0003': [{ id: 'az-1', name: 'Analytics' }],
};

let platform: FakePlatform;

beforeAll(async () => {
  platform = await startFakePlatform({ accounts: structuredClone(PAYERS) });
});
afterAll(() => platform.close());
beforeEach(() => {
  platform.reset();
  platform.accounts.splice(0, platform.accounts.length, ...structuredClone(PAYERS));
});

/** The OwnerStore in memory: the table's `owner#` items, every write in order, and the accounts removed. */
function memoryStore(): OwnerStore & { items: Map<string, OwnerRecord>; writes: OwnerRecord[]; removed: string[] } {
  const items = new Map<string, OwnerRecord>();
  const writes: OwnerRecord[] = [];
  const removed: string[] = [];
  return {
    items,
    writes,
    removed,
    async read(accountId) {
      return structuredClone(items.get(accountId));
    },
    async write(record) {
      writes.push(record);
      items.set(record.accountId, structuredClone(record));
    },
    async remove(accountId) {
      removed.push(accountId);
      items.delete(accountId);
    },
  };
}

/** The PayerIndexStore in memory, by payer account key. */
function memoryIndex(): PayerIndexStore & { items: Map<string, PayerIndex> } {
  const items = new Map<string, PayerIndex>();
  return {
    items,
    async read(accountKey) {
      return structuredClone(items.get(accountKey));
    },
    async write(accountKey, index) {
      items.set(accountKey, structuredClone(index));
    },
  };
}

/** The LastRunStore in memory: every run's, in order. */
function memoryLastRun(): LastRunStore & { runs: LastRun[] } {
  const runs: LastRun[] = [];
  return {
    runs,
    async write(run) {
      runs.push(run);
    },
  };
}

/** The SyncCursor in memory; undefined until a run stops early. */
function memoryCursor(): SyncCursor & { next: string | undefined } {
  return {
    next: undefined,
    async read() {
      return this.next;
    },
    async write(payer) {
      this.next = payer;
    },
  };
}

interface SetupOptions {
  limits?: Partial<DirectorySyncLimits>;
  client?: Partial<CostApiClientOptions>;
  store?: OwnerStore;
  cursor?: SyncCursor;
  payerIndex?: PayerIndexStore;
  pace?: Pace;
  password?: string;
  /** A clock ahead of the machine's by what the fake sleep has "slept". */
  virtualTime?: boolean;
}

function setup(options: SetupOptions = {}) {
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const store = options.store ?? memoryStore();
  const cursor = options.cursor ?? memoryCursor();
  const payerIndex = options.payerIndex ?? memoryIndex();
  const lastRun = memoryLastRun();
  let offset = 0;
  const now = () => Date.now() + offset;
  const sleep = async (ms: number) => {
    offset += ms;
  };
  const pacer = options.pace ? windowPacer(options.pace, now, options.virtualTime ? sleep : undefined) : undefined;
  const requestTimes: number[] = [];
  const client = createCostApiClient({
    baseUrl: platform.url,
    timeoutMs: 1_000,
    maxAttempts: 2,
    backoffBaseMs: 10,
    logger: log.logger,
    fetch: (url, init) => {
      requestTimes.push(now());
      return globalThis.fetch(url, init);
    },
    ...(pacer ? { pace: pacer.take } : {}),
    ...options.client,
  });
  const sync = createDirectorySync({
    platform: client,
    readCredentials: async () => ({ username: platform.username, password: options.password ?? platform.password }),
    store,
    cursor,
    payerIndex,
    lastRun,
    logger: log.logger,
    metrics,
    now,
    ...(pacer ? { paceDelayMs: pacer.delayMs } : {}),
    limits: { writeReserveMs: 300, callFloorMs: 100, writeFloorMs: 100, ...options.limits },
  });
  /** One run with `ms` of invocation time. */
  const run = (ms = 20_000) => {
    const end = now() + ms;
    return sync(invocationBudget({ getRemainingTimeInMillis: () => end - now() }, 50));
  };
  return { run, log, metrics, store, payerIndex, lastRun, requestTimes, now };
}

const directoryOf = (store: { items: Map<string, OwnerRecord> }) =>
  Object.fromEntries([...store.items.values()].map((r) => [r.accountId, r.costCenters]));

/** Nothing the platform issued or the operator typed appears in a log line, a record or the summary. */
function expectNoSecrets(...texts: unknown[]): void {
  for (const text of texts.map((t) => (typeof t === 'string' ? t : JSON.stringify(t)))) {
    expect(text).not.toContain(platform.password);
    expect(text).not.toContain(platform.userKey);
    for (const token of platform.issuedTokens) expect(text).not.toContain(token);
  }
}

const listRequests = (path = COST_CENTERS_PATH) => platform.requests.filter((r) => r.path === path);

describe('directory-sync reads the directory', () => {
  it('signs in, reads each payer with <user_key>:<accountKey>: and writes one record per linked cloud account', async () => {
    const s = setup();
    const summary = await s.run();
    expect(summary).toMatchObject({
      outcome: 'succeeded',
      payers: 3,
      payersRead: 3,
      payersSkipped: 0,
      skipped: [],
      accountsWritten: 5,
      accountsNotWritten: 0,
    });
    expect(directoryOf(s.store as ReturnType<typeof memoryStore>)).toEqual(DIRECTORY);
    const token = platform.issuedTokens.at(-1);
    expect(listRequests().map((r) => [r.headers['apikey'], r.headers['authorization'], r.headers['accept']])).toEqual(
      ['12345', '67890', '24680'].map((key) => [`${platform.userKey}:${key}:`, token, 'application/json']),
    );
    // Read when the lists answered; each expires three days later (lib/owners).
    const { writes } = s.store as ReturnType<typeof memoryStore>;
    for (const record of writes) expect(Math.abs(record.readAt - Math.floor(Date.now() / 1000))).toBeLessThanOrEqual(5);
    expect(s.metrics.count('DirectorySyncs', { outcome: 'succeeded' })).toBe(1);
    expect(s.log.records().at(-1)).toMatchObject({ level: 'info', message: 'directory sync finished', outcome: 'succeeded' });
    expectNoSecrets(s.log.lines, writes, summary);
  });

  it.each<[string, Partial<FakeAccount['costCenters'][number]>]>([
    ['account ids as strings', { linkedAccounts: ['444444444444'] }],
    ['account ids as numbers', { linkedAccounts: [444444444444] }],
    ['objects with linkedAccountId', { linkedAccounts: [{ linkedAccountId: '444444444444', linkedAccountName: 'x' }] }],
    ['objects with accountId (a number)', { linkedAccounts: [{ accountId: 444444444444 }] }],
    ['objects with id', { linkedAccounts: [{ id: '444444444444' }] }],
    ['linkedAccountsIds', { linkedAccounts: undefined, linkedAccountsIds: ['444444444444'] }],
    ['linkedAccountsIds with objects', { linkedAccounts: null, linkedAccountsIds: [{ linkedAccountId: 444444444444 }] }],
  ])('reads linked accounts given as %s', async (_form, linked) => {
    platform.accounts.splice(0, 3, { ...structuredClone(PAYERS[0]!), costCenters: [{ id: 'cc-9', name: 'Ops', ...linked }] });
    const s = setup();
    expect(await s.run()).toMatchObject({ outcome: 'succeeded', accountsWritten: 1, v1Fallbacks: 0 });
    expect(directoryOf(s.store as ReturnType<typeof memoryStore>)).toEqual({ '444444444444': [{ id: 'cc-9', name: 'Ops' }] });
    expect(listRequests(V1_PATH)).toHaveLength(0);
  });

  it('gives an account every cost center that covers it, across payers, each once', async () => {
    // The Azure payer's cost center also names an AWS account of the first payer, twice.
    platform.accounts[2]!.costCenters.push({ id: 'az-2', name: 'Shared', linkedAccounts: ['111111111111', '111111111111'] });
    const s = setup();
    await s.run();
    expect(directoryOf(s.store as ReturnType<typeof memoryStore>)['111111111111']).toEqual([
      { id: 'az-2', name: 'Shared' },
      { id: 'cc-100', name: 'Data Platform' },
    ]);
  });

  it('takes ids as numbers: a cost center id as its digits, an AWS account id with its leading zeros back', async () => {
    platform.accounts.splice(0, 3, {
      ...structuredClone(PAYERS[0]!),
      costCenters: [{ id: 42, name: 'Numbers', linkedAccounts: [12345678901, { accountId: 98765 }] }],
    });
    const s = setup();
    await s.run();
    expect(directoryOf(s.store as ReturnType<typeof memoryStore>)).toEqual({
      '000000098765': [{ id: '42', name: 'Numbers' }],
      '012345678901': [{ id: '42', name: 'Numbers' }],
    });
    expect(
      s.log.records().some((r) => r['message'] === 'AWS account ids shorter than twelve digits were given back their leading zeros'),
    ).toBe(true);
    // Only AWS ids have a fixed length: another cloud's id stays as it came.
    expect(cloudAccountIdOf('12345', { accountKey: '1', accountId: '', accountName: '', cloudTypeId: 2 })).toEqual({
      id: '12345',
      padded: false,
    });
  });

  it.each<['array' | 'data' | 'costCenters' | 'items']>([['array'], ['data'], ['costCenters'], ['items']])(
    'reads cost-center lists as %s, following nextToken pages',
    async (costCentersEnvelope) => {
      platform.accounts[0]!.costCenters.push({ id: 'cc-150', name: 'Mobile', linkedAccounts: ['555555555555'] });
      platform.configure({ costCentersEnvelope, accountsEnvelope: 'items', pageSize: 1 });
      const s = setup();
      expect(await s.run()).toMatchObject({ outcome: 'succeeded', accountsWritten: 6 });
      expect(directoryOf(s.store as ReturnType<typeof memoryStore>)).toEqual({
        ...DIRECTORY,
        '555555555555': [{ id: 'cc-150', name: 'Mobile' }],
      });
      // A bare array holds the whole list; a wrapped one comes a record a page.
      const firstPayer = listRequests().filter((r) => r.headers['apikey'] === `${platform.userKey}:12345:`);
      expect(firstPayer).toHaveLength(costCentersEnvelope === 'array' ? 1 : 3);
      expect(platform.requests.filter((r) => r.path === ACCOUNTS_PATH)).toHaveLength(3);
    },
  );

  it('reads the v1 list, with the same headers, for a payer whose v2 list names no linked account, and says so', async () => {
    const s = setup();
    const summary = await s.run();
    expect(summary.v1Fallbacks).toBe(1);
    const [v1] = listRequests(V1_PATH);
    expect(listRequests(V1_PATH)).toHaveLength(1);
    expect(v1).toMatchObject({ method: 'GET', status: 200 });
    expect(v1?.headers['apikey']).toBe(`${platform.userKey}:67890:`);
    expect(v1?.headers['authorization']).toBe(platform.issuedTokens.at(-1));
    expect(v1?.headers['accept']).toBe('application/json');
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({
        message: 'the v2 cost-center list names no linked account; reading the v1 list instead',
        payer: '67890',
        payerName: 'Staging payer',
      }),
    );
    expect(s.log.records()).toContainEqual(expect.objectContaining({ message: 'payer read', payer: '67890', list: 'v1' }));
  });

  it('keeps every cost center of an account for routing, and gives a message only as many as a queued retry of its alert accepts', async () => {
    const many = Array.from({ length: 60 }, (_, i) => ({
      id: `cc-${String(i).padStart(2, '0')}`,
      name: `${'n'.repeat(245)}${String(i).padStart(5, '0')}`,
      linkedAccounts: ['111111111111'],
    }));
    platform.accounts.splice(0, 3, {
      ...structuredClone(PAYERS[0]!),
      costCenters: [{ id: 'a'.repeat(201), name: 'Long id', linkedAccounts: ['111111111111'] }, ...many],
    });
    const s = setup();
    expect(await s.run()).toMatchObject({ outcome: 'succeeded', accountsWritten: 1, costCentersLeftOut: 0 });
    const record = (s.store as ReturnType<typeof memoryStore>).items.get('111111111111')!;
    // A route on the 60th, or on the one with a long id, or on a whole long name, matches.
    const owners = ownersOfRecord(record);
    expect(owners.routing).toHaveLength(61);
    const config = relayConfigSchema.parse({
      auth: { method: 'none' },
      destinations: {
        default: { url: 'https://hooks.slack.com/services/T0/B0/d' },
        team: { url: 'https://hooks.slack.com/services/T0/B0/t' },
      },
      routes: [{ when: { costCenter: [many[59]!.name] }, to: ['team'] }],
    });
    const message = webhookMessageSchema.parse(
      JSON.parse(readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8')),
    );
    expect(selectDestinations(config, routeFacts(message, owners.routing))).toEqual(['team']);
    expect(
      selectDestinations({ routes: [{ when: { costCenter: ['a'.repeat(201)] }, to: ['team'] }] }, routeFacts(message, owners.routing)),
    ).toEqual(['team']);
    // What a message names fits a queued retry: the first 50 by id, names shortened, the long id left out.
    expect(owners.costCenters.map((c) => c.id)).toEqual(many.slice(0, 50).map((c) => c.id));
    const job = newJob('d-1', 'default', message, 'rate_limited', Date.now(), undefined, undefined, undefined, owners.costCenters);
    expect(parseDeliveryJob(JSON.stringify(job))?.costCenters).toEqual(owners.costCenters);
  });

  it('an account with more cost centers than its item holds keeps what fits, and the run says so and is partial', async () => {
    const many = Array.from({ length: 1_200 }, (_, i) => ({
      id: `cc-${String(i).padStart(4, '0')}`,
      name: `Team ${'x'.repeat(250)} ${i}`,
      linkedAccounts: ['111111111111'],
    }));
    platform.accounts.splice(0, 3, { ...structuredClone(PAYERS[0]!), costCenters: many });
    const s = setup();
    const summary = await s.run();
    expect(summary).toMatchObject({ outcome: 'partial', accountsWritten: 1 });
    expect(summary.costCentersLeftOut).toBeGreaterThan(0);
    const record = (s.store as ReturnType<typeof memoryStore>).items.get('111111111111')!;
    expect(ownersOfRecord(record).routing).toHaveLength(1_200 - summary.costCentersLeftOut);
    expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThan(350_000);
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('cost centers a record cannot hold were left out'),
        costCenters: summary.costCentersLeftOut,
      }),
    );
    expect(s.metrics.count('DirectorySyncs', { outcome: 'succeeded' })).toBe(0);
  });

  it('writes nothing for a payer whose v2 and v1 lists both name no linked account', async () => {
    platform.accounts[1]!.costCenters[0]!.v1LinkedAccounts = [];
    const s = setup();
    expect(await s.run()).toMatchObject({ outcome: 'succeeded', payersRead: 3, accountsWritten: 4, v1Fallbacks: 1 });
    expect(directoryOf(s.store as ReturnType<typeof memoryStore>)['333333333333']).toBeUndefined();
  });
});

describe('directory-sync never removes what it could not confirm', () => {
  it.each<[string, PlatformBehaviour, string]>([
    ['refused (403)', { kind: 'error', status: 403 }, 'unauthorized'],
    ['refused (404)', { kind: 'error', status: 404 }, 'rejected'],
    ['unavailable (503)', { kind: 'error', status: 503 }, 'platform_unavailable'],
    ['a hang', { kind: 'hang' }, 'timeout'],
    ['a shape it does not know', { kind: 'answer', status: 200, body: { costCenterList: [] } }, 'invalid_response'],
    [
      'a linked account in a form it does not know',
      { kind: 'answer', status: 200, body: [{ id: 'cc-1', name: 'x', linkedAccounts: [{ name: 'no id' }] }] },
      'invalid_response',
    ],
  ])('a payer whose list fails with %s writes nothing for its accounts, the others are written', async (_case, behaviour, reason) => {
    platform.setBehaviour('costCenters', behaviour, 12345);
    const s = setup();
    const summary = await s.run();
    expect(summary).toMatchObject({ outcome: 'partial', payersRead: 2, payersSkipped: 1, accountsWritten: 3 });
    expect(summary.skipped).toEqual([{ payer: '12345', payerName: 'Production payer', reason, why: expect.stringContaining('failed') }]);
    expect(Object.keys(directoryOf(s.store as ReturnType<typeof memoryStore>)).sort()).toEqual(['333333333333', 'sub-0002', 'sub-0003']);
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'payer skipped: its accounts keep their records as they were',
        payer: '12345',
        reason,
        why: expect.stringMatching(/^the cost-centers list \(GET [^)]+\) failed: /),
      }),
    );
    expect(s.metrics.count('DirectorySyncs', { outcome: 'partial' })).toBe(1);
    expect(s.log.records().at(-1)).toMatchObject({ level: 'warn', message: 'directory sync finished', outcome: 'partial' });
    expectNoSecrets(s.log.lines, summary);
  });

  it('a failed payer leaves its accounts’ records as they were; the others are updated', async () => {
    const store = memoryStore();
    const old = (payer: string) => {
      const part = { accountKey: payer, costCenters: [{ id: 'old', name: 'Before' }], readAt: Math.floor(Date.now() / 1000) - 3_600 };
      return { costCenters: part.costCenters, readAt: part.readAt, parts: [part] };
    };
    // One record, compared with itself: a second reading of the clock may fall in the next second.
    const failedPayers = { accountId: '333333333333', ...old('67890') };
    store.items.set('333333333333', structuredClone(failedPayers));
    store.items.set('111111111111', { accountId: '111111111111', ...old('12345') });
    platform.setBehaviour('costCentersV1', { kind: 'error', status: 500 }, 67890);
    const s = setup({ store });
    expect(await s.run()).toMatchObject({ outcome: 'partial', skipped: [expect.objectContaining({ payer: '67890' })] });
    expect(store.items.get('333333333333')).toEqual(failedPayers);
    expect(store.items.get('111111111111')?.costCenters).toEqual([{ id: 'cc-100', name: 'Data Platform' }]);
    expect(store.writes.map((w) => w.accountId)).not.toContain('333333333333');
  });

  it('an account shared with a payer it could not read keeps that payer’s cost centers; the read payer’s are updated', async () => {
    // The Azure payer's cost center also covers an account of the first payer.
    platform.accounts[2]!.costCenters.push({ id: 'az-2', name: 'Shared', linkedAccounts: ['222222222222'] });
    const store = memoryStore();
    expect(await setup({ store }).run()).toMatchObject({ outcome: 'succeeded' });
    const firstRead = store.items.get('222222222222')!.readAt;

    platform.accounts[0]!.costCenters[1]!.name = 'Web shop (renamed)';
    platform.setBehaviour('costCenters', { kind: 'error', status: 503 }, 24680);
    const s = setup({ store });
    expect(await s.run()).toMatchObject({ outcome: 'partial', payersSkipped: 1, accountsWritten: 3 });
    expect(directoryOf(store)['222222222222']).toEqual([
      { id: 'az-2', name: 'Shared' },
      { id: 'cc-100', name: 'Data Platform' },
      { id: 'cc-200', name: 'Web shop (renamed)' },
    ]);
    // It expires no later than the part it kept from the earlier run.
    expect(store.items.get('222222222222')?.readAt).toBe(firstRead);

    // Once the payer is read again and no longer covers it, its part goes.
    platform.reset();
    platform.accounts[2]!.costCenters.pop();
    expect(await setup({ store }).run()).toMatchObject({ outcome: 'succeeded' });
    expect(directoryOf(store)['222222222222']).toEqual([
      { id: 'cc-100', name: 'Data Platform' },
      { id: 'cc-200', name: 'Web shop (renamed)' },
    ]);
  });

  it('a record written without payer parts is kept while a payer is unread, unless this run names all its cost centers', async () => {
    const store = memoryStore();
    const readAt = Math.floor(Date.now() / 1000) - 3_600;
    store.items.set('111111111111', { accountId: '111111111111', costCenters: [{ id: 'cc-100', name: 'Data Platform' }], readAt });
    const unattributed = { accountId: '222222222222', costCenters: [{ id: 'az-9', name: 'Elsewhere' }], readAt };
    store.items.set('222222222222', structuredClone(unattributed));
    platform.setBehaviour('costCenters', { kind: 'error', status: 503 }, 24680);
    const s = setup({ store });
    expect(await s.run()).toMatchObject({ outcome: 'partial', accountsWritten: 2, accountsNotWritten: 1 });
    expect(store.items.get('222222222222')).toEqual(unattributed);
    expect(store.items.get('111111111111')?.parts).toEqual([expect.objectContaining({ accountKey: '12345' })]);
    expect(s.log.records()).toContainEqual(expect.objectContaining({ reasons: { record_without_payers: 1 } }));
  });

  it('a 429 stops the run: later payers are not asked, and the log says why', async () => {
    platform.setBehaviour('costCenters', { kind: 'rate_limited', retryAfter: '600' }, 67890);
    const s = setup();
    const summary = await s.run();
    expect(summary.skipped.map((p) => [p.payer, p.reason])).toEqual([
      ['67890', 'rate_limited'],
      ['24680', 'rate_limited'],
    ]);
    expect(summary.skipped[1]?.why).toBe('not read: the platform answered an earlier list with 429 (too many requests)');
    expect(listRequests().some((r) => r.headers['apikey'] === `${platform.userKey}:24680:`)).toBe(false);
    expect(summary).toMatchObject({ outcome: 'partial', accountsWritten: 2 });
  });

  it.each<[string, () => void, string]>([
    ['a refused login', () => undefined, 'login_failed'],
    ['a login that hangs', () => platform.setBehaviour('token', { kind: 'hang' }), 'timeout'],
    [
      'a payer-accounts list it cannot read',
      () => platform.setBehaviour('accounts', { kind: 'answer', status: 200, body: 'x' }),
      'invalid_response',
    ],
  ])('%s changes nothing: the run fails, logged and counted', async (name, arrange, reason) => {
    arrange();
    const s = setup(name === 'a refused login' ? { password: 'wrong-password' } : {});
    const summary = await s.run();
    expect(summary).toMatchObject({ outcome: 'failed', reason, payers: 0, accountsWritten: 0 });
    expect((s.store as ReturnType<typeof memoryStore>).writes).toEqual([]);
    expect(listRequests()).toHaveLength(0);
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'directory sync read nothing: every record stays as it was', reason }),
    );
    expect(s.metrics.count('DirectorySyncs', { outcome: 'failed' })).toBe(1);
    expectNoSecrets(s.log.lines, summary, 'wrong-password');
  });

  it('a credentials secret without a password fails the run, naming the secret and never a value', async () => {
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const sync = createDirectorySync({
      platform: createCostApiClient({ baseUrl: platform.url }),
      readCredentials: () => readPlatformCredentials(async () => '{"username":"ops@example.com"}', 'platform-login'),
      store: memoryStore(),
      cursor: memoryCursor(),
      payerIndex: memoryIndex(),
      logger: log.logger,
      metrics,
    });
    const summary = await sync(invocationBudget({ getRemainingTimeInMillis: () => 60_000 }));
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'credentials_invalid' });
    expect(log.records()).toContainEqual(
      expect.objectContaining({
        why: expect.stringContaining('the credentials secret "platform-login" (COST_API_CREDENTIALS_SECRET_ID) must hold'),
      }),
    );
    expect(platform.requests).toHaveLength(0);
  });

  it('fails when no payer could be read, and when no record could be written', async () => {
    platform.setBehaviour('costCenters', { kind: 'error', status: 400 });
    expect(await setup().run()).toMatchObject({ outcome: 'failed', payersRead: 0, payersSkipped: 3 });

    platform.reset();
    const refusing: OwnerStore = {
      read: async () => undefined,
      write: async () => {
        throw new Error('refused');
      },
      remove: async () => undefined,
    };
    const s = setup({ store: refusing });
    expect(await s.run()).toMatchObject({ outcome: 'failed', payersRead: 3, accountsWritten: 0, accountsNotWritten: 5 });
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({
        message: 'owner records not written: those accounts keep their records as they were',
        reasons: { Error: 5 },
      }),
    );
  });

  it('a record whose write fails is counted, and the run is partial', async () => {
    const inner = memoryStore();
    const store: OwnerStore = {
      read: inner.read,
      write: async (record, signal) => {
        if (record.accountId === 'sub-0002') throw new Error('refused');
        await inner.write(record, signal);
      },
      remove: inner.remove,
    };
    const s = setup({ store });
    expect(await s.run()).toMatchObject({ outcome: 'partial', accountsWritten: 4, accountsNotWritten: 1, payersSkipped: 0 });
  });
});

describe('what a run may call a success, and what a payer no longer covers', () => {
  it('an empty payer-accounts list changes nothing and counts empty, which the stale alarm does not count as renewal', async () => {
    const store = memoryStore();
    expect(await setup({ store }).run()).toMatchObject({ outcome: 'succeeded', accountsWritten: 5 });
    const before = structuredClone(store.items);
    platform.accounts.splice(0, 3);
    const s = setup({ store });
    const summary = await s.run();
    expect(summary).toMatchObject({ outcome: 'empty', reason: 'no_payer_accounts', payers: 0, accountsWritten: 0, accountsRemoved: 0 });
    expect(store.items).toEqual(before);
    expect(s.metrics.count('DirectorySyncs', { outcome: 'empty' })).toBe(1);
    expect(s.metrics.count('DirectorySyncs', { outcome: 'succeeded' })).toBe(0);
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'the platform lists no payer account: every record stays as it was' }),
    );
    expect(s.lastRun.runs).toEqual([expect.objectContaining({ outcome: 'empty', payers: 0 })]);
  });

  it('lists that name no linked account at all change nothing and count empty, though every payer was read', async () => {
    const store = memoryStore();
    const payerIndex = memoryIndex();
    expect(await setup({ store, payerIndex }).run()).toMatchObject({ outcome: 'succeeded' });
    const before = structuredClone(store.items);
    for (const payer of platform.accounts) {
      for (const costCenter of payer.costCenters) {
        costCenter.linkedAccounts = [];
        costCenter.linkedAccountsIds = undefined;
        costCenter.v1LinkedAccounts = [];
      }
    }
    const s = setup({ store, payerIndex });
    expect(await s.run()).toMatchObject({ outcome: 'empty', reason: 'no_linked_accounts', payersRead: 3, accountsRemoved: 0 });
    expect(store.items).toEqual(before);
    expect(store.removed).toEqual([]);
    expect(s.metrics.count('DirectorySyncs', { outcome: 'empty' })).toBe(1);
    expect(s.log.records().at(-1)).toMatchObject({ level: 'error', message: 'directory sync finished', outcome: 'empty' });
  });

  it('an account taken out of its cost center loses that payer’s part in the same run; the record goes when none is left', async () => {
    // 222222222222 is covered by two cost centers of the first payer and by one of the Azure payer.
    platform.accounts[2]!.costCenters.push({ id: 'az-2', name: 'Shared', linkedAccounts: ['222222222222'] });
    const store = memoryStore();
    const payerIndex = memoryIndex();
    expect(await setup({ store, payerIndex }).run()).toMatchObject({ outcome: 'succeeded', accountsWritten: 5 });
    expect(payerIndex.items.get('12345')?.accounts).toEqual(['111111111111', '222222222222']);

    // The first payer no longer covers either account: one goes, the other keeps the Azure payer's part.
    platform.accounts[0]!.costCenters = [{ id: 'cc-100', name: 'Data Platform', linkedAccounts: ['555555555555'] }];
    const s = setup({ store, payerIndex });
    const summary = await s.run();
    expect(summary).toMatchObject({ outcome: 'succeeded', accountsRemoved: 1, accountsNotWritten: 0 });
    expect(directoryOf(store)['111111111111']).toBeUndefined();
    expect(store.removed).toEqual(['111111111111']);
    expect(directoryOf(store)['222222222222']).toEqual([{ id: 'az-2', name: 'Shared' }]);
    expect(store.items.get('222222222222')?.parts?.map((p) => p.accountKey)).toEqual(['24680']);
    expect(directoryOf(store)['555555555555']).toEqual([{ id: 'cc-100', name: 'Data Platform' }]);
    expect(payerIndex.items.get('12345')?.accounts).toEqual(['555555555555']);
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({ message: 'accounts no longer covered by a payer read lost its cost centers', accounts: 1 }),
    );
  });

  it('a payer it could not read keeps its part of an account another payer stopped covering', async () => {
    platform.accounts[2]!.costCenters.push({ id: 'az-2', name: 'Shared', linkedAccounts: ['111111111111'] });
    const store = memoryStore();
    const payerIndex = memoryIndex();
    await setup({ store, payerIndex }).run();
    platform.accounts[0]!.costCenters[0]!.linkedAccounts = ['222222222222'];
    platform.setBehaviour('costCenters', { kind: 'error', status: 503 }, 24680);
    const s = setup({ store, payerIndex });
    expect(await s.run()).toMatchObject({ outcome: 'partial', accountsRemoved: 1 });
    expect(directoryOf(store)['111111111111']).toEqual([{ id: 'az-2', name: 'Shared' }]);
    // The unread payer's index stays as it was.
    expect(payerIndex.items.get('24680')?.accounts).toEqual(['111111111111', 'sub-0002', 'sub-0003']);
  });

  it('a removal that fails stays in the payer’s index and is done by the next run', async () => {
    const store = memoryStore();
    const payerIndex = memoryIndex();
    await setup({ store, payerIndex }).run();
    platform.accounts[0]!.costCenters[0]!.linkedAccounts = [];
    let refuse = true;
    const flaky: OwnerStore = {
      read: store.read,
      write: store.write,
      remove: async (accountId, signal) => {
        if (refuse) throw new Error('refused');
        await store.remove(accountId, signal);
      },
    };
    const s = setup({ store: flaky, payerIndex });
    expect(await s.run()).toMatchObject({ outcome: 'partial', accountsRemoved: 0, accountsNotWritten: 1 });
    expect(directoryOf(store)['111111111111']).toBeDefined();
    expect(payerIndex.items.get('12345')?.accounts).toEqual(['111111111111', '222222222222']);
    refuse = false;
    expect(await setup({ store: flaky, payerIndex }).run()).toMatchObject({ outcome: 'succeeded', accountsRemoved: 1 });
    expect(directoryOf(store)['111111111111']).toBeUndefined();
    expect(payerIndex.items.get('12345')?.accounts).toEqual(['222222222222']);
  });

  it('a payer whose index cannot be read removes nothing of its own in that run, and the run is partial', async () => {
    const store = memoryStore();
    const inner = memoryIndex();
    await setup({ store, payerIndex: inner }).run();
    platform.accounts[0]!.costCenters[0]!.linkedAccounts = [];
    const unreadable: PayerIndexStore = {
      read: async (key, signal) => {
        if (key === '12345') throw new Error('throttled');
        return inner.read(key, signal);
      },
      write: inner.write,
    };
    const s = setup({ store, payerIndex: unreadable });
    expect(await s.run()).toMatchObject({ outcome: 'partial', accountsRemoved: 0, payersNotIndexed: 1 });
    expect(directoryOf(store)['111111111111']).toBeDefined();
    expect(s.log.records()).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining('what a payer covered before is unknown'), payer: '12345' }),
    );
  });

  it('keeps each payer’s account key on its part of an owner item, and the run’s outcome for npm run owners; no secret', async () => {
    platform.accounts[1]!.costCenters[0]!.v1LinkedAccounts = ['333333333333', '111111111111'];
    const s = setup();
    await s.run();
    const record = (s.store as ReturnType<typeof memoryStore>).items.get('111111111111');
    expect(record?.parts?.map((p) => p.accountKey)).toEqual(['12345', '67890']);
    expect(s.lastRun.runs).toEqual([
      {
        at: expect.any(Number),
        outcome: 'succeeded',
        payers: 3,
        payersRead: 3,
        payersSkipped: 0,
        accountsWritten: 5,
        accountsRemoved: 0,
        accountsNotWritten: 0,
      },
    ]);
    expectNoSecrets(record, s.lastRun.runs, [...(s.payerIndex as ReturnType<typeof memoryIndex>).items.values()]);
  });

  it('marks an id that two payers give to different cost centers, so that a route on the bare id matches neither', async () => {
    platform.accounts[2]!.costCenters[0]!.id = 'cc-100';
    const s = setup();
    await s.run();
    const { items } = s.store as ReturnType<typeof memoryStore>;
    expect(ownersOfRecord(items.get('111111111111')!).routing).toEqual([
      { id: 'cc-100', name: 'Data Platform', payer: '12345', idShared: true },
    ]);
    expect(ownersOfRecord(items.get('333333333333')!).routing).toEqual([{ id: '300', name: 'QA', payer: '67890' }]);
  });

  it('takes a payer record with an empty accountId or a cloudTypeId as text, and trims cost-center names', async () => {
    Object.assign(platform.accounts[0]!, { accountId: '', cloudTypeId: '0' });
    platform.accounts[0]!.costCenters[0]!.name = '  Data Platform \t';
    platform.accounts[0]!.costCenters[0]!.linkedAccounts = [12345678901];
    const s = setup();
    expect(await s.run()).toMatchObject({ outcome: 'succeeded', payersRead: 3 });
    // As text, the AWS cloud type still restores an id's leading zeros.
    expect(directoryOf(s.store as ReturnType<typeof memoryStore>)['012345678901']).toEqual([{ id: 'cc-100', name: 'Data Platform' }]);
  });
});

describe('directory-sync keeps to its deadlines and the platform’s pace', () => {
  it('gives every call a deadline that fits the invocation: a hang ends the run early, partial, with what it read written', async () => {
    platform.setBehaviour('costCenters', { kind: 'hang' }, 67890);
    const s = setup({ client: { timeoutMs: 60_000 }, limits: { writeReserveMs: 400 } });
    const started = Date.now();
    const summary = await s.run(2_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(summary).toMatchObject({ outcome: 'partial', payersRead: 1, accountsWritten: 2 });
    expect(summary.skipped.map((p) => [p.payer, p.reason])).toEqual([
      ['67890', 'cost_centers_deadline'],
      ['24680', 'out_of_time'],
    ]);
    expect(summary.skipped[1]?.why).toBe('not read: too little of the invocation’s time was left');
    // The client was told: it closed the hung request rather than leave it open until its own timeout.
    await expect.poll(() => listRequests().find((r) => r.status === 0)?.closed, { timeout: 1_000 }).toBe(true);
  });

  it('gives every write a deadline too', async () => {
    const hanging: OwnerStore = { read: async () => undefined, write: () => new Promise(() => undefined), remove: async () => undefined };
    const s = setup({ store: hanging, limits: { writeMs: 100, writeConcurrency: 5 } });
    const summary = await s.run();
    expect(summary).toMatchObject({ outcome: 'failed', accountsNotWritten: 5 });
    expect(s.log.records()).toContainEqual(expect.objectContaining({ reasons: { owner_write_deadline: 5 } }));
  });

  it('never sends more requests in a window than its pace allows, retries and pages included', async () => {
    platform.configure({ pageSize: 1, costCentersEnvelope: 'data' });
    platform.queue('costCenters', { kind: 'error', status: 502 });
    const s = setup({ pace: { requests: 3, windowMs: 60_000 }, virtualTime: true });
    expect(await s.run(3_600_000)).toMatchObject({ outcome: 'succeeded', accountsWritten: 5 });
    expect(s.requestTimes.length).toBeGreaterThan(6);
    for (let i = 3; i < s.requestTimes.length; i++) {
      // A few ms pass between a request's place and its fetch.
      expect(s.requestTimes[i]! - s.requestTimes[i - 3]!).toBeGreaterThanOrEqual(60_000 - 20);
    }
  });

  it('stops early when the pace leaves no room for the next payer, and says so', async () => {
    const s = setup({ pace: { requests: 3, windowMs: 60_000 }, virtualTime: true });
    const summary = await s.run(30_000);
    // Sign-in, the payer accounts and the first payer's list fill the window.
    expect(platform.requests).toHaveLength(3);
    // Nothing failed: the rest is the next run's, which starts where this one stopped.
    expect(summary).toMatchObject({ outcome: 'continued', payersRead: 1, accountsWritten: 2 });
    expect(s.metrics.count('DirectorySyncs', { outcome: 'continued' })).toBe(1);
    expect(s.log.records().at(-1)).toMatchObject({ level: 'info', message: 'directory sync finished', outcome: 'continued' });
    expect(summary.skipped).toEqual([
      expect.objectContaining({
        payer: '67890',
        reason: 'out_of_time',
        why: 'not read: the platform’s pace leaves no room for it in this invocation',
      }),
      expect.objectContaining({ payer: '24680', reason: 'out_of_time' }),
    ]);
  });

  it('a run that stops early is followed by one that starts where it stopped, so successive runs read every payer', async () => {
    const store = memoryStore();
    const cursor = memoryCursor();
    // Each run has room for four requests: sign-in, the payer accounts and two lists. The second
    // payer needs two lists (v2, then v1), so the first run stops there and the last payer is left.
    const run = () => setup({ store, cursor, pace: { requests: 4, windowMs: 60_000 }, virtualTime: true }).run(30_000);
    const readIn: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const summary = await run();
      expect(summary.outcome).toBe('continued');
      readIn.push(['12345', '67890', '24680'].filter((payer) => !summary.skipped.some((s) => s.payer === payer)));
    }
    expect(readIn).toEqual([['12345'], ['67890'], ['12345', '24680']]);
    expect(directoryOf(store)).toEqual(DIRECTORY);
    expect(cursor.next).toBe('67890');
  });

  it('a run that stops early but cannot keep where it stopped is partial: the next would start at the same payer', async () => {
    const unwritable: SyncCursor = {
      read: async () => undefined,
      write: async () => {
        throw new Error('refused');
      },
    };
    const s = setup({ cursor: unwritable, pace: { requests: 3, windowMs: 60_000 }, virtualTime: true });
    expect(await s.run(30_000)).toMatchObject({ outcome: 'partial', payersRead: 1 });
    expect(s.metrics.count('DirectorySyncs', { outcome: 'continued' })).toBe(0);
  });

  it('a cursor naming a payer no longer listed, or one it cannot read, starts with the first payer', async () => {
    const gone = memoryCursor();
    gone.next = '99999';
    const s = setup({ cursor: gone });
    expect(await s.run()).toMatchObject({ outcome: 'succeeded', payersRead: 3 });
    expect(listRequests()[0]?.headers['apikey']).toBe(`${platform.userKey}:12345:`);

    platform.reset();
    const broken: SyncCursor = {
      read: async () => {
        throw new Error('unreadable');
      },
      write: async () => undefined,
    };
    const t = setup({ cursor: broken });
    expect(await t.run()).toMatchObject({ outcome: 'succeeded', payersRead: 3 });
    expect(t.log.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'where the last run stopped is unknown: reading from the first payer' }),
    );
  });

  it('a pace shared by back-to-back runs: the second waits for the first’s requests to leave the window', async () => {
    let offset = 0;
    const slept: number[] = [];
    const pacer = windowPacer(
      { requests: 2, windowMs: 1_000 },
      () => offset,
      async (ms) => {
        slept.push(ms);
        offset += ms;
      },
    );
    await pacer.take();
    await pacer.take();
    expect(pacer.delayMs()).toBe(1_000);
    offset = 400;
    await pacer.take();
    expect(slept).toEqual([600]);
    const aborted = AbortSignal.abort(new Error('deadline'));
    await expect(pacer.take(aborted)).rejects.toThrow('deadline');
    const controller = new AbortController();
    const waiting = windowPacer({ requests: 1, windowMs: 60_000 }, Date.now);
    await waiting.take();
    const second = waiting.take(controller.signal);
    controller.abort(new Error('later deadline'));
    await expect(second).rejects.toThrow('later deadline');
  });
});

describe('the directory-sync wiring', () => {
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

  it('reads the login from the credentials secret and writes owner# items to the table', async () => {
    aws.answer('secretsmanager.GetSecretValue', {
      SecretString: JSON.stringify({ username: platform.username, password: platform.password }),
    });
    aws.answer('DynamoDB_20120810.PutItem', {});
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const sync = createDirectorySyncFromEnvironment(
      { COST_API_BASE_URL: platform.url, COST_API_CREDENTIALS_SECRET_ID: 'platform-login', DEDUP_TABLE_NAME: 'dedup' },
      { logger: log.logger, metrics },
    );
    const summary: DirectorySyncSummary = await sync(invocationBudget({ getRemainingTimeInMillis: () => 60_000 }));
    expect(summary).toMatchObject({ outcome: 'succeeded', accountsWritten: 5 });
    expect(aws.calls.find((c) => c.target === 'secretsmanager.GetSecretValue')?.body).toEqual({ SecretId: 'platform-login' });
    const puts = aws.calls.filter((c) => c.target === 'DynamoDB_20120810.PutItem').map((c) => c.body);
    const item = puts.find((p) => JSON.stringify(p).includes('owner#222222222222')) as { Item: Record<string, { N?: string }> };
    expect(item).toMatchObject({
      TableName: 'dedup',
      Item: {
        id: { S: 'owner#222222222222' },
        costCenters: {
          L: [{ M: { id: { S: 'cc-100' }, name: { S: 'Data Platform' } } }, { M: { id: { S: 'cc-200' }, name: { S: 'Web shop' } } }],
        },
      },
    });
    expect(Number(item.Item['expiresAt']?.N) - Number(item.Item['readAt']?.N)).toBe(3 * 86_400);
    expect(metrics.count('DirectorySyncs', { outcome: 'succeeded' })).toBe(1);
    expectNoSecrets(log.lines, puts, summary);
  });

  it('keeps where a stopped run stopped in the directory#cursor item, and the next run starts there', async () => {
    aws.answer('secretsmanager.GetSecretValue', {
      SecretString: JSON.stringify({ username: platform.username, password: platform.password }),
    });
    let cursorItem: Record<string, unknown> | undefined;
    aws.answer('DynamoDB_20120810.PutItem', (call) => {
      const item = call.body['Item'] as { id: { S: string } };
      if (item.id.S === 'directory#cursor') cursorItem = item;
      return {};
    });
    aws.answer('DynamoDB_20120810.GetItem', (call) =>
      (call.body['Key'] as { id: { S: string } }).id.S === 'directory#cursor' && cursorItem ? { Item: cursorItem } : {},
    );
    const env = { COST_API_BASE_URL: platform.url, COST_API_CREDENTIALS_SECRET_ID: 'platform-login', DEDUP_TABLE_NAME: 'dedup' };
    const budget = () => invocationBudget({ getRemainingTimeInMillis: () => 60_000 });
    platform.setBehaviour('costCenters', { kind: 'rate_limited', retryAfter: '600' }, 67890);
    const log = capturedLogger();
    await createDirectorySyncFromEnvironment(env, { logger: log.logger, metrics: memoryMetrics() })(budget());
    expect(cursorItem).toEqual({ id: { S: 'directory#cursor' }, nextPayer: { S: '67890' }, expiresAt: { N: expect.any(String) } });

    platform.reset();
    const next = await createDirectorySyncFromEnvironment(env, { logger: log.logger, metrics: memoryMetrics() })(budget());
    expect(next).toMatchObject({ outcome: 'succeeded', payersRead: 3 });
    expect(listRequests()[0]?.headers['apikey']).toBe(`${platform.userKey}:67890:`);
    expectNoSecrets(log.lines, cursorItem);
  });

  it('a credentials secret it cannot read fails the run, named by the secret and AWS’s error code', async () => {
    aws.answer('secretsmanager.GetSecretValue', { error: 'ResourceNotFoundException' });
    const log = capturedLogger();
    const sync = createDirectorySyncFromEnvironment(
      { COST_API_BASE_URL: platform.url, COST_API_CREDENTIALS_SECRET_ID: 'gone', DEDUP_TABLE_NAME: 'dedup' },
      { logger: log.logger, metrics: memoryMetrics() },
    );
    expect(await sync(invocationBudget({ getRemainingTimeInMillis: () => 60_000 }))).toMatchObject({
      outcome: 'failed',
      reason: 'credentials_unavailable',
    });
    expect(log.records()).toContainEqual(
      expect.objectContaining({
        why: 'Cannot read the credentials secret "gone" (COST_API_CREDENTIALS_SECRET_ID): (ResourceNotFoundException)',
      }),
    );
    aws.answer('secretsmanager.GetSecretValue', { Name: 'binary-only' });
    expect(await sync(invocationBudget({ getRemainingTimeInMillis: () => 60_000 }))).toMatchObject({ reason: 'credentials_unavailable' });
    expect(log.records().at(-2)?.['why']).toContain('it has no string value');
  });

  it('a missing or invalid setting fails every run, naming the variables, counted for the alarm', async () => {
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const sync = createDirectorySyncFromEnvironment({ COST_API_TIMEOUT_MS: 'soon' }, { logger: log.logger, metrics });
    expect(await sync(invocationBudget({ getRemainingTimeInMillis: () => 60_000 }))).toMatchObject({
      outcome: 'failed',
      reason: 'environment_invalid',
    });
    expect(log.records()[0]).toMatchObject({
      variables: ['COST_API_CREDENTIALS_SECRET_ID', 'COST_API_TIMEOUT_MS', 'DEDUP_TABLE_NAME'],
    });
    expect(metrics.count('DirectorySyncs', { outcome: 'failed' })).toBe(1);
  });
});
