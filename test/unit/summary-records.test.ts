// What an anomaly's item keeps for its destination's weekly summary, and how the summary
// function reads a week and takes it: the adapters against a loopback fake of DynamoDB's JSON
// protocol, the in-memory ledger of npm start, and the relay's first attempt deciding what to keep.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { awsJsonClient, DYNAMODB } from '../../lib/aws/json-client.js';
import { dynamoLedger } from '../../lib/dedup/dynamodb.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';
import { deliverOnce } from '../../lib/dedup/once.js';
import { summaryFields } from '../../lib/dedup/summary-fields.js';
import { SUMMARY_KEEP_SECONDS } from '../../lib/dedup/summary-record.js';
import { type Delivery, targetOf } from '../../lib/delivery/deliver.js';
import { createLogger } from '../../lib/log/logger.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { dynamoSummaryRecords, dynamoSummaryWeeks } from '../../lib/summary/dynamodb.js';
import { memorySummaryRecords } from '../../lib/summary/store.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';

let aws: FakeAws;
const saved = { ...process.env };
beforeAll(async () => {
  aws = await startFakeAws();
  Object.assign(process.env, { AWS_ENDPOINT_URL: aws.url, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' });
});
afterEach(() => {
  aws.calls.length = 0;
});
afterAll(async () => {
  process.env = saved;
  await aws.close();
});

const limits = { connectionTimeoutMs: 500, requestTimeoutMs: 300, maxAttempts: 1 };
const dynamo = () => awsJsonClient(DYNAMODB, { limits });
const now = () => 1_795_000_000_000;
const t = now() / 1000;
const WINDOW = 60;
const message = webhookMessageSchema.parse({
  metadata: { object_type: 'anomaly_alert' },
  payload: {
    title: 'EC2 <!channel> *spend*\nrose',
    message: 'up 340% — the message is never kept',
    account_id: '123456789012',
    account_name: 'Production payer',
  },
});
const note = { destination: 'finops', message, origin: 'https://api.example.com', thread: 'thread-1' };

describe('an anomaly at a destination with a summary, in the dedup table', () => {
  const ledger = () => dynamoLedger(dynamo(), { tableName: 'seen', windowSeconds: WINDOW, now });

  it('is opened with what the summary shows, inert and without the message, and lives at least 8 days', async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    expect(await ledger().startAnomaly('anomaly#1', undefined, note)).toEqual({ kind: 'opened', firstSeen: 1_795_000_000 });
    const item = aws.calls[0]?.body['Item'] as Record<string, { S?: string; N?: string }>;
    expect(item).toMatchObject({
      id: { S: 'anomaly#1' },
      firstSeen: { N: String(t) },
      summaryOf: { S: 'finops' },
      title: { S: 'EC2 <!channel> ＊spend＊ rose' },
      accountId: { S: '123456789012' },
      accountName: { S: 'Production payer' },
      origin: { S: 'https://api.example.com' },
      thread: { S: 'thread-1' },
      keptUntil: { N: String(t + SUMMARY_KEEP_SECONDS) },
      expiresAt: { N: String(t + SUMMARY_KEEP_SECONDS) },
    });
    expect(JSON.stringify(item)).not.toContain('never kept');
    // Without a summary the item is as it always was.
    await ledger().startAnomaly('anomaly#2');
    expect(aws.calls[1]?.body['Item']).toEqual({
      id: { S: 'anomaly#2' },
      firstSeen: { N: String(t) },
      followUps: { N: '0' },
      expiresAt: { N: String(t + WINDOW) },
    });
  });

  it('a later delivery writes it again only when the item lacks it or names another origin', async () => {
    const existing = {
      id: { S: 'anomaly#1' },
      firstSeen: { N: String(t - 600) },
      followUps: { N: '1' },
      expiresAt: { N: String(t + 100) },
    };
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: existing } });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    expect(await ledger().startAnomaly('anomaly#1', undefined, note)).toMatchObject({ kind: 'existing', state: { followUps: 1 } });
    const update = aws.calls[1]?.body as Record<string, unknown>;
    expect(update['ConditionExpression']).toBe('firstSeen = :first');
    expect(Object.values(update['ExpressionAttributeNames'] as object)).toEqual(
      expect.arrayContaining(['summaryOf', 'title', 'accountId', 'accountName', 'origin', 'thread', 'keptUntil']),
    );
    expect(update['ExpressionAttributeValues']).toMatchObject({ ':keep': { N: String(t - 600 + SUMMARY_KEEP_SECONDS) } });

    aws.calls.length = 0;
    const kept = { ...existing, summaryOf: { S: 'finops' }, origin: { S: 'https://api.example.com' } };
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: kept } });
    await ledger().startAnomaly('anomaly#1', undefined, note);
    expect(aws.calls.map((c) => c.target)).toEqual(['DynamoDB_20120810.PutItem']);
    // A refresh that fails costs the delivery nothing: the follow-up goes on.
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: existing } });
    aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ProvisionedThroughputExceededException', status: 400 });
    expect(await ledger().startAnomaly('anomaly#1', undefined, note)).toMatchObject({ kind: 'existing' });
  });

  it('an item the triage function wrote first is opened in place with what the summary shows', async () => {
    const triageOnly = { id: { S: 'anomaly#1' }, triage: { S: 'acknowledged' }, expiresAt: { N: String(t + 30 * 86_400) } };
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: triageOnly } });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    expect(await ledger().startAnomaly('anomaly#1', undefined, note)).toMatchObject({ kind: 'opened' });
    const update = aws.calls[1]?.body as Record<string, unknown>;
    expect(update['UpdateExpression']).toMatch(/^SET firstSeen = :now, followUps = :zero, expiresAt = :expires, #s0 = :s0/);
    expect(update['ExpressionAttributeValues']).toMatchObject({ ':expires': { N: String(t + 30 * 86_400) }, ':s0': { S: 'finops' } });
  });

  it('its follow-ups and openings keep the usual window without shortening its life below keptUntil', async () => {
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await ledger().anomalyFollowedUp('anomaly#1');
    expect(aws.calls[0]?.body).toMatchObject({
      UpdateExpression:
        'ADD followUps :one SET lastUpdate = :now, firstSeen = if_not_exists(firstSeen, :now), expiresAt = if_not_exists(keptUntil, :expires)',
      ConditionExpression: 'attribute_not_exists(keptUntil) OR keptUntil >= :expires',
      ExpressionAttributeValues: { ':expires': { N: String(t + WINDOW) } },
    });
    // The window reaches past it (late in its life, or a long window): the window it is, and
    // keptUntil goes, so that later updates are one write again.
    aws.calls.length = 0;
    aws.answer('DynamoDB_20120810.UpdateItem', (call) =>
      String(call.body['ConditionExpression']).endsWith('keptUntil >= :expires') ? { error: 'ConditionalCheckFailedException' } : {},
    );
    await ledger().anomalyOpened('anomaly#1', { channel: 'C1', ts: '1.2' });
    expect(aws.calls).toHaveLength(2);
    expect(aws.calls[1]?.body).toMatchObject({
      UpdateExpression:
        'SET channel = :channel, ts = :ts, firstSeen = if_not_exists(firstSeen, :now), expiresAt = :expires REMOVE keptUntil',
      ConditionExpression: 'attribute_not_exists(keptUntil) OR keptUntil < :expires',
    });
    // keptUntil raised in between (an escalation's wait): kept, the later of the two.
    aws.calls.length = 0;
    aws.answer('DynamoDB_20120810.UpdateItem', (call) =>
      call.body['ConditionExpression'] ? { error: 'ConditionalCheckFailedException' } : {},
    );
    await ledger().anomalyFollowedUp('anomaly#1');
    expect(aws.calls).toHaveLength(3);
    expect(aws.calls[2]?.body['UpdateExpression']).toBe(
      'ADD followUps :one SET lastUpdate = :now, firstSeen = if_not_exists(firstSeen, :now), expiresAt = if_not_exists(keptUntil, :expires)',
    );
    expect(aws.calls[2]?.body['ConditionExpression']).toBeUndefined();
    aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ResourceNotFoundException' });
    await expect(ledger().anomalyFollowedUp('anomaly#1')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});

describe('the summary function’s reading of a week, and its one summary a week', () => {
  it('queries the summaries index by destination and first sighting, page by page, and reads each record', async () => {
    let page = 0;
    aws.answer('DynamoDB_20120810.Query', () =>
      ++page === 1
        ? {
            Items: [
              {
                id: { S: 'anomaly#1' },
                summaryOf: { S: 'finops' },
                firstSeen: { N: '100' },
                title: { S: 'EC2' },
                accountId: { S: '1' },
                accountName: { S: 'Payer' },
                origin: { S: 'https://api.example.com' },
                followUps: { N: '2' },
                triage: { S: 'snoozed' },
                triageBy: { S: 'Lee' },
                triageAt: { N: '150' },
                triageUntil: { N: '250' },
              },
              { id: { S: 'anomaly#broken' } },
            ],
            LastEvaluatedKey: { id: { S: 'anomaly#1' }, summaryOf: { S: 'finops' }, firstSeen: { N: '100' } },
          }
        : { Items: [{ id: { S: 'anomaly#2' }, firstSeen: { N: '120' }, triage: { S: 'bogus' } }] },
    );
    const records = await dynamoSummaryRecords(dynamo(), 'seen').since('finops', 90);
    expect(records).toEqual([
      {
        id: 'anomaly#1',
        title: 'EC2',
        accountId: '1',
        accountName: 'Payer',
        origin: 'https://api.example.com',
        thread: undefined,
        firstSeen: 100,
        followUps: 2,
        triage: { state: 'snoozed', by: 'Lee', at: 150, until: 250 },
      },
      { id: 'anomaly#2', title: '', accountId: '', accountName: '', origin: undefined, thread: undefined, firstSeen: 120, followUps: 0 },
    ]);
    expect(aws.calls.map((c) => c.target)).toEqual(['DynamoDB_20120810.Query', 'DynamoDB_20120810.Query']);
    expect(aws.calls[0]?.body).toMatchObject({
      TableName: 'seen',
      IndexName: 'summaries',
      KeyConditionExpression: '#destination = :destination AND #firstSeen >= :from',
      ExpressionAttributeNames: { '#destination': 'summaryOf', '#firstSeen': 'firstSeen' },
      ExpressionAttributeValues: { ':destination': { S: 'finops' }, ':from': { N: '90' } },
    });
    expect(aws.calls[1]?.body['ExclusiveStartKey']).toEqual({
      id: { S: 'anomaly#1' },
      summaryOf: { S: 'finops' },
      firstSeen: { N: '100' },
    });
  });

  it('takes a week with one conditional write, marks it posted with where it ended, and gives back only its own hold', async () => {
    const weeks = dynamoSummaryWeeks(dynamo(), 'seen', now);
    aws.answer('DynamoDB_20120810.PutItem', {});
    expect(await weeks.take('finops', '2026-W48', { token: 'mine', holdSeconds: 65 })).toBe(true);
    expect(aws.calls[0]?.body).toMatchObject({
      Item: {
        id: { S: 'summary#finops#2026-W48' },
        state: { S: 'taken' },
        token: { S: 'mine' },
        holdUntil: { N: String(t + 65) },
        expiresAt: { N: String(t + 8 * 86_400) },
      },
      ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now OR (#state = :taken AND holdUntil < :now)',
    });
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException' });
    expect(await weeks.take('finops', '2026-W48', { token: 'other', holdSeconds: 65 })).toBe(false);
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ResourceNotFoundException' });
    await expect(weeks.take('finops', '2026-W48', { token: 'x', holdSeconds: 1 })).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    aws.answer('DynamoDB_20120810.PutItem', {});
    await weeks.posted('finops', '2026-W48', t - 30);
    expect(aws.calls.at(-1)?.body['Item']).toEqual({
      id: { S: 'summary#finops#2026-W48' },
      state: { S: 'posted' },
      coveredTo: { N: String(t - 30) },
      expiresAt: { N: String(t + 8 * 86_400) },
    });
    aws.answer('DynamoDB_20120810.DeleteItem', { error: 'ConditionalCheckFailedException' });
    await expect(weeks.release('finops', '2026-W48', 'mine')).resolves.toBeUndefined();
    expect(aws.calls.at(-1)?.body).toMatchObject({
      ConditionExpression: '#token = :token',
      ExpressionAttributeValues: { ':token': { S: 'mine' } },
    });
    aws.answer('DynamoDB_20120810.DeleteItem', { error: 'ResourceNotFoundException' });
    await expect(weeks.release('finops', '2026-W48', 'mine')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('reads where a posted week ended with one consistent read; a week taken, missing or posted without it tells nothing', async () => {
    const weeks = dynamoSummaryWeeks(dynamo(), 'seen', now);
    aws.answer('DynamoDB_20120810.GetItem', { Item: { state: { S: 'posted' }, coveredTo: { N: String(t - 30) } } });
    expect(await weeks.coveredTo('finops', '2026-W47')).toBe(t - 30);
    expect(aws.calls).toHaveLength(1);
    expect(aws.calls[0]).toMatchObject({
      target: 'DynamoDB_20120810.GetItem',
      body: { TableName: 'seen', Key: { id: { S: 'summary#finops#2026-W47' } }, ConsistentRead: true },
    });
    for (const answer of [
      { Item: { state: { S: 'taken' }, coveredTo: { N: '1' } } },
      { Item: { state: { S: 'posted' } } },
      { Item: { state: { S: 'posted' }, coveredTo: { S: 'soon' } } },
      {},
    ]) {
      aws.answer('DynamoDB_20120810.GetItem', answer);
      expect(await weeks.coveredTo('finops', '2026-W47')).toBeUndefined();
    }
    aws.answer('DynamoDB_20120810.GetItem', { error: 'ResourceNotFoundException' });
    await expect(weeks.coveredTo('finops', '2026-W47')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});

describe('the relay keeps what a summary shows only for destinations that have one', () => {
  const delivered = { first: async () => ({ kind: 'delivered' as const }) } as unknown as Delivery;
  const deliver = (ledger: ReturnType<typeof inMemoryLedger>) =>
    deliverOnce({ ledger, delivery: delivered, logger: createLogger({ sink: () => {} }) });

  it('at a summarised destination the in-memory ledger keeps it, with the latest origin; elsewhere nothing', async () => {
    const ledger = inMemoryLedger(now);
    const summarised = { url: 'https://hooks.slack.com/services/T/B/X', summary: { weekday: 'monday' as const, hour: 9, timeZone: 'UTC' } };
    const alert = (name: string, destination: object, origin: string) => ({
      deliveryId: 'd1',
      target: { name, destination: destination as never },
      message,
      origin,
    });
    await deliver(ledger)(alert('finops', summarised, 'https://first.example.com'), budgetOf(10_000));
    await deliver(ledger)(alert('plain', { url: 'https://hooks.slack.com/services/T/B/Y' }, 'https://first.example.com'), budgetOf(10_000));
    const id = anomalyRecordId(message, 'finops');
    expect([...ledger.summaries.keys()]).toEqual([id]);
    expect(ledger.summaries.get(id)).toEqual(summaryFields({ destination: 'finops', message, origin: 'https://first.example.com' }));
    const followUp = webhookMessageSchema.parse({ ...message, payload: { ...message.payload, message: 'up 400%' } });
    await deliver(ledger)({ ...alert('finops', summarised, 'https://second.example.com'), message: followUp }, budgetOf(10_000));
    expect(ledger.summaries.get(id)?.origin).toBe('https://second.example.com');
    const [record] = await memorySummaryRecords(ledger, () => ({ state: 'acknowledged', by: 'Dana', at: t })).since('finops', 0);
    expect(record).toMatchObject({ id, followUps: 1, triage: { state: 'acknowledged', by: 'Dana' }, origin: 'https://second.example.com' });
    expect(await memorySummaryRecords(ledger).since('finops', t + 1)).toEqual([]);
    expect(await memorySummaryRecords(ledger).since('plain', 0)).toEqual([]);
  });

  it('keeps nothing of a quiet test delivery or a report there: a summary names anomalies', async () => {
    const ledger = inMemoryLedger(now);
    const destination = {
      url: 'https://hooks.slack.com/services/T/B/X',
      summary: { weekday: 'monday' as const, hour: 9, timeZone: 'UTC' },
    };
    // As the relay makes a quiet test's target (`npm run send -- --test`).
    const quiet = targetOf('finops', destination as never, undefined, true);
    await deliver(ledger)({ deliveryId: 'd1', target: quiet, message, origin: 'https://api.example.com' }, budgetOf(10_000));
    const report = webhookMessageSchema.parse({
      metadata: { object_type: 'recommendation_report' },
      payload: { title: 'Weekly recommendations: 14 open', message: 'Rightsize 6 instances', account_id: '123456789012' },
    });
    const target = targetOf('finops', destination as never, undefined);
    await deliver(ledger)({ deliveryId: 'd2', target, message: report, origin: 'https://api.example.com' }, budgetOf(10_000));
    expect(await memorySummaryRecords(ledger).since('finops', 0)).toEqual([]);
    // An anomaly at the same destination still is kept.
    await deliver(ledger)({ deliveryId: 'd3', target, message, origin: 'https://api.example.com' }, budgetOf(10_000));
    expect(await memorySummaryRecords(ledger).since('finops', 0)).toHaveLength(1);
  });
});
