// `npm run owners` and `config explain`: how they read a stack's owner directory (a loopback
// stand-in for DynamoDB) and how they word a record's age and directory-sync's last run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_RECORD_SECONDS } from '../../lib/owners/directory.js';
import { ownersFromStack } from '../../scripts/owners-source.js';
import { costCenterLabel, lastRunText, recordAge } from '../../scripts/owners-text.js';
import { UsageError } from '../../scripts/stack.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';

describe('reading a stack’s owner directory', () => {
  let aws: FakeAws;
  const saved = { ...process.env };
  const limits = { connectionTimeoutMs: 200, requestTimeoutMs: 200, maxAttempts: 2 };
  const outputs = { DedupTableName: 'relay-deliveries-seen' };
  beforeAll(async () => {
    aws = await startFakeAws();
    Object.assign(process.env, { AWS_ENDPOINT_URL: aws.url, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' });
  });
  afterAll(async () => {
    process.env = saved;
    await aws.close();
  });

  it('a scan page that does not come in time ends in an error in our words, naming the table', async () => {
    aws.answer('DynamoDB_20120810.Scan', 'hang');
    const source = await ownersFromStack('relay', undefined, outputs, limits);
    const failure = await source.list().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as Error).message).toBe(
      'Could not read the owner directory from the table relay-deliveries-seen: DynamoDB did not answer within 0.2 s, 2 times (a busy or throttled table). Try again in a minute.',
    );
  });

  it('a refusal is named by AWS’s error code; an owner record and the last run are read the same way', async () => {
    aws.answer('DynamoDB_20120810.Scan', { error: 'AccessDeniedException', status: 400 });
    aws.answer('DynamoDB_20120810.GetItem', { error: 'AccessDeniedException', status: 400 });
    const source = await ownersFromStack('relay', undefined, outputs, limits);
    await expect(source.list()).rejects.toThrow(
      /^Could not read the owner directory from the table relay-deliveries-seen: AccessDeniedException/,
    );
    await expect(source.directory.read('123456789012')).rejects.toThrow(/^Could not read an owner record from the table/);
    await expect(source.lastRun?.()).rejects.toThrow(/^Could not read the last directory-sync run from the table/);
  });

  it('scans in small pages, following LastEvaluatedKey, and reads every owner# item as the relay does', async () => {
    const now = Math.floor(Date.now() / 1000);
    const item = (account: string) => ({
      id: { S: `owner#${account}` },
      costCenters: { L: [{ M: { id: { S: '7' }, name: { S: 'Data' } } }] },
      payers: {
        M: {
          '12345': {
            M: {
              accountKey: { S: '12345' },
              costCenters: { L: [{ M: { id: { S: '7' }, name: { S: 'Data' }, shared: { BOOL: true } } }] },
              readAt: { N: String(now) },
            },
          },
        },
      },
      readAt: { N: String(now) },
      expiresAt: { N: String(now + OWNER_RECORD_SECONDS) },
    });
    aws.answer('DynamoDB_20120810.Scan', (call) =>
      call.body['ExclusiveStartKey']
        ? { Items: [item('222222222222')] }
        : { Items: [item('111111111111')], LastEvaluatedKey: { id: { S: 'x' } } },
    );
    const before = aws.calls.length;
    const owners = await (await ownersFromStack('relay', undefined, outputs, limits)).list();
    expect(owners.map((o) => [o.accountId, o.routing])).toEqual([
      ['111111111111', [{ id: '7', name: 'Data', payer: '12345', idShared: true }]],
      ['222222222222', [{ id: '7', name: 'Data', payer: '12345', idShared: true }]],
    ]);
    const scans = aws.calls.slice(before).map((c) => c.body);
    expect(scans).toHaveLength(2);
    expect(scans[0]).toMatchObject({ TableName: 'relay-deliveries-seen', Limit: expect.any(Number) });
  });
});

describe('how the commands word the directory', () => {
  const now = 1_795_000_000;

  it('says how old a record is and when it expires, so that one nobody renewed for days does not read like a fresh one', () => {
    expect(recordAge(now - 71 * 3_600, now)).toBe('read 71 h ago, expires in 1 h');
    expect(recordAge(now - 600, now)).toBe('read 10 min ago, expires in 72 h');
  });

  it('says how the last run ended, and warns when it renewed nothing', () => {
    const run = {
      at: now - 3 * 3_600,
      payers: 3,
      payersRead: 0,
      payersSkipped: 3,
      accountsWritten: 0,
      accountsRemoved: 0,
      accountsNotWritten: 0,
    };
    expect(lastRunText({ ...run, outcome: 'failed' }, now)).toBe(
      'directory-sync last ran 3 h ago (2026-11-18T08:06:40Z): failed; 0 of 3 payers read, 0 accounts written. Records are renewed only by succeeded or continued runs: read directory-sync’s log.',
    );
    expect(lastRunText({ ...run, outcome: 'succeeded', payersRead: 3, accountsWritten: 5, accountsRemoved: 1 }, now)).toBe(
      'directory-sync last ran 3 h ago (2026-11-18T08:06:40Z): succeeded; 3 of 3 payers read, 5 accounts written, 1 no longer covered.',
    );
    expect(lastRunText(undefined, now)).toContain('directory-sync has kept no last run yet');
    expect(lastRunText({ ...run, at: now - 8 * 86_400, outcome: 'empty' }, now)).toMatch(/^directory-sync last ran 8 d 0 h ago .*: empty;/);
  });

  it('names a cost center by the form a route must use: its payer and id where another payer uses the id too', () => {
    expect(costCenterLabel({ id: 'cc-42', name: 'Data Platform' })).toBe('Data Platform (cc-42)');
    expect(costCenterLabel({ id: '7', name: 'Data', payer: '12345', idShared: true })).toBe('Data (12345:7)');
    expect(costCenterLabel({ id: '7', name: '', payer: '12345' })).toBe('7 (7)');
  });
});
