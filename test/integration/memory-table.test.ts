import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsJsonCall, AwsServiceError, awsJsonClient, DYNAMODB } from '../../lib/aws/json-client.js';
import { DYNAMODB_LIMITS } from '../../lib/aws/limits.js';
import { declaredTableShape } from '../../sim/aws/declared-table.js';
import { memoryTable } from '../../sim/aws/dynamodb.js';
import { awsEnvironment } from '../helpers/aws.js';
import { type MotoServer, motoAvailable, startMoto } from '../helpers/moto.js';
import { createDedupTable } from '../helpers/relay-stack.js';

// The simulation's table stands in for DynamoDB: every expression our adapters write must mean
// the same there as in a DynamoDB emulator. Each step runs against both; the answers must agree.

/** A step, and where moto is laxer than DynamoDB, what DynamoDB itself answers (its documented refusal). */
type Step = [operation: string, input: Record<string, unknown>, dynamoDbRefuses?: string];

const S = (value: string) => ({ S: value });
const N = (value: number) => ({ N: String(value) });

const steps: Step[] = [
  [
    'PutItem',
    {
      Item: { id: S('a'), state: S('claimed'), claimUntil: N(100), expiresAt: N(2000) },
      ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
      ExpressionAttributeValues: { ':now': N(50) },
    },
  ],
  // The same claim again: refused, with the stored item when asked for it.
  [
    'PutItem',
    {
      Item: { id: S('a'), state: S('claimed') },
      ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now OR (#state = :claimed AND claimUntil < :now)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':now': N(50), ':claimed': S('claimed') },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  ],
  // Past the claim's time it can be taken over.
  [
    'PutItem',
    {
      Item: { id: S('a'), state: S('claimed'), claimToken: S('t2'), claimUntil: N(300), expiresAt: N(2000) },
      ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now OR (#state = :claimed AND claimUntil < :now)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':now': N(200), ':claimed': S('claimed') },
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('a') },
      UpdateExpression: 'SET #state = :delivered REMOVE claimUntil',
      ConditionExpression: 'claimToken = :token',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':delivered': S('delivered'), ':token': S('t2') },
      ReturnValues: 'ALL_NEW',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('a') },
      UpdateExpression: 'SET #state = :x',
      ConditionExpression: 'claimToken = :token',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':x': S('x'), ':token': S('wrong') },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('a') },
      UpdateExpression: 'SET #state = :x',
      ConditionExpression: '#state <> :delivered',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':x': S('x'), ':delivered': S('delivered') },
    },
  ],
  // An anomaly: channel and first sighting kept, follow-ups counted, if_not_exists keeps the first.
  [
    'UpdateItem',
    {
      Key: { id: S('anomaly#1') },
      UpdateExpression: 'SET channel = :channel, ts = :ts, firstSeen = if_not_exists(firstSeen, :now)',
      ExpressionAttributeValues: { ':channel': S('C1'), ':ts': S('1.1'), ':now': N(1000) },
      ReturnValues: 'ALL_NEW',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('anomaly#1') },
      UpdateExpression: 'ADD followUps :one SET lastUpdate = :now, firstSeen = if_not_exists(firstSeen, :now)',
      ExpressionAttributeValues: { ':one': N(1), ':now': N(1200) },
      ReturnValues: 'ALL_NEW',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('anomaly#1') },
      UpdateExpression: 'ADD followUps :one SET lastUpdate = :now',
      ExpressionAttributeValues: { ':one': N(1), ':now': N(1300) },
      ReturnValues: 'UPDATED_NEW',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('anomaly#1') },
      UpdateExpression: 'SET escalationUpdates = :updates',
      ConditionExpression: 'firstSeen = :firstSeen AND (attribute_not_exists(escalationUpdates) OR escalationUpdates < :updates)',
      ExpressionAttributeValues: { ':firstSeen': N(1000), ':updates': N(2) },
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('anomaly#1') },
      UpdateExpression: 'SET escalationUpdates = :updates',
      ConditionExpression: 'firstSeen = :firstSeen AND (attribute_not_exists(escalationUpdates) OR escalationUpdates < :updates)',
      ExpressionAttributeValues: { ':firstSeen': N(1000), ':updates': N(1) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('anomaly#1') },
      UpdateExpression: 'REMOVE escalationUpdates, lastUpdate SET triageVersion = :one',
      ConditionExpression: 'attribute_not_exists(triageVersion) OR triageVersion = :seen',
      ExpressionAttributeValues: { ':one': N(1), ':seen': N(0) },
      ReturnValues: 'ALL_NEW',
    },
  ],
  // A group: a map of alerts written entry by entry, its size counted.
  ['PutItem', { Item: { id: S('group#d'), groupId: S('g1'), state: S('open'), alerts: { M: {} }, bytes: N(0) } }],
  [
    'UpdateItem',
    {
      Key: { id: S('group#d') },
      UpdateExpression: 'SET alerts.#key = :entry ADD #bytes :bytes',
      ConditionExpression: 'groupId = :group',
      ExpressionAttributeNames: { '#key': 'k1', '#bytes': 'bytes' },
      ExpressionAttributeValues: { ':entry': S('one'), ':bytes': N(10), ':group': S('g1') },
      ReturnValues: 'ALL_NEW',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('group#d') },
      UpdateExpression: 'SET alerts.#key = :entry ADD #bytes :bytes',
      ConditionExpression: 'groupId = :group',
      ExpressionAttributeNames: { '#key': 'k2', '#bytes': 'bytes' },
      ExpressionAttributeValues: { ':entry': S('two'), ':bytes': N(5), ':group': S('g1') },
      ReturnValues: 'ALL_NEW',
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('missing') },
      UpdateExpression: 'SET expiresAt = :until',
      ConditionExpression: 'firstSeen = :first',
      ExpressionAttributeValues: { ':until': N(5), ':first': N(1) },
    },
  ],
  // The summary index: a sparse key, read by destination and first sighting.
  ['PutItem', { Item: { id: S('anomaly#2'), summaryOf: S('finops'), firstSeen: N(100), title: S('B'), message: S('not projected') } }],
  ['PutItem', { Item: { id: S('anomaly#3'), summaryOf: S('finops'), firstSeen: N(50), title: S('A') } }],
  ['PutItem', { Item: { id: S('anomaly#4'), summaryOf: S('other'), firstSeen: N(70), title: S('C') } }],
  [
    'Query',
    {
      IndexName: 'summaries',
      KeyConditionExpression: '#destination = :destination AND #firstSeen >= :from',
      ExpressionAttributeNames: { '#destination': 'summaryOf', '#firstSeen': 'firstSeen' },
      ExpressionAttributeValues: { ':destination': S('finops'), ':from': N(60) },
    },
  ],
  [
    'Query',
    {
      IndexName: 'summaries',
      KeyConditionExpression: '#destination = :destination AND #firstSeen >= :from',
      ExpressionAttributeNames: { '#destination': 'summaryOf', '#firstSeen': 'firstSeen' },
      ExpressionAttributeValues: { ':destination': S('finops'), ':from': N(0) },
    },
  ],
  ['GetItem', { Key: { id: S('anomaly#2') }, ProjectionExpression: 'title, firstSeen' }],
  [
    'DeleteItem',
    {
      Key: { id: S('anomaly#2') },
      ConditionExpression: 'firstSeen = :firstSeen',
      ExpressionAttributeValues: { ':firstSeen': N(99) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  ],
  [
    'DeleteItem',
    { Key: { id: S('anomaly#2') }, ConditionExpression: 'firstSeen = :firstSeen', ExpressionAttributeValues: { ':firstSeen': N(100) } },
  ],
  ['GetItem', { Key: { id: S('anomaly#2') } }],
  // DynamoDB's own refusals: an unused placeholder, an undefined one, an item too large.
  [
    'PutItem',
    { Item: { id: S('b') }, ConditionExpression: 'attribute_not_exists(id)', ExpressionAttributeValues: { ':unused': N(1) } },
    'ValidationException',
  ],
  ['PutItem', { Item: { id: S('b') }, ConditionExpression: 'expiresAt < :now' }, 'ValidationException'],
  ['PutItem', { Item: { id: S('big'), blob: S('x'.repeat(410 * 1024)) } }],
  [
    'UpdateItem',
    {
      Key: { id: S('group#d') },
      UpdateExpression: 'SET alerts.#key = :entry',
      ExpressionAttributeNames: { '#key': 'k3' },
      ExpressionAttributeValues: { ':entry': S('y'.repeat(410 * 1024)) },
    },
    'ValidationException',
  ],
  ['GetItem', { Key: { id: S('group#d') } }],
  // A reserved word (`uuid`, `name`, `status`, `key`, ...) named directly in any expression is
  // refused; through a placeholder it is an attribute like any other.
  [
    'UpdateItem',
    {
      Key: { id: S('costevent#1') },
      UpdateExpression: 'SET uuid = :uuid',
      ExpressionAttributeValues: { ':uuid': S('u-1') },
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('costevent#1') },
      UpdateExpression: 'SET claimToken = :token',
      ConditionExpression: 'attribute_not_exists(uuid)',
      ExpressionAttributeValues: { ':token': S('t') },
    },
  ],
  [
    'UpdateItem',
    {
      Key: { id: S('costevent#1') },
      UpdateExpression: 'SET #uuid = :uuid',
      ConditionExpression: 'attribute_not_exists(#uuid)',
      ExpressionAttributeNames: { '#uuid': 'uuid' },
      ExpressionAttributeValues: { ':uuid': S('u-1') },
      ReturnValues: 'ALL_NEW',
    },
  ],
  [
    'UpdateItem',
    { Key: { id: S('group#d') }, UpdateExpression: 'SET alerts.key = :entry', ExpressionAttributeValues: { ':entry': S('z') } },
  ],
  ['GetItem', { Key: { id: S('costevent#1') }, ProjectionExpression: 'id, uuid' }],
  ['GetItem', { Key: { id: S('costevent#1') }, ProjectionExpression: 'id, #uuid', ExpressionAttributeNames: { '#uuid': 'uuid' } }],
  // `size` is reserved too, but as a function it names no attribute.
  [
    'Query',
    {
      IndexName: 'summaries',
      KeyConditionExpression: 'summaryOf = :destination AND firstSeen >= :from',
      FilterExpression: 'title = :title OR size(title) > :long',
      ExpressionAttributeValues: { ':destination': S('finops'), ':from': N(0), ':title': S('A'), ':long': N(5) },
    },
  ],
  [
    'Query',
    {
      IndexName: 'summaries',
      KeyConditionExpression: 'summaryOf = :destination AND firstSeen >= :from',
      FilterExpression: 'title = :title OR status = :title',
      ExpressionAttributeValues: { ':destination': S('finops'), ':from': N(0), ':title': S('A') },
    },
  ],
  ['DeleteItem', { Key: { id: S('costevent#1') }, ConditionExpression: 'uuid = :uuid', ExpressionAttributeValues: { ':uuid': S('u-1') } }],
];

