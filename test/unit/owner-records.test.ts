import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AwsJsonCall } from '../../lib/aws/json-client.js';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { fileOwnerDirectory, OWNER_RECORD_SECONDS, ownerRecordId, ownersFileSchema } from '../../lib/owners/directory.js';
import { dynamoOwnerDirectory, dynamoOwnerStore } from '../../lib/owners/dynamodb.js';

/** The dedup table's PutItem and GetItem on one key, in memory, as the AWS JSON protocol carries them. */
function memoryTable(): AwsJsonCall & { items: Map<string, Record<string, unknown>> } {
  const items = new Map<string, Record<string, unknown>>();
  const call = async (operation: string, input: Record<string, unknown>) => {
    if (operation === 'PutItem') {
      const item = input['Item'] as { id: { S: string } };
      items.set(item.id.S, structuredClone(item));
      return {};
    }
    if (operation === 'GetItem') {
      const item = items.get((input['Key'] as { id: { S: string } }).id.S);
      return item ? { Item: structuredClone(item) } : {};
    }
    throw new Error(`unexpected ${operation}`);
  };
  return Object.assign(call, { items });
}

describe('owner records in the dedup table', () => {
  const readAt = 1_795_000_000;
  const record = { accountId: '123456789012', costCenters: [{ id: 'cc-1', name: 'Data Platform' }], readAt };

  it('directory-sync writes a whole owner# item that the relay reads back, ids and names only', async () => {
    const table = memoryTable();
    await dynamoOwnerStore(table, 'dedup').write(record);
    expect(table.items.get('owner#123456789012')).toEqual({
      id: { S: 'owner#123456789012' },
      costCenters: { L: [{ M: { id: { S: 'cc-1' }, name: { S: 'Data Platform' } } }] },
      readAt: { N: String(readAt) },
      expiresAt: { N: String(readAt + OWNER_RECORD_SECONDS) },
    });
    const directory = dynamoOwnerDirectory(table, 'dedup', () => readAt * 1000);
    expect(await directory.read('123456789012')).toEqual(record);
    expect(await directory.read('999999999999')).toBeUndefined();
  });

  it('keeps which payer named which cost centers beside the list the relay reads', async () => {
    const table = memoryTable();
    const parts = [
      { payer: '12345', costCenters: [{ id: 'cc-1', name: 'Data Platform' }], readAt },
      { payer: '67890', costCenters: [{ id: 'cc-2', name: 'Shared' }], readAt: readAt + 60 },
    ];
    const shared = { accountId: '123456789012', costCenters: [parts[0]!.costCenters[0]!, parts[1]!.costCenters[0]!], readAt, parts };
    const store = dynamoOwnerStore(table, 'dedup', () => readAt * 1000);
    await store.write(shared);
    expect(await store.read(shared.accountId)).toEqual(shared);
    expect((await dynamoOwnerDirectory(table, 'dedup', () => readAt * 1000).read(shared.accountId))?.costCenters).toEqual(
      shared.costCenters,
    );
  });

  it('an item past its expiry is none, though TTL has not deleted it yet', async () => {
    const table = memoryTable();
    await dynamoOwnerStore(table, 'dedup').write(record);
    const at = (seconds: number) => dynamoOwnerDirectory(table, 'dedup', () => seconds * 1000);
    expect(await at(readAt + OWNER_RECORD_SECONDS).read(record.accountId)).toEqual(record);
    expect(await at(readAt + OWNER_RECORD_SECONDS + 1).read(record.accountId)).toBeUndefined();
  });

  it('reads what it can of an item written otherwise: entries without an id are left out, names default to empty', async () => {
    const table = memoryTable();
    table.items.set(ownerRecordId('1'), {
      id: { S: 'owner#1' },
      costCenters: { L: [{ M: { id: { S: 'cc-2' } } }, { M: { name: { S: 'no id' } } }, {}] },
      expiresAt: { N: String(readAt + 10) },
    });
    table.items.set(ownerRecordId('2'), { id: { S: 'owner#2' }, expiresAt: { N: String(readAt + 10) }, readAt: { N: 'x' } });
    const directory = dynamoOwnerDirectory(table, 'dedup', () => readAt * 1000);
    expect(await directory.read('1')).toEqual({ accountId: '1', costCenters: [{ id: 'cc-2', name: '' }], readAt: 0 });
    expect(await directory.read('2')).toEqual({ accountId: '2', costCenters: [], readAt: 0 });
  });
  it('gives the relay no more cost centers, and no longer ids or names, than a queued retry of its alert accepts', async () => {
    const table = memoryTable();
    const entry = (id: string, name: string) => ({ M: { id: { S: id }, name: { S: name } } });
    table.items.set(ownerRecordId('1'), {
      id: { S: 'owner#1' },
      costCenters: {
        L: [
          entry('a'.repeat(201), 'Long id'),
          ...Array.from({ length: 60 }, (_, i) => entry(`cc-${String(i).padStart(2, '0')}`, 'n'.repeat(250))),
        ],
      },
      expiresAt: { N: String(readAt + 10) },
    });
    const costCenters = (await dynamoOwnerDirectory(table, 'dedup', () => readAt * 1000).read('1'))?.costCenters ?? [];
    expect(costCenters).toHaveLength(50);
    expect(costCenters[0]).toEqual({ id: 'cc-00', name: 'n'.repeat(200) });
    const message = webhookMessageSchema.parse(
      JSON.parse(readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8')),
    );
    const job = newJob('d-1', 'default', message, 'rate_limited', Date.now(), undefined, undefined, undefined, costCenters);
    expect(parseDeliveryJob(JSON.stringify(job))?.costCenters).toEqual(costCenters);
  });
});

describe('owners file', () => {
  it('describes the same records, for npm start and explain', async () => {
    const file = ownersFileSchema.parse({ accounts: { '123456789012': [{ id: 'cc-1', name: 'Data Platform' }] } });
    const directory = fileOwnerDirectory(file, 42);
    expect(await directory.read('123456789012')).toEqual({
      accountId: '123456789012',
      costCenters: [{ id: 'cc-1', name: 'Data Platform' }],
      readAt: 42,
    });
    expect(await directory.read('toString')).toBeUndefined();
    expect(await fileOwnerDirectory(file).read('nope')).toBeUndefined();
  });

  it('refuses a file with unknown members or a cost center without an id', () => {
    expect(ownersFileSchema.safeParse({ accounts: {}, extra: 1 }).success).toBe(false);
    expect(ownersFileSchema.safeParse({ accounts: { a: [{ id: '', name: 'x' }] } }).success).toBe(false);
    const tooMany = Array.from({ length: 51 }, (_, i) => ({ id: `cc-${i}`, name: 'x' }));
    expect(ownersFileSchema.safeParse({ accounts: { a: tooMany } }).success).toBe(false);
  });
});
