import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCostApiClient } from '../../lib/cost-api/client.js';
import { CostApiError } from '../../lib/cost-api/errors.js';
import { platformSession } from '../../lib/cost-api/session.js';
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

// A deadline a busy machine always meets; only the hang test waits out a short one.
const client = (timeoutMs = 10_000) => createCostApiClient({ baseUrl: platform.url, backoffBaseMs: 10, timeoutMs });
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
    const hung = await client(300)
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

describe('the platform session one container keeps', () => {
  const credentials = () => ({ username: platform.username, password: platform.password });
  const signIns = () => platform.requests.filter((r) => r.path === '/api/v1/authentication/token/generate').length;
  const events = (session: ReturnType<typeof platformSession>) =>
    session.withAuth('12345', (auth) => client().listEvents(auth, { from: '2026-11-21', to: '2026-11-21' }));

  it('signs in once for the calls of an hour, once more when the token is refused, and again after the hour', async () => {
    let now = Date.parse('2026-11-21T15:00:00Z');
    const session = platformSession({ client: client(), credentials: async () => credentials(), now: () => now });
    await Promise.all([events(session), events(session), events(session)]);
    expect(signIns()).toBe(1);
    // A password change revokes the token: the next call signs in again once and gets its answer.
    platform.revokeTokens();
    expect(await events(session)).toEqual([]);
    expect(signIns()).toBe(2);
    now += 59 * 60_000;
    await events(session);
    expect(signIns()).toBe(2);
    now += 2 * 60_000;
    await events(session);
    expect(signIns()).toBe(3);
    // Every call carried the payer's account-scoped key.
    for (const r of platform.requests.filter((r) => r.path === '/api/v1/users/events')) {
      expect(r.headers['apikey']).toBe(`${platform.userKey}:12345:`);
    }
  });

  it('a sign-in that fails is not remembered: a call that waited on it signs in itself, and the next call too', async () => {
    const session = platformSession({ client: client(), credentials: async () => credentials(), now: Date.now });
    platform.queue('token', { kind: 'error', status: 401 });
    const [first, second] = await Promise.allSettled([events(session), events(session)]);
    expect(first).toMatchObject({ status: 'rejected', reason: { reason: 'login_failed' } });
    expect(second).toEqual({ status: 'fulfilled', value: [] });
    expect(signIns()).toBe(2);
  });
});
