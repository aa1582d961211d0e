import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCostApiClient } from '../../lib/cost-api/client.js';
import { platformSession } from '../../lib/cost-api/session.js';
import { createLogger } from '../../lib/log/logger.js';
import { type OwnerDirectory, type OwnerRecord, ownersOfRecord } from '../../lib/owners/directory.js';
import { type ChartOutcome, createChartRoute, trendDays } from '../../lib/trend/lazy-trend.js';
import { memoryTrendStore } from '../../lib/trend/store.js';
import { alertDay, chartLink, signChartToken } from '../../lib/triage-link/chart.js';
import { signTriageToken } from '../../lib/triage-link/sign.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { decodePng } from '../helpers/png.js';

// GET /chart/<token> in process: the triage key, the owner directory and the series store in
// memory, the platform on loopback, the picture drawn for real.

const ownersOf = (record: OwnerRecord | undefined) => record && ownersOfRecord(record);
const KEY = 'chart-route-key-0123456789abcdefghijklmnopqrstu';
const NOW = Date.parse('2026-11-21T15:00:00Z');
const ACCOUNT = '247699517797';

let platform: FakePlatform;
beforeAll(async () => {
  platform = await startFakePlatform();
});
afterAll(() => platform.close());

describe('the cost-trend picture route', () => {
  let store: ReturnType<typeof memoryTrendStore>;
  let outcomes: ChartOutcome[];
  let logs: string[];
  let owners: Map<string, OwnerRecord>;

  beforeEach(() => {
    platform.reset();
    platform.dailyCosts.clear();
    platform.dailyCosts.set(ACCOUNT, new Map(trendDays('2026-11-21').map((day, i): [string, number] => [day, i === 29 ? 900 : 100])));
    store = memoryTrendStore();
    outcomes = [];
    logs = [];
    owners = new Map([
      [
        ACCOUNT,
        {
          accountId: ACCOUNT,
          costCenters: [{ id: '7', name: 'Data' }],
          readAt: 0,
          parts: [{ accountKey: '12345', costCenters: [{ id: '7', name: 'Data' }], readAt: 0 }],
        },
      ],
    ]);
  });

  const route = (
    overrides: { key?: string | undefined | (() => Promise<string>); now?: () => number; directory?: OwnerDirectory } = {},
  ) => {
    const client = createCostApiClient({ baseUrl: platform.url, timeoutMs: 2_000, maxAttempts: 1 });
    const directory: OwnerDirectory = overrides.directory ?? { read: async (id) => ownersOf(owners.get(id)) };
    const { key } = overrides;
    return createChartRoute({
      key: typeof key === 'function' ? key : async () => ('key' in overrides ? (key as string | undefined) : KEY),
      owners: directory,
      store,
      platform: {
        client,
        session: platformSession({
          client,
          credentials: async () => ({ username: platform.username, password: platform.password }),
          now: () => NOW,
        }),
      },
      render: () => import('../../lib/chart/lazy-chart-render.js'),
      now: overrides.now ?? (() => NOW),
      logger: createLogger({ sink: (line) => logs.push(line) }),
      count: (outcome) => outcomes.push(outcome),
    });
  };
  const token = (fields = { a: ACCOUNT, d: '2026-11-21', n: 'Analytics' }, at = NOW) => signChartToken(KEY, fields, at);
  const costCalls = () => platform.requests.filter((r) => r.path === '/api/v2/invoices/cost-and-usage');

  it('draws the account’s 30 days from the platform with its payer’s account-scoped key, once per account and day', async () => {
    const first = await route()(token(), budgetOf(10_000));
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('image/png');
    expect(first.isBase64Encoded).toBe(true);
    const image = decodePng(Buffer.from(first.body, 'base64'));
    expect(image.width).toBeGreaterThanOrEqual(600);
    expect(costCalls()).toHaveLength(1);
    expect(costCalls()[0]?.query).toMatchObject({ startDate: '2026-10-23', endDate: '2026-11-21', 'filters[linkedaccid]': ACCOUNT });
    expect(costCalls()[0]?.headers['apikey']).toMatch(/:12345:$/);
    // The same picture again, in another container: from the table, the platform not asked again.
    await new Promise((r) => setTimeout(r, 20));
    const again = await route()(token(), budgetOf(10_000));
    expect(Buffer.from(again.body, 'base64').equals(Buffer.from(first.body, 'base64'))).toBe(true);
    expect(costCalls()).toHaveLength(1);
    // Counted apart: the Charts metric tells pictures the platform drew from those the table kept.
    expect(outcomes).toEqual(['chart', 'cached']);
    for (const line of logs) expect(line).not.toContain(platform.password);
  });

  it('refuses a tampered, expired or foreign token with 403, and answers 404 without a key', async () => {
    const good = token();
    const [body, mac] = good.split('.') as [string, string];
    const tampered = `${Buffer.from(JSON.stringify({ a: '999999999999', d: '2026-11-21', e: 9e9 })).toString('base64url')}.${mac}`;
    const expired = token(undefined, NOW - 31 * 86_400_000);
    // A triage link's token, with the same key, is no picture's.
    const triage = signTriageToken(KEY, { a: 'anomaly#1', d: 'finops', t: 't', c: 'c' }, NOW);
    for (const bad of [tampered, expired, triage, `${body}.x`, 'nonsense', '']) {
      const answer = await route()(bad, budgetOf(10_000));
      expect(answer.statusCode, bad.slice(0, 20)).toBe(403);
    }
    expect((await route({ key: undefined })(good, budgetOf(10_000))).statusCode).toBe(404);
    expect(costCalls()).toHaveLength(0);
  });

  it('still answers a PNG within 3 s when the platform hangs, refuses, or has no figures; and when the directory knows no payer', async () => {
    for (const [setup, expected] of [
      [() => platform.setBehaviour('costAndUsage', { kind: 'hang' }), 'platform_unavailable'],
      [() => platform.setBehaviour('costAndUsage', { kind: 'error', status: 500 }), 'platform_unavailable'],
      [() => platform.dailyCosts.clear(), 'no_data'],
      [() => owners.clear(), 'no_owner'],
    ] as Array<[() => void, ChartOutcome]>) {
      platform.reset();
      setup();
      const started = performance.now();
      const answer = await route()(token(), budgetOf(10_000));
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe('image/png');
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(decodePng(Buffer.from(answer.body, 'base64')).width).toBeGreaterThanOrEqual(600);
      expect(outcomes.at(-1)).toBe(expected);
    }
  });

  it('keeps within the platform’s rate limit: past 20 requests in 3 minutes a container draws a notice instead', async () => {
    let now = NOW;
    const serve = route({ now: () => now });
    for (let i = 0; i < 21; i++) {
      // A different account each time, so that no series is kept.
      owners.set(`acct${i}`, {
        accountId: `acct${i}`,
        costCenters: [],
        readAt: 0,
        parts: [{ accountKey: '12345', costCenters: [{ id: '7', name: 'Data' }], readAt: 0 }],
      });
      await serve(token({ a: `acct${i}`, d: '2026-11-21', n: 'x' }), budgetOf(10_000));
      now += 1_000;
    }
    expect(costCalls()).toHaveLength(20);
    expect(outcomes.at(-1)).toBe('busy');
    // Once the window's first request is 3 minutes old, there is room for one more.
    now = NOW + 180_000;
    await serve(token({ a: 'acct20', d: '2026-11-21', n: 'x' }), budgetOf(10_000));
    expect(costCalls()).toHaveLength(21);
    expect(outcomes.at(-1)).toBe('no_data');
  });

  it('a table or directory that fails costs the picture a platform call at most, never the picture', async () => {
    const read = store.read;
    store.read = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    store.write = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    // Neither read nor kept: drawn from the platform each time, and the operator is told why.
    for (let i = 0; i < 2; i++) {
      const answer = await route()(token(), budgetOf(10_000));
      expect(answer.headers['content-type']).toBe('image/png');
      expect(answer.headers['cache-control']).toBe('private, max-age=3600');
    }
    expect(outcomes).toEqual(['chart', 'chart']);
    expect(costCalls()).toHaveLength(2);
    expect(logs.join('\n')).toContain('could not keep a cost series');

    // A directory that cannot be read knows no payer: the picture says so, and asks the platform nothing.
    store.read = read;
    const failing: OwnerDirectory = {
      read: async () => {
        throw new Error('ThrottlingException');
      },
    };
    const answer = await route({ directory: failing })(token(), budgetOf(10_000));
    expect(answer.headers['content-type']).toBe('image/png');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(outcomes.at(-1)).toBe('no_owner');
    expect(costCalls()).toHaveLength(2);
  });

  it('a key that cannot be read answers 404 at once, neither an error page nor a wait', async () => {
    const answer = await route({
      key: async () => {
        throw new Error('secrets manager is down');
      },
    })(token(), budgetOf(10_000));
    expect(answer).toMatchObject({ statusCode: 404, body: 'Not found.' });
    expect(costCalls()).toHaveLength(0);
    expect(outcomes).toEqual([]);
  });
});

describe('a picture’s link', () => {
  it('is on the origin the alert arrived on, and its day is the alert’s own (UTC), else the day it arrived', () => {
    expect(chartLink('https://api.example.com', KEY, { a: ACCOUNT, d: '2026-11-21' }, NOW)).toMatch(
      /^https:\/\/api\.example\.com\/chart\/[\w-]+\.[\w-]+$/,
    );
    expect(alertDay('2026-11-21T23:30:00-05:00', NOW + 86_400_000)).toBe('2026-11-22');
    expect(alertDay('2026-11-21 06:00:00', NOW)).toBe('2026-11-21');
    expect(alertDay('yesterday', NOW)).toBe('2026-11-21');
    expect(alertDay(undefined, NOW)).toBe('2026-11-21');
    // A time far in the future is not believed.
    expect(alertDay('2099-01-01T00:00:00Z', NOW)).toBe('2026-11-21');
  });
});
