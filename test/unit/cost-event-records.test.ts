import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLAIM_SECONDS, type CostEventSubject, costEventItemId } from '../../lib/cost-events/events.js';
import { costEventWriterFrom } from '../../lib/cost-events/lazy-cost-events.js';
import { dynamoOwnerStore } from '../../lib/owners/dynamodb.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';
import { memoryAws } from '../helpers/memory-aws.js';

// A cost event as the deployed triage function and delivery-retry write it (costEventWriterFrom):
// its record on the `costevent#` item of the dedup table (the simulation's in-memory table, which
// holds conditions and reserved words as DynamoDB does), the owner directory in the same table,
// the platform's login in Secrets Manager, and the platform on loopback.

const NOW = Date.parse('2026-11-21T15:00:00Z');
const ACCOUNT = '247699517797';
const PAYER = 12345;
const LOGIN = 'cost-alert-relay/platform-login';
const subject: CostEventSubject = {
  title: 'EC2 spend up 41% in us-east-1',
  account: `Analytics (${ACCOUNT})`,
  destination: 'finops',
  by: 'Dana',
  note: 'planned load test',
  day: '2026-11-20',
};
const signal = () => AbortSignal.timeout(5_000);

let platform: FakePlatform;
beforeAll(async () => {
  platform = await startFakePlatform();
});
afterAll(() => platform.close());

describe('a cost event’s record in the dedup table', () => {
  let now: number;
  let aws: ReturnType<typeof memoryAws>;
  let log: ReturnType<typeof capturedLogger>;

  beforeEach(async () => {
    platform.reset();
    platform.events.clear();
    now = NOW;
    aws = memoryAws({ now: () => now });
    log = capturedLogger();
    aws.secrets.put(LOGIN, JSON.stringify({ username: platform.username, password: platform.password }));
    await dynamoOwnerStore(aws.table.call, aws.tableName, () => now).write({
      accountId: ACCOUNT,
      costCenters: [{ id: '7', name: 'Data' }],
      readAt: Math.floor(NOW / 1000),
      parts: [{ accountKey: String(PAYER), costCenters: [{ id: '7', name: 'Data' }], readAt: Math.floor(NOW / 1000) }],
    });
  });

  const writer = () =>
    costEventWriterFrom({
      dynamo: aws.table.call,
      tableName: aws.tableName,
      secrets: aws.secrets.call,
      credentialsSecretId: LOGIN,
      baseUrl: platform.url,
      timeoutMs: 2_000,
      now: () => now,
      logger: log.logger,
    });
  const item = () => aws.table.items().get(costEventItemId(subject));
  const posts = () => platform.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/users/events');
  const live = () => [...platform.events.values()].filter((e) => !e.deleted);

  it('writes the event once under the payer’s key and keeps its uuid; a second Expected writes none; a reopen deletes it', async () => {
    expect(await writer().apply('write', subject, signal())).toBe('written');
    const [event] = [...platform.events];
    expect(event?.[1]).toMatchObject({
      accountKey: PAYER,
      body: { title: `Expected: ${subject.title}`, date: '2026-11-20', createdBy: 'Dana' },
    });
    expect(String(event?.[1].body['description'])).toContain('Note: planned load test.');
    // The item holds the event's uuid and nothing of the claim, and expires with the anomaly's decisions.
    expect(item()).toEqual({
      id: { S: costEventItemId(subject) },
      uuid: { S: event?.[0] },
      expiresAt: { N: String(Math.floor(NOW / 1000) + 30 * 86_400) },
    });

    // Another container, another destination of the same anomaly: the table says it is written.
    expect(await writer().apply('write', { ...subject, destination: 'oncall' }, signal())).toBe('skipped');
    expect(posts()).toHaveLength(1);

    expect(await writer().apply('delete', subject, signal())).toBe('deleted');
    expect(live()).toHaveLength(0);
    expect(item()?.['uuid']).toBeUndefined();
    // Nothing left to delete: the platform is not asked again.
    expect(await writer().apply('delete', subject, signal())).toBe('skipped');
    expect(platform.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
    expect(log.lines.join('\n')).not.toContain(platform.password);
  });

  it('a writer cut off before keeping the uuid holds others off until its claim lapses; the next finds the event by its mark', async () => {
    // The platform writes the event, but the table will not take its uuid (a throttle, a crash).
    aws.faults.table = (operation, input) => {
      if (operation === 'UpdateItem' && String(input['UpdateExpression']).startsWith('SET #uuid')) throw new Error('throttled');
      return undefined;
    };
    expect(await writer().apply('write', subject, signal())).toBe('written');
    expect(log.lines.join('\n')).toContain('cost event written but its uuid could not be kept');
    aws.faults.table = undefined;
    expect(live()).toHaveLength(1);

    // While the claim lasts, another writer waits rather than write a second event, and so does a reopen.
    await expect(writer().apply('write', subject, signal())).rejects.toMatchObject({ reason: 'busy' });
    await expect(writer().apply('delete', subject, signal())).rejects.toMatchObject({ reason: 'busy' });
    expect(posts()).toHaveLength(1);

    // Past the claim: the next writer looks for the event on its day, finds it, and keeps its uuid.
    now += (CLAIM_SECONDS + 1) * 1000;
    expect(await writer().apply('write', subject, signal())).toBe('written');
    expect(posts()).toHaveLength(1);
    expect(live()).toHaveLength(1);
    expect(item()?.['uuid']?.S).toBe([...platform.events.keys()][0]);
    expect(item()?.['claimToken']).toBeUndefined();
  });

  it('a refusal from the platform gives the claim up at once: the next attempt writes without waiting for it to lapse', async () => {
    platform.queue('events', { kind: 'error', status: 503 });
    await expect(writer().apply('write', subject, signal())).rejects.toMatchObject({ reason: 'platform_unavailable' });
    expect(item()?.['claimToken']).toBeUndefined();
    expect(await writer().apply('write', subject, signal())).toBe('written');
    expect(posts()).toHaveLength(2);
    expect(live()).toHaveLength(1);
  });

  it('two reopens at once delete the one event, and both are answered', async () => {
    await writer().apply('write', subject, signal());
    expect(await Promise.all([writer().apply('delete', subject, signal()), writer().apply('delete', subject, signal())])).toEqual([
      'deleted',
      'deleted',
    ]);
    expect(live()).toHaveLength(0);
    expect(item()?.['uuid']).toBeUndefined();
  });

  it('without the platform login it writes nothing and says why, so the event waits on the retry queue', async () => {
    const missing = costEventWriterFrom({
      dynamo: aws.table.call,
      tableName: aws.tableName,
      secrets: aws.secrets.call,
      credentialsSecretId: 'no-such-secret',
      baseUrl: platform.url,
      timeoutMs: 2_000,
      now: () => now,
      logger: log.logger,
    });
    await expect(missing.apply('write', subject, signal())).rejects.toMatchObject({ reason: 'credentials_unavailable' });
    expect(posts()).toHaveLength(0);
    // Its claim stays until it lapses: the platform may have written (it did not here; a later writer looks first).
    now += (CLAIM_SECONDS + 1) * 1000;
    expect(await writer().apply('write', subject, signal())).toBe('written');
    expect(live()).toHaveLength(1);
  });
});
