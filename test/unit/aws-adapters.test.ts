import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lazySqs } from '../../lib/aws/clients.js';
import { awsJsonClient, DYNAMODB, SECRETS_MANAGER } from '../../lib/aws/json-client.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { secretsManagerReader } from '../../lib/config/secrets-manager.js';
import { dynamoLedger } from '../../lib/dedup/dynamodb.js';
import { createDelivery, targetOf } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { escalationJob } from '../../lib/escalation/job.js';
import { watch } from '../../lib/escalation/lazy-escalation-relay.js';
import { sqsEscalationQueue } from '../../lib/escalation/queue.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { destinationType } from '../../lib/notify/kinds.js';
import { sqsDeadLetters, sqsMessageOps, sqsRetryQueue } from '../../lib/queue/sqs.js';
import { createRetryWorkerFromEnvironment } from '../../lib/retry/from-environment.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';
import { capturedLogger, chatServices } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

// The adapters against a loopback fake speaking the AWS JSON protocol: what they send, and
// how they fail. The real emulator is the acceptance tests' business.
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
const message = webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title: 'Spend up' } });

describe('the SQS adapters', () => {
  const queueUrl = () => `${aws.url}/123456789012/delivery-retry`;

  it('queue a job with its destination as an attribute and a delay within SQS limits', async () => {
    const sqs = lazySqs(limits);
    await sqsRetryQueue(sqs, queueUrl()).enqueue(newJob('d1', 'finops', message, 'http_500', 0), 4_000);
    const [call] = aws.calls;
    expect(call?.target).toBe('AmazonSQS.SendMessage');
    expect(call?.body).toMatchObject({
      QueueUrl: queueUrl(),
      DelaySeconds: 900,
      MessageAttributes: { destination: { DataType: 'String', StringValue: 'finops' } },
    });
    expect(JSON.parse(String(call?.body['MessageBody']))).toMatchObject({ version: 2, destination: 'finops' });
  });

  it('park with reason and destination, leaving out what is absent', async () => {
    const sqs = lazySqs(limits);
    await sqsDeadLetters(sqs, queueUrl()).park('{"x":1}', 'malformed_message');
    expect(aws.calls[0]?.body['MessageAttributes']).toEqual({ reason: { DataType: 'String', StringValue: 'malformed_message' } });
    expect(aws.calls[0]?.body).not.toHaveProperty('DelaySeconds');
  });

  it('change visibility in whole seconds', async () => {
    await sqsMessageOps(lazySqs(limits), queueUrl()).changeVisibility('handle-1', 12.2);
    expect(aws.calls[0]).toMatchObject({
      target: 'AmazonSQS.ChangeMessageVisibility',
      body: { ReceiptHandle: 'handle-1', VisibilityTimeout: 13 },
    });
  });

  it('load the SDK once per container', async () => {
    const sqs = lazySqs(limits);
    const [a, b] = await Promise.all([sqs(), sqs()]);
    expect(a.client).toBe(b.client);
  });

  it('give up on a queue that accepts the connection and never answers', async () => {
    aws.answer('AmazonSQS.SendMessage', 'hang');
    const started = Date.now();
    await expect(sqsDeadLetters(lazySqs(limits), queueUrl()).park('{}', 'x')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    aws.answer('AmazonSQS.SendMessage', (call) => ({
      MessageId: 'm',
      MD5OfMessageBody: createHash('md5').update(String(call.body['MessageBody'])).digest('hex'),
    }));
  });

  it('stop at once when the caller aborts', async () => {
    aws.answer('AmazonSQS.ChangeMessageVisibility', 'hang');
    const controller = new AbortController();
    const pending = sqsMessageOps(lazySqs({ ...limits, requestTimeoutMs: 10_000 }), queueUrl()).changeVisibility('h', 1, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toThrow();
  });
});

describe('the Secrets Manager reader', () => {
  const reader = () => secretsManagerReader(awsJsonClient(SECRETS_MANAGER, { limits }));

  it('reads the current value with its creation date, or a named stage', async () => {
    aws.answer('secretsmanager.GetSecretValue', (call) => ({
      SecretString: `value-of-${String(call.body['VersionStage'] ?? 'current')}`,
      CreatedDate: 1_764_000_000,
    }));
    expect(await reader().getSecretString('relay-config')).toEqual({ value: 'value-of-current', createdDate: new Date(1_764_000_000_000) });
    expect((await reader().getSecretString('relay-config', 'AWSPREVIOUS')).value).toBe('value-of-AWSPREVIOUS');
  });

  it('names the AWS error, never its message', async () => {
    aws.answer('secretsmanager.GetSecretValue', { error: 'ResourceNotFoundException' });
    await expect(reader().getSecretString('missing')).rejects.toMatchObject({
      name: 'ConfigUnavailableError',
      reason: 'ResourceNotFoundException',
    });
  });

  it('refuses a binary secret', async () => {
    aws.answer('secretsmanager.GetSecretValue', { SecretBinary: 'AAAA' });
    await expect(reader().getSecretString('binary')).rejects.toMatchObject({ reason: 'no_secret_string' });
  });

  it('fails a read that hangs instead of waiting for ever', async () => {
    aws.answer('secretsmanager.GetSecretValue', 'hang');
    const started = Date.now();
    await expect(reader().getSecretString('slow')).rejects.toMatchObject({ name: 'ConfigUnavailableError' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('the DynamoDB dedup ledger', () => {
  const now = () => Date.parse('2026-11-22T12:00:00Z');
  const ledger = () => dynamoLedger(awsJsonClient(DYNAMODB, { limits }), { tableName: 'seen', windowSeconds: 86_400, now });
  const t = now() / 1000;

  const mine = { token: 'token-of-this-attempt', holdSeconds: 20 };

  it('claims with one conditional write that frees expired records and stale claims', async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    expect(await ledger().claim('abc', mine)).toEqual({ kind: 'claimed' });
    const [call] = aws.calls;
    expect(call?.body).toMatchObject({
      TableName: 'seen',
      Item: {
        id: { S: 'abc' },
        state: { S: 'claimed' },
        claimToken: { S: 'token-of-this-attempt' },
        claimUntil: { N: String(t + 20) },
        expiresAt: { N: String(t + 86_400) },
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      ExpressionAttributeValues: { ':now': { N: String(t) }, ':claimed': { S: 'claimed' }, ':parked': { S: 'parked' } },
    });
    expect(call?.body['ConditionExpression']).toBe(
      'attribute_not_exists(id) OR expiresAt < :now OR #state = :parked OR (#state = :claimed AND claimUntil < :now)',
    );
  });

  const failed = (state: string, claim: Record<string, unknown> = {}) => ({
    error: 'ConditionalCheckFailedException',
    fields: { Item: { id: { S: 'abc' }, state: { S: state }, ...claim } },
  });

  it('a failed claim reads the state the table returned: done, or in progress elsewhere until its claim ends', async () => {
    aws.answer('DynamoDB_20120810.PutItem', failed('delivered'));
    expect(await ledger().claim('abc', mine)).toEqual({ kind: 'done', state: 'delivered' });
    aws.answer('DynamoDB_20120810.PutItem', failed('queued'));
    expect(await ledger().claim('abc', mine)).toEqual({ kind: 'done', state: 'queued' });
    aws.answer('DynamoDB_20120810.PutItem', failed('claimed', { claimToken: { S: 'another attempt' }, claimUntil: { N: String(t + 12) } }));
    expect(await ledger().claim('abc', mine)).toEqual({ kind: 'in_progress', retryAfterSeconds: 12 });
  });

  it("a claim whose write succeeded but whose answer was lost is recognised as this attempt's own on the retry", async () => {
    aws.answer(
      'DynamoDB_20120810.PutItem',
      failed('claimed', { claimToken: { S: 'token-of-this-attempt' }, claimUntil: { N: String(t + 20) } }),
    );
    expect(await ledger().claim('abc', mine)).toEqual({ kind: 'claimed' });
  });

  it("a queued alert's later attempt claims it while it waits on the queue; a copy of its job finds the claim, the alert delivered or parked", async () => {
    const job = { firstAttemptAt: '2026-11-22T11:00:00.000Z' };
    const queued = { ...mine, job };
    aws.answer('DynamoDB_20120810.PutItem', {});
    expect(await ledger().claimQueued('abc', queued)).toEqual({ kind: 'claimed' });
    expect(aws.calls[0]?.body['ConditionExpression']).toBe(
      'attribute_not_exists(id) OR expiresAt < :now OR #state = :queued' +
        ' OR (#state = :parked AND parkedFirst <> :first) OR (#state = :claimed AND claimUntil < :now)',
    );
    expect(aws.calls[0]?.body).toMatchObject({
      Item: { state: { S: 'claimed' }, claimToken: { S: 'token-of-this-attempt' }, claimUntil: { N: String(t + 20) } },
      ExpressionAttributeValues: {
        ':now': { N: String(t) },
        ':claimed': { S: 'claimed' },
        ':queued': { S: 'queued' },
        ':parked': { S: 'parked' },
        ':first': { S: '2026-11-22T11:00:00.000Z' },
      },
    });
    aws.answer('DynamoDB_20120810.PutItem', failed('claimed', { claimToken: { S: 'another copy' }, claimUntil: { N: String(t + 30) } }));
    expect(await ledger().claimQueued('abc', queued)).toEqual({ kind: 'in_progress', retryAfterSeconds: 30 });
    aws.answer('DynamoDB_20120810.PutItem', failed('delivered'));
    expect(await ledger().claimQueued('abc', queued)).toEqual({ kind: 'done', state: 'delivered' });
    aws.answer('DynamoDB_20120810.PutItem', failed('parked', { parkedFirst: { S: job.firstAttemptAt }, parkToken: { S: 'parking' } }));
    expect(await ledger().claimQueued('abc', queued)).toEqual({ kind: 'done', state: 'parked' });
    aws.answer(
      'DynamoDB_20120810.PutItem',
      failed('claimed', { claimToken: { S: 'token-of-this-attempt' }, claimUntil: { N: String(t + 20) } }),
    );
    expect(await ledger().claimQueued('abc', queued)).toEqual({ kind: 'claimed' });
  });

  it("a parked body's redrive claims with its parking's token as well", async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    await ledger().claimQueued('abc', { ...mine, job: { firstAttemptAt: '2026-11-22T11:00:00.000Z', parkToken: 'parking' } });
    expect(aws.calls[0]?.body['ConditionExpression']).toBe(
      'attribute_not_exists(id) OR expiresAt < :now OR #state = :queued' +
        ' OR (#state = :parked AND (parkedFirst <> :first OR parkToken = :park)) OR (#state = :claimed AND claimUntil < :now)',
    );
    expect(aws.calls[0]?.body).toMatchObject({ ExpressionAttributeValues: { ':park': { S: 'parking' } } });
  });

  it("parks with the time of the parked job's first attempt and its parking's token, expiring as any record", async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    await ledger().park('abc', { firstAttemptAt: '2026-11-22T11:00:00.000Z', parkToken: 'parking' });
    expect(aws.calls[0]?.body).toEqual({
      TableName: 'seen',
      Item: {
        id: { S: 'abc' },
        state: { S: 'parked' },
        parkedFirst: { S: '2026-11-22T11:00:00.000Z' },
        parkToken: { S: 'parking' },
        expiresAt: { N: String(t + 86_400) },
      },
    });
  });

  it("releases only its own claim: a later attempt's claim or a delivered record stays", async () => {
    aws.answer('DynamoDB_20120810.DeleteItem', {});
    await ledger().release('abc', 'token-of-this-attempt');
    expect(aws.calls[0]?.body).toMatchObject({
      Key: { id: { S: 'abc' } },
      ConditionExpression: 'claimToken = :token',
      ExpressionAttributeValues: { ':token': { S: 'token-of-this-attempt' } },
    });
  });

  it('records a state for the window, and releases anything but a delivered record', async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    aws.answer('DynamoDB_20120810.DeleteItem', {});
    await ledger().record('abc', 'queued');
    expect(aws.calls[0]?.body).toEqual({
      TableName: 'seen',
      Item: { id: { S: 'abc' }, state: { S: 'queued' }, expiresAt: { N: String(t + 86_400) } },
    });
    await ledger().release('abc');
    expect(aws.calls[1]?.body).toMatchObject({ Key: { id: { S: 'abc' } }, ConditionExpression: '#state <> :delivered' });
    aws.answer('DynamoDB_20120810.DeleteItem', { error: 'ConditionalCheckFailedException' });
    await expect(ledger().release('abc')).resolves.toBeUndefined();
  });

  it("opens an anomaly with one conditional write, or reads the existing one's state: ids and times, no text", async () => {
    aws.answer('DynamoDB_20120810.PutItem', {});
    // The opening's own first-seen time comes back: an escalation's wait starts there.
    expect(await ledger().startAnomaly('anomaly#1')).toEqual({ kind: 'opened', firstSeen: t });
    expect(aws.calls[0]?.body).toMatchObject({
      Item: { id: { S: 'anomaly#1' }, firstSeen: { N: String(t) }, followUps: { N: '0' }, expiresAt: { N: String(t + 86_400) } },
      ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
    });
    const item = {
      id: { S: 'anomaly#1' },
      firstSeen: { N: String(t - 600) },
      followUps: { N: '2' },
      channel: { S: 'C1' },
      ts: { S: '1.2' },
    };
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: item } });
    expect(await ledger().startAnomaly('anomaly#1')).toEqual({
      kind: 'existing',
      state: { firstSeen: t - 600, followUps: 2, opening: { channel: 'C1', ts: '1.2' } },
    });
    // An item that no opening wrote (the triage function's, after the anomaly's record expired)
    // is opened in place, keeping what was decided and its longer life: never read as an opening in flight.
    const triageOnly = {
      id: { S: 'anomaly#1' },
      triage: { S: 'acknowledged' },
      triageBy: { S: 'Dana' },
      triageAt: { N: String(t - 5) },
      expiresAt: { N: String(t + 30 * 86_400) },
    };
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: triageOnly } });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    expect(await ledger().startAnomaly('anomaly#1')).toEqual({
      kind: 'opened',
      firstSeen: t,
      triage: { state: 'acknowledged', by: 'Dana', at: t - 5 },
    });
    expect(aws.calls.at(-1)?.body).toMatchObject({
      Key: { id: { S: 'anomaly#1' } },
      UpdateExpression: 'SET firstSeen = :now, followUps = :zero, expiresAt = :expires',
      ConditionExpression: 'attribute_not_exists(firstSeen)',
      ExpressionAttributeValues: { ':now': { N: String(t) }, ':expires': { N: String(t + 30 * 86_400) } },
    });
    // Of two deliveries that find it together, the one that loses the condition follows up the other's opening.
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: triageOnly } });
    aws.answer('DynamoDB_20120810.UpdateItem', {
      error: 'ConditionalCheckFailedException',
      fields: { Item: { ...triageOnly, firstSeen: { N: String(t) }, followUps: { N: '0' } } },
    });
    expect(await ledger().startAnomaly('anomaly#1')).toMatchObject({ kind: 'existing', state: { firstSeen: t, followUps: 0 } });
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException' });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    expect(await ledger().startAnomaly('anomaly#1')).toEqual({ kind: 'opened', firstSeen: t });
    // The triage function's attributes on the same item come back in the same round trip.
    const triaged = {
      ...item,
      triage: { S: 'snoozed' },
      triageBy: { S: 'Dana' },
      triageAt: { N: String(t) },
      triageUntil: { N: String(t + 86_400) },
    };
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: triaged } });
    expect((await ledger().startAnomaly('anomaly#1')) as unknown).toMatchObject({
      state: { triage: { state: 'snoozed', by: 'Dana', at: t, until: t + 86_400 } },
    });
    aws.answer('DynamoDB_20120810.PutItem', {
      error: 'ConditionalCheckFailedException',
      fields: { Item: { ...item, triage: { S: 'acknowledged' } } },
    });
    expect((await ledger().startAnomaly('anomaly#1')) as unknown).toMatchObject({ state: { triage: { state: 'acknowledged' } } });
    aws.answer('DynamoDB_20120810.PutItem', {
      error: 'ConditionalCheckFailedException',
      fields: { Item: { ...item, triage: { S: 'bogus' } } },
    });
    expect(await ledger().startAnomaly('anomaly#1')).not.toHaveProperty('state.triage');
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ResourceNotFoundException' });
    await expect(ledger().startAnomaly('anomaly#1')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('reads an anomaly as it stands with one consistent read: its last update and triage; none when gone or not opened', async () => {
    const item = {
      id: { S: 'anomaly#1' },
      firstSeen: { N: String(t - 90_000) },
      followUps: { N: '2' },
      lastUpdate: { N: String(t - 100) },
      expiresAt: { N: String(t + 600) },
      triage: { S: 'snoozed' },
      triageUntil: { N: String(t - 10) },
    };
    aws.answer('DynamoDB_20120810.GetItem', { Item: item });
    expect(await ledger().readAnomaly('anomaly#1')).toEqual({
      firstSeen: t - 90_000,
      followUps: 2,
      lastUpdate: t - 100,
      triage: { state: 'snoozed', until: t - 10 },
    });
    expect(aws.calls[0]?.body).toMatchObject({ TableName: 'seen', Key: { id: { S: 'anomaly#1' } }, ConsistentRead: true });
    aws.answer('DynamoDB_20120810.GetItem', { Item: { ...item, expiresAt: { N: String(t - 1) } } });
    expect(await ledger().readAnomaly('anomaly#1')).toBeUndefined();
    aws.answer('DynamoDB_20120810.GetItem', { Item: { id: { S: 'anomaly#1' }, triage: { S: 'expected' } } });
    expect(await ledger().readAnomaly('anomaly#1')).toBeUndefined();
    aws.answer('DynamoDB_20120810.GetItem', {});
    expect(await ledger().readAnomaly('anomaly#1')).toBeUndefined();
  });

  it('records where the opening is and counts follow-ups; forgets only an opening nobody has', async () => {
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await ledger().anomalyOpened('anomaly#1', { channel: 'C1', ts: '1.2' });
    await ledger().anomalyFollowedUp('anomaly#1');
    expect(aws.calls[0]?.body).toMatchObject({ Key: { id: { S: 'anomaly#1' } }, ExpressionAttributeValues: { ':ts': { S: '1.2' } } });
    expect(aws.calls[1]?.body['UpdateExpression']).toMatch(/^ADD followUps :one/);
    aws.answer('DynamoDB_20120810.DeleteItem', {});
    await ledger().forgetAnomaly('anomaly#1');
    expect(aws.calls[2]?.body['ConditionExpression']).toBe(
      'attribute_not_exists(ts) AND followUps = :zero AND attribute_not_exists(triage)',
    );
    aws.answer('DynamoDB_20120810.DeleteItem', { error: 'ConditionalCheckFailedException' });
    await expect(ledger().forgetAnomaly('anomaly#1')).resolves.toBeUndefined();
    expect(aws.calls).toHaveLength(4);
    // What someone decided stays: only the opening is removed.
    aws.answer('DynamoDB_20120810.DeleteItem', {
      error: 'ConditionalCheckFailedException',
      fields: { Item: { id: { S: 'anomaly#1' }, followUps: { N: '0' }, triage: { S: 'snoozed' } } },
    });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await ledger().forgetAnomaly('anomaly#1');
    expect(aws.calls.at(-1)?.body).toMatchObject({
      UpdateExpression: 'REMOVE firstSeen, followUps',
      ConditionExpression: 'attribute_not_exists(ts) AND followUps = :zero',
    });
    aws.answer('DynamoDB_20120810.DeleteItem', { error: 'ResourceNotFoundException' });
    await expect(ledger().forgetAnomaly('anomaly#1')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it("leases an anomaly's escalation with one conditional write, and tells from the item why not", async () => {
    const escalations = await ledger().escalations();
    const claim = { token: 'lease-of-this-attempt', holdSeconds: 30, firstSeen: t - 600, updates: 1 };
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    expect(await escalations.claimEscalation('anomaly#1', claim)).toEqual({ kind: 'claimed' });
    expect(aws.calls[0]?.body).toEqual({
      TableName: 'seen',
      Key: { id: { S: 'anomaly#1' } },
      UpdateExpression: 'SET escalationUntil = :until, escalationToken = :token',
      ConditionExpression:
        'firstSeen = :firstSeen AND attribute_not_exists(triage) AND attribute_not_exists(escalatedAt)' +
        ' AND (attribute_not_exists(escalationUntil) OR escalationUntil < :now)' +
        ' AND (attribute_not_exists(followUps) OR followUps <= :updates)',
      ExpressionAttributeValues: {
        ':firstSeen': { N: String(t - 600) },
        ':until': { N: String(t + 30) },
        ':token': { S: claim.token },
        ':now': { N: String(t) },
        ':updates': { N: '1' },
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    // A job that let a newer one go first does not wait for one again.
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.claimEscalation('anomaly#1', { ...claim, updates: undefined });
    expect(aws.calls[1]?.body['ConditionExpression']).not.toContain('followUps');
    expect(aws.calls[1]?.body['ExpressionAttributeValues']).not.toHaveProperty(':updates');

    const opening = { id: { S: 'anomaly#1' }, firstSeen: { N: String(t - 600) }, followUps: { N: '1' } };
    const found = async (item?: Record<string, unknown>) => {
      aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ConditionalCheckFailedException', ...(item ? { fields: { Item: item } } : {}) });
      return escalations.claimEscalation('anomaly#1', claim);
    };
    expect(await found()).toEqual({ kind: 'gone' });
    expect(await found({ ...opening, firstSeen: { N: String(t) } })).toEqual({ kind: 'gone' });
    expect(await found({ ...opening, escalatedAt: { N: String(t - 5) }, triage: { S: 'acknowledged' } })).toEqual({ kind: 'escalated' });
    expect(await found({ ...opening, triage: { S: 'open' } })).toEqual({ kind: 'triaged' });
    expect(await found({ ...opening, escalationToken: { S: claim.token }, escalationUntil: { N: String(t + 30) } })).toEqual({
      kind: 'claimed',
    });
    expect(await found({ ...opening, escalationToken: { S: 'other' }, escalationUntil: { N: String(t + 12) } })).toEqual({
      kind: 'held',
      retryAfterSeconds: 12,
    });
    expect(await found({ ...opening, followUps: { N: '2' }, escalationUntil: { N: String(t - 1) } })).toEqual({ kind: 'newer' });
    // An unposted opening's job: only once this opening was shown.
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.claimEscalation('anomaly#1', { ...claim, unposted: true });
    expect(aws.calls.at(-1)?.body['ConditionExpression']).toMatch(/ AND openingShown = :firstSeen$/);
    const grouped = async (item: Record<string, unknown>) => {
      aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ConditionalCheckFailedException', fields: { Item: item } });
      return escalations.claimEscalation('anomaly#1', { ...claim, unposted: true });
    };
    expect(await grouped(opening)).toEqual({ kind: 'unshown' });
    expect(await grouped({ ...opening, openingShown: { N: String(t) } })).toEqual({ kind: 'unshown' });
    expect(await grouped({ ...opening, openingShown: { N: String(t - 600) }, triage: { S: 'open' } })).toEqual({ kind: 'triaged' });
    aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ProvisionedThroughputExceededException' });
    await expect(escalations.claimEscalation('anomaly#1', claim)).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
  });

  it("marks an opening escalated, ends a lease, and keeps an opening's record for its escalation: never another opening's", async () => {
    const escalations = await ledger().escalations();
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.escalated('anomaly#1', t - 600);
    expect(aws.calls.at(-1)?.body).toMatchObject({
      UpdateExpression: 'SET escalatedAt = :now REMOVE escalationUntil, escalationToken',
      ConditionExpression: 'firstSeen = :firstSeen',
      ExpressionAttributeValues: { ':firstSeen': { N: String(t - 600) }, ':now': { N: String(t) } },
    });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.releaseEscalation('anomaly#1', 'lease');
    expect(aws.calls.at(-1)?.body).toMatchObject({
      UpdateExpression: 'REMOVE escalationUntil, escalationToken',
      ConditionExpression: 'escalationToken = :token',
      ExpressionAttributeValues: { ':token': { S: 'lease' } },
    });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.keepAnomaly('anomaly#1', t - 600, t + 9_000);
    expect(aws.calls.at(-1)?.body).toMatchObject({
      // keptUntil: a follow-up's write, which sets the usual window, keeps the item at least that long.
      UpdateExpression: 'SET expiresAt = :until, keptUntil = :until',
      ConditionExpression: 'firstSeen = :firstSeen AND expiresAt < :until',
      ExpressionAttributeValues: { ':until': { N: String(t + 9_000) } },
    });
    for (const write of [
      () => escalations.escalated('anomaly#1', 1),
      () => escalations.releaseEscalation('anomaly#1', 'lease'),
      () => escalations.keepAnomaly('anomaly#1', 1, 2),
    ]) {
      aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ConditionalCheckFailedException' });
      await expect(write()).resolves.toBeUndefined();
    }
    aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ResourceNotFoundException' });
    await expect(escalations.escalated('anomaly#1', 1)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it("reads which job of an opening waits with the latest content and how long its item lives, and records a later one: never another opening's", async () => {
    const escalations = await ledger().escalations();
    aws.answer('DynamoDB_20120810.GetItem', {
      Item: { firstSeen: { N: String(t - 600) }, escalationUpdates: { N: '3' }, expiresAt: { N: String(t + 900) } },
    });
    expect(await escalations.waitingEscalation('anomaly#1', t - 600)).toEqual({ updates: 3, expiresAt: t + 900 });
    expect(aws.calls.at(-1)?.body).toMatchObject({
      Key: { id: { S: 'anomaly#1' } },
      ProjectionExpression: 'firstSeen, escalationUpdates, expiresAt',
    });
    expect(await escalations.waitingEscalation('anomaly#1', t - 601)).toEqual({ updates: 0 });
    aws.answer('DynamoDB_20120810.GetItem', { Item: { firstSeen: { N: String(t - 600) } } });
    expect(await escalations.waitingEscalation('anomaly#1', t - 600)).toEqual({ updates: 0 });
    aws.answer('DynamoDB_20120810.GetItem', {});
    expect(await escalations.waitingEscalation('anomaly#1', t - 600)).toEqual({ updates: 0 });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.escalationWaiting('anomaly#1', t - 600, 4);
    expect(aws.calls.at(-1)?.body).toMatchObject({
      UpdateExpression: 'SET escalationUpdates = :updates',
      ConditionExpression: 'firstSeen = :firstSeen AND (attribute_not_exists(escalationUpdates) OR escalationUpdates < :updates)',
      ExpressionAttributeValues: { ':firstSeen': { N: String(t - 600) }, ':updates': { N: '4' } },
    });
    aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ConditionalCheckFailedException' });
    await expect(escalations.escalationWaiting('anomaly#1', t - 600, 2)).resolves.toBeUndefined();
  });

  it("says on an opening's item that its wait could not be set, clears it once set, and reads it back for that opening alone", async () => {
    const escalations = await ledger().escalations();
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.escalationUnscheduled('anomaly#1', t - 600);
    expect(aws.calls.at(-1)?.body).toMatchObject({
      UpdateExpression: 'SET escalationUnscheduled = :firstSeen',
      ConditionExpression: 'firstSeen = :firstSeen',
      ExpressionAttributeValues: { ':firstSeen': { N: String(t - 600) } },
    });
    aws.answer('DynamoDB_20120810.UpdateItem', {});
    await escalations.escalationScheduled('anomaly#1', t - 600);
    expect(aws.calls.at(-1)?.body).toMatchObject({
      UpdateExpression: 'REMOVE escalationUnscheduled',
      ConditionExpression: 'escalationUnscheduled = :firstSeen',
      ExpressionAttributeValues: { ':firstSeen': { N: String(t - 600) } },
    });
    for (const write of [() => escalations.escalationUnscheduled('anomaly#1', 1), () => escalations.escalationScheduled('anomaly#1', 1)]) {
      aws.answer('DynamoDB_20120810.UpdateItem', { error: 'ConditionalCheckFailedException' });
      await expect(write()).resolves.toBeUndefined();
    }
    // A re-send reads it in the round trip that finds the anomaly; an earlier opening's mark says nothing, an escalation ends it.
    const item = { id: { S: 'anomaly#1' }, firstSeen: { N: String(t - 600) }, followUps: { N: '0' } };
    const found = async (extra: Record<string, unknown>) => {
      aws.answer('DynamoDB_20120810.PutItem', { error: 'ConditionalCheckFailedException', fields: { Item: { ...item, ...extra } } });
      return ledger().startAnomaly('anomaly#1');
    };
    expect(await found({ escalationUnscheduled: { N: String(t - 600) } })).toMatchObject({ state: { escalation: 'unscheduled' } });
    expect(await found({ escalationUnscheduled: { N: String(t - 9_000) } })).not.toHaveProperty('state.escalation');
    expect(await found({ escalationUnscheduled: { N: String(t - 600) }, escalatedAt: { N: String(t) } })).toMatchObject({
      state: { escalation: 'escalated' },
    });
  });

  it('names other errors, so that the caller can fail open', async () => {
    aws.answer('DynamoDB_20120810.PutItem', { error: 'ResourceNotFoundException' });
    await expect(ledger().claim('abc', mine)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    aws.answer('DynamoDB_20120810.DeleteItem', { error: 'ProvisionedThroughputExceededException' });
    await expect(ledger().release('abc')).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
  });
});

describe('escalations against AWS', () => {
  const queueUrl = () => `${aws.url}/123456789012/delivery-retry`;
  const config = relayConfigSchema.parse({
    auth: { method: 'none' },
    destinations: {
      default: { url: 'https://hooks.slack.com/services/T0/B0/x', escalate: { afterMinutes: 60, to: 'oncall' } },
      oncall: { url: 'https://hooks.slack.com/services/T0/B0/y' },
    },
  });
  const target = targetOf('default', config.destinations['default']!, undefined);

  it('wait on the retry queue as a delayed message: a hop of at most 15 minutes, named by where it waits', async () => {
    const job = escalationJob({ deliveryId: 'r', target, message, costCenters: [{ id: 'cc-1', name: 'Data', extra: 1 } as never] }, 7, 0);
    await sqsEscalationQueue(lazySqs(limits), queueUrl()).schedule(job, 3_600);
    expect(aws.calls[0]).toMatchObject({
      target: 'AmazonSQS.SendMessage',
      body: { QueueUrl: queueUrl(), DelaySeconds: 900, MessageAttributes: { destination: { DataType: 'String', StringValue: 'default' } } },
    });
    expect(JSON.parse(String(aws.calls[0]?.body['MessageBody']))).toEqual({ ...job, costCenters: [{ id: 'cc-1', name: 'Data' }] });
  });

  it("the relay's lazily loaded part sets the wait on the queue when it has the queue and the table, and logs what it cannot", async () => {
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const wiring = {
      ledger: memoryLedger(),
      logger: log.logger,
      metrics,
      now: Date.now,
      sqs: lazySqs(limits),
      settings: { DELIVERY_QUEUE_URL: queueUrl(), DEDUP_TABLE_NAME: 'seen', DEDUP_WINDOW_SECONDS: 86_400 },
      options: {},
      config: memoryConfigStore({ config }),
      delivery: createDelivery({
        services: chatServices({}),
        postTimeoutMs: 1_000,
        logger: log.logger,
        now: Date.now,
        sleep: async () => {},
      }),
      typeOf: destinationType,
    };
    await watch(wiring, { deliveryId: 'r', target, message }, { kind: 'opened' }, 'delivered', budgetOf(10_000));
    expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSQS.SendMessage']);
    expect(aws.calls[0]?.body).toMatchObject({ DelaySeconds: 900 });
    expect(metrics.count('Escalations', { outcome: 'scheduled' })).toBe(1);
    await watch({ ...wiring, ledger: undefined }, { deliveryId: 'r', target, message }, { kind: 'opened' }, 'delivered', budgetOf(10_000));
    expect(log.records().at(-1)).toMatchObject({ message: 'escalation could not be scheduled', destination: 'default' });
  });

  it('delivery-retry wired from its environment sends a job that is not due back, a hop of the time left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'escalation-retry-'));
    writeFileSync(join(dir, 'relay.json'), JSON.stringify(config));
    try {
      const worker = createRetryWorkerFromEnvironment(
        {
          ...process.env,
          RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`,
          DELIVERY_QUEUE_URL: queueUrl(),
          DEDUP_TABLE_NAME: 'seen',
        },
        { logger: capturedLogger().logger, metrics: memoryMetrics(), services: chatServices({}) },
      );
      const firstSeen = Math.floor(Date.now() / 1000) - 60;
      const body = JSON.stringify(escalationJob({ deliveryId: 'r', target, message }, firstSeen, 0));
      const result = await worker([{ messageId: 'm1', receiptHandle: 'h1', body, attributes: {} }], budgetOf(30_000));
      expect(result).toEqual({ batchItemFailures: [] });
      const sent = aws.calls.find((c) => c.target === 'AmazonSQS.SendMessage');
      expect(sent?.body['MessageBody']).toBe(body);
      // 59 minutes left: the first of several hops.
      expect(sent?.body['DelaySeconds']).toBe(900);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
