import { type DynamoDBClient, GetItemCommand, ScanCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { awsJsonClient, DYNAMODB } from '../../lib/aws/json-client.js';
import { DYNAMODB_LIMITS } from '../../lib/aws/limits.js';
import { dynamoLedger } from '../../lib/dedup/dynamodb.js';
import { deliveryRecordId } from '../../lib/dedup/fingerprint.js';
import { CLAIM_MARGIN_SECONDS } from '../../lib/dedup/ledger.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { emfRecords } from '../helpers/memory-metrics.js';
import { type MotoServer, startMoto } from '../helpers/moto.js';
import {
  type Answer,
  createDedupTable as createDeclaredDedupTable,
  type RelayStack,
  startRelayStack,
  titleOf,
} from '../helpers/relay-stack.js';
import { waitFor } from '../helpers/sqs.js';

const moto = motoUrl();

/** The table as template.yaml declares it, with its time to live on as in the stack. */
async function createDedupTable(url: string): Promise<{ name: string; dynamo: DynamoDBClient }> {
  const table = await createDeclaredDedupTable(url);
  await table.dynamo.send(
    new UpdateTimeToLiveCommand({ TableName: table.name, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } }),
  );
  return table;
}

const alert = (title: string, accountId = '123456789012', timestamp = '2026-11-22T10:00:00Z') =>
  JSON.stringify({
    metadata: { object_type: 'anomaly_alert', timestamp },
    payload: { title, message: 'Daily cost of Amazon EC2 rose sharply', account_id: accountId, cloud_provider_type: 'aws' },
  });

/** The dedup table's id for this request body at this destination, as the relay computes it. */
const recordIdOf = (body: string, destination: string) => deliveryRecordId(webhookMessageSchema.parse(JSON.parse(body)), destination);

/** Log lines a bundle wrote after `mark` (an earlier `output().length`): what this test's own requests caused. */
const outputSince = (fn: RunningBundle, mark: number) => fn.output().slice(mark);

