import { describe, expect, it } from 'vitest';
import { type AwsJsonCall, AwsServiceError } from '../../lib/aws/json-client.js';
import { dynamoTriageStore, TriageConflictError } from '../../lib/triage/dynamodb.js';
import { memoryAws } from '../helpers/memory-aws.js';

// The triage store against the dedup table as template.yaml declares it (conditions, update
// expressions, TTL), in memory: what an action leaves on the anomaly's item, and how two
// actions at once are both kept.

const NOW_MS = Date.UTC(2026, 10, 28, 9);
const NOW = NOW_MS / 1000;

function table(nowMs = () => NOW_MS, ttlDelayMs = 0) {
  const aws = memoryAws({ now: nowMs, ttlDelayMs });
  return { aws, call: aws.table.call, item: (id: string) => aws.table.items().get(id) };
}

/** The relay's own item for an anomaly, as it is before anyone triages it. */
async function relayItem(call: AwsJsonCall, tableName: string, id: string) {
  await call('PutItem', {
    TableName: tableName,
    Item: { id: { S: id }, channel: { S: 'C0123ABCD' }, ts: { S: '1700000000.000100' }, firstSeen: { N: String(NOW - 3600) } },
  });
}

describe('the triage state on the anomaly item, in the table', () => {
  it('actions written are read back with who did what and when, and the opening message and first sighting kept', async () => {
    const { aws, call, item } = table();
    await relayItem(call, aws.tableName, 'anomaly#1');
    const store = dynamoTriageStore(call, aws.tableName, () => NOW_MS);
    // Untriaged, the relay's item reads as open with no history.
    expect(await store.read('anomaly#1')).toStrictEqual({
      triage: { state: 'open' },
      audit: [],
      opening: { channel: 'C0123ABCD', ts: '1700000000.000100' },
      firstSeen: NOW - 3600,
    });

    expect(await store.apply('anomaly#1', 'snooze', 'Dana', NOW)).toMatchObject({ kind: 'applied' });
    expect(await store.apply('anomaly#1', 'acknowledge', 'Lee', NOW + 60)).toMatchObject({ kind: 'applied' });
    expect(await store.read('anomaly#1')).toStrictEqual({
      triage: { state: 'acknowledged', at: NOW + 60, by: 'Lee' },
      audit: [
        { who: 'Dana', action: 'snooze', at: NOW },
        { who: 'Lee', action: 'acknowledge', at: NOW + 60 },
      ],
      opening: { channel: 'C0123ABCD', ts: '1700000000.000100' },
      firstSeen: NOW - 3600,
    });
    // Each write counts one version, the one the next action is written over.
    expect(item('anomaly#1')?.['triageVersion']).toEqual({ N: '2' });
  });

  it('a message whose timestamp is missing has no opening to thread under', async () => {
    const { aws, call } = table();
    await call('PutItem', { TableName: aws.tableName, Item: { id: { S: 'anomaly#1' }, channel: { S: 'C0123ABCD' } } });
    expect(await dynamoTriageStore(call, aws.tableName).read('anomaly#1')).toStrictEqual({ triage: { state: 'open' }, audit: [] });
  });

  it('two actions at once: the one that lost the race is decided again from the winner’s result, and both stay in the history', async () => {
    const { aws, call } = table();
    const other = dynamoTriageStore(call, aws.tableName);
    // Someone already acted, so the item holds a version.
    await other.apply('anomaly#1', 'snooze', 'Sam', NOW - 60);
    let raced = false;
    const updates: string[] = [];
    const racing: AwsJsonCall = async (operation, input, signal) => {
      if (operation === 'UpdateItem') {
        updates.push(String(input['ConditionExpression']));
        // Lee's reopen lands between Dana's read and Dana's write.
        if (!raced) {
          raced = true;
          await other.apply('anomaly#1', 'reopen', 'Lee', NOW);
        }
      }
      return call(operation, input, signal);
    };
    const store = dynamoTriageStore(racing, aws.tableName);
    expect(await store.apply('anomaly#1', 'acknowledge', 'Dana', NOW + 1)).toMatchObject({ kind: 'applied' });
    expect(updates).toEqual(['triageVersion = :seen', 'triageVersion = :seen']);
    expect((await store.read('anomaly#1'))?.audit).toEqual([
      { who: 'Sam', action: 'snooze', at: NOW - 60 },
      { who: 'Lee', action: 'reopen', at: NOW },
      { who: 'Dana', action: 'acknowledge', at: NOW + 1 },
    ]);
  });

  it('an action that keeps losing the race gives up after three tries with a conflict', async () => {
    const { aws, call } = table();
    const other = dynamoTriageStore(call, aws.tableName);
    let interference = 0;
    let tries = 0;
    const busy: AwsJsonCall = async (operation, input, signal) => {
      if (operation === 'UpdateItem') {
        tries++;
        // Someone else changes the item before each of this action's writes, for a while.
        if (interference < 6) {
          interference++;
          await other.apply('anomaly#1', interference % 2 === 1 ? 'snooze' : 'reopen', 'Sam', NOW + interference);
        }
      }
      return call(operation, input, signal);
    };
    const failed = await dynamoTriageStore(busy, aws.tableName)
      .apply('anomaly#1', 'acknowledge', 'Dana', NOW + 10)
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TriageConflictError);
    expect((failed as TriageConflictError).reason).toBe('conflict');
    expect((failed as TriageConflictError).message).toBe('The anomaly changed while this action was recorded.');
    expect(tries).toBe(3);
    expect((await other.read('anomaly#1'))?.audit.map((e) => e.who)).not.toContain('Dana');
  });

  it('a throttled write is an error, not a lost race', async () => {
    const { aws, call } = table();
    aws.faults.table = (operation) => {
      if (operation === 'UpdateItem') throw new AwsServiceError('ThrottlingException', 400, {});
      return undefined;
    };
    const store = dynamoTriageStore(call, aws.tableName);
    await expect(store.apply('anomaly#1', 'acknowledge', 'Dana', NOW)).rejects.toMatchObject({ code: 'ThrottlingException' });
    expect(aws.table.calls.get('UpdateItem')).toBe(1);
    await expect(store.firstUse('replay#1', NOW + 300)).rejects.toMatchObject({ code: 'ThrottlingException' });
  });

  it('a replay key is free once, taken until its time, and free again after, before TTL deletes it', async () => {
    let nowMs = NOW_MS;
    // DynamoDB deletes an expired item within days: the key must be free while it is still there.
    const { aws, call, item } = table(() => nowMs, 3 * 86_400_000);
    const store = dynamoTriageStore(call, aws.tableName, () => nowMs);
    expect(await store.firstUse('replay#1', NOW + 300)).toBe(true);
    expect(item('replay#1')?.['expiresAt']).toEqual({ N: String(NOW + 300) });
    expect(await store.firstUse('replay#1', NOW + 300)).toBe(false);
    nowMs += 299_000;
    expect(await store.firstUse('replay#1', NOW + 600)).toBe(false);
    nowMs += 2_000;
    expect(item('replay#1')).toBeDefined();
    expect(await store.firstUse('replay#1', NOW + 600)).toBe(true);
  });
});
