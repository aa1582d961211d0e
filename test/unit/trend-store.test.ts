import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dynamoOwnerStore } from '../../lib/owners/dynamodb.js';
import { type ChartOutcome, chartRouteFrom, trendDays } from '../../lib/trend/lazy-trend.js';
import { dynamoTrendStore, TREND_KEPT_SECONDS, trendItemId } from '../../lib/trend/store.js';
import { signChartToken } from '../../lib/triage-link/chart.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';
import { memoryAws } from '../helpers/memory-aws.js';
import { decodePng } from '../helpers/png.js';

// The cost-trend picture as the deployed triage function serves it (chartRouteFrom): the series
// kept on `trend#` items of the dedup table (the simulation's in-memory table, TTL included), the
// owner directory in the same table, the platform's login in Secrets Manager, the platform on loopback.

const NOW = Date.parse('2026-11-21T15:00:00Z');
const DAY = '2026-11-21';
const ACCOUNT = '247699517797';
const KEY = 'trend-store-key-0123456789abcdefghijklmnopqrs';
const LOGIN = 'cost-alert-relay/platform-login';

let platform: FakePlatform;
beforeAll(async () => {
  platform = await startFakePlatform();
});
afterAll(() => platform.close());

describe('an account’s daily cost series in the dedup table', () => {
  it('keeps each day’s figure, the days without one as gaps, and the currency; nothing else', async () => {
    const now = NOW;
    const aws = memoryAws({ now: () => now });
    const store = dynamoTrendStore(aws.table.call, aws.tableName, () => now);
    const series = {
      days: [
        { day: '2026-11-19', cost: 120.5 },
        { day: '2026-11-20', cost: undefined },
        { day: '2026-11-21', cost: -3 },
      ],
      currency: 'EUR',
    };
    await store.write(ACCOUNT, DAY, series);
    expect(await store.read(ACCOUNT, DAY)).toEqual(series);
    expect(await store.read(ACCOUNT, '2026-11-20')).toBeUndefined();
    expect(aws.table.items().get(trendItemId(ACCOUNT, DAY))).toEqual({
      id: { S: `trend#${ACCOUNT}#${DAY}` },
      days: { M: { '2026-11-19': { N: '120.5' }, '2026-11-20': { NULL: true }, '2026-11-21': { N: '-3' } } },
      currency: { S: 'EUR' },
      expiresAt: { N: String(Math.floor(NOW / 1000) + TREND_KEPT_SECONDS) },
    });
  });
});

describe('the picture route as the triage function wires it', () => {
  let now: number;
  let aws: ReturnType<typeof memoryAws>;
  let outcomes: ChartOutcome[];
  let log: ReturnType<typeof capturedLogger>;

  beforeEach(async () => {
    platform.reset();
    platform.dailyCosts.clear();
    platform.dailyCosts.set(ACCOUNT, new Map(trendDays(DAY).map((day, i): [string, number] => [day, i === 29 ? 900 : 100])));
    now = NOW;
    // DynamoDB deletes an expired item within days, not at once.
    aws = memoryAws({ now: () => now, ttlDelayMs: 5 * 86_400_000 });
    aws.secrets.put(LOGIN, JSON.stringify({ username: platform.username, password: platform.password }));
    await dynamoOwnerStore(aws.table.call, aws.tableName, () => now).write({
      accountId: ACCOUNT,
      costCenters: [{ id: '7', name: 'Data' }],
      readAt: Math.floor(NOW / 1000),
      parts: [{ accountKey: '12345', costCenters: [{ id: '7', name: 'Data' }], readAt: Math.floor(NOW / 1000) }],
    });
    outcomes = [];
    log = capturedLogger();
  });

  // A new container each time: nothing is shared but the table.
  const container = () =>
    chartRouteFrom({
      key: async () => KEY,
      dynamo: aws.table.call,
      tableName: aws.tableName,
      secrets: aws.secrets.call,
      credentialsSecretId: LOGIN,
      baseUrl: platform.url,
      now: () => now,
      logger: log.logger,
      count: (outcome) => outcomes.push(outcome),
    });
  const token = signChartToken(KEY, { a: ACCOUNT, d: DAY, n: 'Analytics' }, NOW);
  const costCalls = () => platform.requests.filter((r) => r.path === '/api/v2/invoices/cost-and-usage');

  it('signs in with the login from Secrets Manager, reads the payer from the directory, and keeps the series two days', async () => {
    const first = await container()(token, budgetOf(10_000));
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('image/png');
    expect(decodePng(Buffer.from(first.body, 'base64')).width).toBeGreaterThanOrEqual(600);
    expect(costCalls()).toHaveLength(1);
    expect(costCalls()[0]?.headers['apikey']).toBe(`${platform.userKey}:12345:`);
    const kept = aws.table.items().get(trendItemId(ACCOUNT, DAY));
    expect(Object.keys(kept?.['days']?.M ?? {})).toEqual(trendDays(DAY));
    // Days and figures only: no key, token or login on the item.
    for (const secret of [platform.userKey, platform.password, ...platform.issuedTokens]) {
      expect(JSON.stringify(kept)).not.toContain(secret);
    }

    // Another container the next day: the same picture from the table, the platform not asked.
    now += 86_400_000;
    const again = await container()(token, budgetOf(10_000));
    expect(Buffer.from(again.body, 'base64').equals(Buffer.from(first.body, 'base64'))).toBe(true);
    expect(costCalls()).toHaveLength(1);

    // Past its two days the series is stale, even while DynamoDB has not deleted it yet: asked for again.
    now = NOW + (TREND_KEPT_SECONDS + 60) * 1000;
    expect(aws.table.items().has(trendItemId(ACCOUNT, DAY))).toBe(true);
    await container()(token, budgetOf(10_000));
    expect(costCalls()).toHaveLength(2);
    expect(outcomes).toEqual(['chart', 'cached', 'chart']);
    expect(log.lines.join('\n')).not.toContain(platform.password);
  });

  it('a login secret that cannot be read shows the platform as unavailable, in a picture', async () => {
    const route = chartRouteFrom({
      key: async () => KEY,
      dynamo: aws.table.call,
      tableName: aws.tableName,
      secrets: aws.secrets.call,
      credentialsSecretId: 'no-such-secret',
      baseUrl: platform.url,
      now: () => now,
      logger: log.logger,
    });
    const answer = await route(token, budgetOf(10_000));
    expect(answer.headers['content-type']).toBe('image/png');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(costCalls()).toHaveLength(0);
    expect(log.lines.join('\n')).toContain('credentials_unavailable');
  });
});