describe.skipIf(!moto)('no alert twice: the relay and delivery-retry with a dedup table in moto_server', () => {
  let stack: RelayStack;
  let table: { name: string; dynamo: DynamoDBClient };
  /** The same relay without a retry queue: a failure there is answered 503 and stored nowhere. */
  let bare: RunningBundle;
  const send = (fn: RunningBundle, body: string) =>
    fn.invoke<Answer>(httpApiEvent({ headers: { 'content-type': 'application/json' }, body }), { timeoutMs: 15_000 });
  const posted = (title: string, path?: string) => stack.slack.accepted(path).filter((r) => titleOf(r.body).includes(title));
  const stateOf = async (id: string) =>
    (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } }, ConsistentRead: true }))).Item?.['state']
      ?.S;
  /** Messages on the retry queue in any state: waiting, delayed or being worked on. */
  const messagesHeld = async () => {
    const { Attributes = {} } = await stack.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.queues.deliveryQueueUrl, AttributeNames: ['All'] }),
    );
    const held = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed', 'ApproximateNumberOfMessagesNotVisible'] as const;
    return held.reduce((sum, name) => sum + Number(Attributes[name] ?? 0), 0);
  };

  // A moto_server of its own: a claim that waits behind other files' calls past its deadline is
  // rightly given up (the alert is posted anyway), and identical deliveries then post twice.
  let own: MotoServer;
  beforeAll(async () => {
    own = await startMoto();
    table = await createDedupTable(own.url);
    stack = await startRelayStack(own.url, ['ops'], { DEDUP_TABLE_NAME: table.name, DEDUP_WINDOW_SECONDS: '3600' });
    const fanOut = await createSecret(secretsClient(own.url), {
      auth: { method: 'none' },
      destinations: { default: { url: stack.slack.url(stack.paths['default']) }, ops: { url: stack.slack.url(stack.paths['ops']) } },
      routes: [{ when: { accountId: ['both'] }, to: ['default', 'ops'] }],
    });
    bare = await startBundle('webhook-relay', {
      ...stack.env,
      RELAY_CONFIG_SECRET_ID: fanOut,
      DELIVERY_QUEUE_URL: '',
      DEAD_LETTER_QUEUE_URL: '',
    });
  });
  afterEach(() => stack.slack.reset());
  afterAll(async () => {
    await bare?.stop();
    await stack?.stop();
    await own?.stop();
  });

  it('the same delivery sent twice posts once; the second answer is 200, logged and counted as a duplicate', async () => {
    const mark = stack.relay.output().length;
    const first = await send(stack.relay, alert('Twice'));
    const second = await send(stack.relay, alert('Twice'));
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(JSON.parse(second.body)).toMatchObject({ delivered: ['default'], duplicate: ['default'] });
    expect(posted('Twice')).toHaveLength(1);
    const lines = () => outputSince(stack.relay, mark).split('\n');
    const logRecords = lines()
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logRecords).toContainEqual(expect.objectContaining({ message: 'delivery', outcome: 'duplicate', status: 200 }));
    await waitFor(() => emfRecords(lines()).some((m) => m['outcome'] === 'duplicate'), 2_000);
    expect(emfRecords(lines())).toContainEqual(expect.objectContaining({ outcome: 'duplicate', destinationType: 'slack', Deliveries: 1 }));
  });

  it('five identical deliveries at once post once; none is answered 202, since no queue holds the alert', async () => {
    const mark = stack.relay.output().length;
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(stack.relay, alert('Five at once'))));
    // Exactly once while the table answers in time. A claim it leaves unanswered past its deadline
    // is posted anyway, never lost, and says so: on a machine that busy, each such claim may post
    // once more, and nothing else may.
    const givenUp = () => (outputSince(stack.relay, mark).match(/"reason":"dedup_unavailable"/g) ?? []).length;
    const extra = posted('Five at once').length - 1;
    // The log comes through the bundle's stdout, which may trail its answers a little.
    if (extra > 0) await waitFor(() => givenUp() >= extra, 2_000);
    expect(posted('Five at once').length).toBe(1 + Math.min(extra, givenUp()));
    for (const answer of answers) {
      expect([200, 503]).toContain(answer.statusCode);
      // One still being posted elsewhere is the sender's to send again, after the claim's time at most.
      if (answer.statusCode === 503) {
        expect(JSON.parse(answer.body)).toMatchObject({ in_progress: ['default'] });
        expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(15 + CLAIM_MARGIN_SECONDS);
      }
    }
  });

  it('the same alert with another timestamp is a new delivery', async () => {
    await send(stack.relay, alert('Hourly', '123456789012', '2026-11-22T10:00:00Z'));
    await send(stack.relay, alert('Hourly', '123456789012', '2026-11-22T11:00:00Z'));
    expect(posted('Hourly')).toHaveLength(2);
  });

  it('a delivery that failed everywhere (503, stored nowhere) posts when it is sent again', async () => {
    stack.slack.queue(stack.paths['default']!, { kind: 'error', status: 500, body: 'rollup_error' }, 1);
    expect((await send(bare, alert('Failed everywhere'))).statusCode).toBe(503);
    expect((await send(bare, alert('Failed everywhere'))).statusCode).toBe(200);
    expect(posted('Failed everywhere')).toHaveLength(1);
  });

  it('a partial failure sent again posts only to the destination that missed it', async () => {
    // Account "both" fans out to default and ops (the bare relay's configuration).
    stack.slack.queue(stack.paths['ops']!, { kind: 'error', status: 503, body: 'service_unavailable' }, 1);
    const body = alert('Partial', 'both');
    const first = await send(bare, body);
    expect(first.statusCode).toBe(503);
    expect(JSON.parse(first.body)).toMatchObject({ destinations: ['ops'] });
    const again = await send(bare, body);
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: ['default'] });
    expect(posted('Partial', stack.paths['default'])).toHaveLength(1);
    expect(posted('Partial', stack.paths['ops'])).toHaveLength(1);
  });

  it('a queued delivery sent again is not queued twice, and once delivery-retry has posted it a re-send is a duplicate', async () => {
    const queuedBefore = await messagesHeld();
    // Queued by a one-second Retry-After rather than a 5xx, whose 5 s backoff this test does not need.
    stack.slack.queue(stack.paths['default']!, { kind: 'rate_limited', retryAfterSeconds: 1 }, 1);
    expect((await send(stack.relay, alert('Queued once'))).statusCode).toBe(202);
    const again = await send(stack.relay, alert('Queued once'));
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: ['default'] });
    // The job waits out the Retry-After as a delayed message: one, not two.
    expect((await messagesHeld()) - queuedBefore).toBe(1);
    stack.startRetrying();
    expect(await waitFor(() => posted('Queued once').length === 1, 30_000)).toBe(true);
    // delivery-retry tells the table after the post; a re-send before that would be a race, not the claim.
    const id = recordIdOf(alert('Queued once'), 'default');
    expect(await waitFor(async () => (await stateOf(id)) === 'delivered', 10_000)).toBe(true);
    const third = await send(stack.relay, alert('Queued once'));
    expect(third.statusCode).toBe(200);
    expect(posted('Queued once')).toHaveLength(1);
  }, 60_000);

  it('the table holds hashed ids, a state and times only, expiring within the window', async () => {
    // Its own records, in each state a finished request leaves: delivered, to one destination
    // and fanned out to two, and queued.
    const delivered = alert('Stored delivered');
    const fanned = alert('Stored fanned out', 'both');
    const queued = alert('Stored queued');
    expect((await send(stack.relay, delivered)).statusCode).toBe(200);
    expect((await send(bare, fanned)).statusCode).toBe(200);
    stack.slack.queue(stack.paths['default']!, { kind: 'error', status: 500, body: 'rollup_error' }, 1);
    expect((await send(stack.relay, queued)).statusCode).toBe(202);
    const ours = [
      recordIdOf(delivered, 'default'),
      recordIdOf(fanned, 'default'),
      recordIdOf(fanned, 'ops'),
      recordIdOf(queued, 'default'),
    ];

    // Every record is checked, whoever wrote it: none may hold more than this.
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name }));
    expect(Items.map((item) => item['id']?.S)).toEqual(expect.arrayContaining(ours));
    expect(
      Object.fromEntries(Items.filter((item) => ours.includes(item['id']?.S ?? '')).map((item) => [item['id']?.S, item['state']?.S])),
    ).toEqual({
      [ours[0]!]: 'delivered',
      [ours[1]!]: 'delivered',
      [ours[2]!]: 'delivered',
      [ours[3]!]: 'queued',
    });
    const now = Date.now() / 1000;
    for (const item of Items) {
      // An anomaly's state: ids and times only (where its Slack message is, when it was first seen and updated).
      const anomaly = item['id']?.S?.startsWith('anomaly#');
      const allowed = anomaly
        ? ['id', 'firstSeen', 'followUps', 'lastUpdate', 'channel', 'ts', 'expiresAt']
        : ['id', 'state', 'expiresAt', 'claimUntil', 'claimToken', 'parkedFirst', 'parkToken'];
      expect(Object.keys(item).sort()).toEqual(
        expect.arrayContaining(anomaly ? ['expiresAt', 'firstSeen', 'id'] : ['expiresAt', 'id', 'state']),
      );
      expect(Object.keys(item).filter((k) => !allowed.includes(k))).toEqual([]);
      expect(item['id']?.S).toMatch(anomaly ? /^anomaly#[0-9a-f]{64}$/ : /^[0-9a-f]{64}$/);
      const expires = Number(item['expiresAt']?.N);
      expect(expires).toBeGreaterThan(now);
      expect(expires).toBeLessThanOrEqual(now + 3600 + 5);
    }
    const dump = JSON.stringify(Items);
    for (const leak of ['Stored', 'EC2', '127.0.0.1', '/services/', 'default', 'ops']) expect(dump).not.toContain(leak);
  });
});