type Outcome = { ok: Record<string, unknown> } | { error: string; item?: unknown };

async function outcome(call: AwsJsonCall, [operation, input]: Step, table: string): Promise<Outcome> {
  try {
    const answer = await call(operation, { TableName: table, ...input });
    const { ConsumedCapacity: _, ...rest } = answer;
    return { ok: rest };
  } catch (error) {
    if (!(error instanceof AwsServiceError)) throw error;
    return { error: error.code, ...(error.fields['Item'] ? { item: error.fields['Item'] } : {}) };
  }
}

describe.skipIf(!motoAvailable() && !process.env['CI'])("the simulation's table answers as DynamoDB's emulator does", () => {
  let moto: MotoServer;
  let dynamo: AwsJsonCall;
  let table: string;

  beforeAll(async () => {
    moto = await startMoto();
    table = (await createDedupTable(moto.url)).name;
    dynamo = awsJsonClient(DYNAMODB, { limits: DYNAMODB_LIMITS, env: awsEnvironment(moto.url) });
  });
  afterAll(() => moto?.stop());

  it('gives the same answer to every expression our adapters write, and to the refusals', async () => {
    const memory = memoryTable({ tableName: table, now: () => 0, ...declaredTableShape() });
    for (const step of steps) {
      const emulated = step[2] ? { error: step[2] } : await outcome(dynamo, step, table);
      const simulated = await outcome(memory.call, step, table);
      expect({ step: step[0], ...simulated }, JSON.stringify(step).slice(0, 300)).toEqual({ step: step[0], ...emulated });
    }
  });
});
