import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCostApiClient } from '../../lib/cost-api/client.js';
import { CostApiError } from '../../lib/cost-api/errors.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';

// The platform in the loop: one account's daily cost, and cost events, against a loopback platform
// that checks the documented query, headers and account-scoped key (reference/cost-api.md).

let platform: FakePlatform;
beforeAll(async () => {
  platform = await startFakePlatform();
});
afterAll(() => platform.close());
beforeEach(() => {
  platform.reset();
  platform.dailyCosts.clear();
  platform.events.clear();
});

const client = () => createCostApiClient({ baseUrl: platform.url, backoffBaseMs: 10, timeoutMs: 500 });
async function auth(accountKey = 12345) {
  const token = await client().generateToken({ username: platform.username, password: platform.password });
  return { apikey: `${token.userKey}:${accountKey}:`, authorization: token.authorization };
}

describe("an account's daily cost", () => {
  it('asks with the documented query and an account-scoped key, follows nextToken, and reads numbers and numeric strings', async () => {
    platform.configure({ pageSize: 2 });
    platform.dailyCosts.set(
      '247699517797',
      new Map<string, number | string>([
        ['2026-10-23', 10],
        ['2026-10-24', '12.50'],
        ['2026-11-20', 15],
        ['2026-11-21', 480.25],
        ['2026-11-22', 999],
      ]),
    );
    const days = await client().dailyCost(await auth(), { accountId: '247699517797', from: '2026-10-23', to: '2026-11-21' });
    expect(Object.fromEntries(days)).toEqual({ '2026-10-23': 10, '2026-10-24': 12.5, '2026-11-20': 15, '2026-11-21': 480.25 });
    const asked = platform.requests.filter((r) => r.path === '/api/v2/invoices/cost-and-usage');
    expect(asked).toHaveLength(2);
    expect(asked[0]?.query).toEqual({
      groupBy: 'linkedaccid',
      periodGranLevel: 'day',
      costType: 'cost',
      isAmortized: 'true',
      startDate: '2026-10-23',
      endDate: '2026-11-21',
      'filters[linkedaccid]': '247699517797',
    });
    expect(asked[1]?.query['token']).toBeDefined();
    expect(asked[0]?.headers['apikey']).toMatch(/^uk[0-9a-f]+:12345:$/);
  });

  it('a shape it does not know, a refusal, a 5xx and a hang are errors in our words, without the key or token', async () => {
    const credentials = await auth();
    platform.queue('costAndUsage', { kind: 'answer', status: 200, body: { data: [{ usage_date: '2026-11-21', total_cost: 'lots' }] } });
    const shape = await client()
      .dailyCost(credentials, { accountId: '1', from: '2026-11-01', to: '2026-11-21' })
      .catch((e: unknown) => e);
    expect(shape).toBeInstanceOf(CostApiError);
    expect((shape as CostApiError).reason).toBe('invalid_response');
    platform.setBehaviour('costAndUsage', { kind: 'error', status: 503 });
    const down = await client()
      .dailyCost(credentials, { accountId: '1', from: '2026-11-01', to: '2026-11-21' })
      .catch((e: unknown) => e);
    expect((down as CostApiError).reason).toBe('platform_unavailable');
    platform.setBehaviour('costAndUsage', { kind: 'hang' });
    const hung = await client()
      .dailyCost(credentials, { accountId: '1', from: '2026-11-01', to: '2026-11-21' })
      .catch((e: unknown) => e);
    expect((hung as CostApiError).reason).toBe('timeout');
    for (const error of [shape, down, hung]) {
      expect(String((error as Error).message)).not.toContain(credentials.authorization);
      expect(String((error as Error).message)).not.toContain(credentials.apikey);
    }
  });
});

describe('cost events', () => {
  it('writes one with the four fields the platform requires, reads its uuid, and deletes it (a missing one is deleted already)', async () => {
    const credentials = await auth();
    const event = { title: 'Expected: EC2 spend rose', description: 'Marked expected by Dana', date: '2026-11-21', createdBy: 'Dana' };
    const uuid = await client().createEvent(credentials, event);
    expect(platform.events.get(uuid)).toMatchObject({ accountKey: 12345, body: event });
    await client().deleteEvent(credentials, uuid);
    expect(platform.events.get(uuid)?.deleted).toBe(true);
    await client().deleteEvent(credentials, uuid);
    platform.queue('events', { kind: 'answer', status: 201, body: { data: { uuid: 'under-data' } } });
    expect(await client().createEvent(credentials, event)).toBe('under-data');
    platform.queue('events', { kind: 'answer', status: 201, body: { id: 1 } });
    expect(
      (
        (await client()
          .createEvent(credentials, event)
          .catch((e: unknown) => e)) as CostApiError
      ).reason,
    ).toBe('invalid_response');
  });
});