describe.skipIf(!moto)('no alert twice: a missing table', () => {
  it('delivers anyway, with a warning naming the problem', async () => {
    const stack = await startRelayStack(moto as string, [], { DEDUP_TABLE_NAME: 'no-such-table' });
    try {
      const answer = await stack.send('No table');
      expect(answer.statusCode).toBe(200);
      expect(stack.slack.accepted()).toHaveLength(1);
      expect(stack.relay.logRecords()).toContainEqual(
        expect.objectContaining({ level: 'warn', reason: 'dedup_unavailable', error: 'ResourceNotFoundException' }),
      );
    } finally {
      await stack.stop();
    }
  });
});

describe.skipIf(!moto)('no alert twice: a claim whose answer is lost on the way back', () => {
  let proxy: AwsProxy;
  let stack: RelayStack;

  beforeAll(async () => {
    proxy = await startAwsProxy(moto as string);
    const table = await createDedupTable(moto as string);
    stack = await startRelayStack(moto as string, [], {
      ...awsEnvironment(proxy.url),
      DEDUP_TABLE_NAME: table.name,
      DEDUP_WINDOW_SECONDS: '3600',
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  it("is still this attempt's claim when the client's retry meets it: the alert is posted, not answered 202 and lost", async () => {
    // DynamoDB writes the claim, then the answer breaks; the signed client sends the same write again.
    proxy.fault('DynamoDB_20120810.PutItem', 'lose_answer', 1);
    const answer = await stack.send('Lost claim answer');
    expect(proxy.count('DynamoDB_20120810.PutItem')).toBeGreaterThanOrEqual(2);
    expect(answer.statusCode).toBe(200);
    expect(stack.slack.accepted().filter((r) => titleOf(r.body).includes('Lost claim answer'))).toHaveLength(1);
    // And it was recorded: a re-send is a duplicate.
    const again = await stack.send('Lost claim answer');
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: ['default'] });
    expect(stack.slack.accepted().filter((r) => titleOf(r.body).includes('Lost claim answer'))).toHaveLength(1);
  });
});

describe.skipIf(!moto)('no alert twice: a parked alert in moto_server', () => {
  let table: { name: string; dynamo: DynamoDBClient };
  let ledger: ReturnType<typeof dynamoLedger>;
  beforeAll(async () => {
    table = await createDedupTable(moto as string);
    const client = awsJsonClient(DYNAMODB, { limits: DYNAMODB_LIMITS, env: awsEnvironment(moto as string) });
    ledger = dynamoLedger(client, { tableName: table.name, windowSeconds: 3600 });
  });
  const first = '2026-11-22T10:00:00.000Z';
  const hold = (token: string) => ({ token, holdSeconds: 60 });
  /** A record parked by the job whose first attempt was `first`, its parked body carrying `parkToken`. */
  const parked = async (id: string) => {
    expect(await ledger.claimQueued(id, { ...hold('twin'), job: { firstAttemptAt: first } })).toEqual({ kind: 'claimed' });
    await ledger.park(id, { firstAttemptAt: first, parkToken: 'parking' });
  };

  it('is done for a stale copy of the job that parked it, and free for its redrive', async () => {
    await parked('parked-redrive');
    const stale = { firstAttemptAt: first };
    expect(await ledger.claimQueued('parked-redrive', { ...hold('stale'), job: stale })).toEqual({ kind: 'done', state: 'parked' });
    const older = { firstAttemptAt: first, parkToken: 'an earlier parking' };
    expect(await ledger.claimQueued('parked-redrive', { ...hold('older'), job: older })).toEqual({ kind: 'done', state: 'parked' });
    const { Item } = await table.dynamo.send(
      new GetItemCommand({ TableName: table.name, Key: { id: { S: 'parked-redrive' } }, ConsistentRead: true }),
    );
    expect(Object.keys(Item ?? {}).sort()).toEqual(['expiresAt', 'id', 'parkToken', 'parkedFirst', 'state']);
    expect(Item?.['state']?.S).toBe('parked');
    const redrive = { firstAttemptAt: first, parkToken: 'parking' };
    expect(await ledger.claimQueued('parked-redrive', { ...hold('redrive'), job: redrive })).toEqual({ kind: 'claimed' });
  });

  it("is free for the platform's re-send, and for another job of the alert", async () => {
    await parked('parked-resent');
    expect(await ledger.claim('parked-resent', hold('relay'))).toEqual({ kind: 'claimed' });
    await parked('parked-other-job');
    const other = { firstAttemptAt: '2026-11-22T11:00:00.000Z' };
    expect(await ledger.claimQueued('parked-other-job', { ...hold('other'), job: other })).toEqual({ kind: 'claimed' });
  });
});
