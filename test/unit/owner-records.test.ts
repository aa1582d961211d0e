import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AwsJsonCall } from '../../lib/aws/json-client.js';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { dynamoLastRun, readLastRun } from '../../lib/directory/last-run.js';
import { dynamoPayerIndex, PayerIndexUnreadableError } from '../../lib/directory/payer-index.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { fileOwnerDirectory, OWNER_RECORD_SECONDS, ownerRecordId, ownersFileSchema } from '../../lib/owners/directory.js';
import { dynamoOwnerDirectory, dynamoOwnerStore } from '../../lib/owners/dynamodb.js';

/** The dedup table's PutItem, GetItem and DeleteItem on one key, in memory, as the AWS JSON protocol carries them. */
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
    if (operation === 'DeleteItem') {
      items.delete((input['Key'] as { id: { S: string } }).id.S);
      return {};
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
    expect(await directory.read('123456789012')).toEqual({ ...record, routing: record.costCenters });
    expect(await directory.read('999999999999')).toBeUndefined();
  });

  it('keeps which payer named which cost centers, with the payer’s account key, beside the list a message names', async () => {
    const table = memoryTable();
    const parts = [
      { accountKey: '12345', costCenters: [{ id: 'cc-1', name: 'Data Platform', idShared: true }], readAt },
      { accountKey: '67890', costCenters: [{ id: 'cc-2', name: 'Shared' }], readAt: readAt + 60 },
    ];
    const costCenters = [
      { id: 'cc-1', name: 'Data Platform' },
      { id: 'cc-2', name: 'Shared' },
    ];
    const shared = { accountId: '123456789012', costCenters, readAt, parts };
    const store = dynamoOwnerStore(table, 'dedup', () => readAt * 1000);
    await store.write(shared);
    expect(await store.read(shared.accountId)).toEqual(shared);
    const item = table.items.get('owner#123456789012') as { payers: { M: Record<string, { M: Record<string, unknown> }> } };
    expect(item.payers.M['12345']?.M['accountKey']).toEqual({ S: '12345' });
    expect(await dynamoOwnerDirectory(table, 'dedup', () => readAt * 1000).read(shared.accountId)).toEqual({
      accountId: shared.accountId,
      costCenters,
      routing: [
        { id: 'cc-1', name: 'Data Platform', idShared: true, payer: '12345' },
        { id: 'cc-2', name: 'Shared', payer: '67890' },
      ],
      readAt,
    });
    await store.remove(shared.accountId);
    expect(await store.read(shared.accountId)).toBeUndefined();
  });

  it('reads an item whose parts were keyed by the account key alone, as items written before parts named it', async () => {
    const table = memoryTable();
    table.items.set(ownerRecordId('1'), {
      id: { S: 'owner#1' },
      costCenters: { L: [{ M: { id: { S: 'cc-1' }, name: { S: 'Data' } } }] },
      payers: { M: { '12345': { M: { costCenters: { L: [{ M: { id: { S: 'cc-1' }, name: { S: 'Data' } } }] }, readAt: { N: '5' } } } } },
      readAt: { N: '5' },
      expiresAt: { N: String(readAt + 10) },
    });
    const record = await dynamoOwnerStore(table, 'dedup', () => readAt * 1000).read('1');
    expect(record?.parts).toEqual([{ accountKey: '12345', costCenters: [{ id: 'cc-1', name: 'Data' }], readAt: 5 }]);
  });

  it('an item past its expiry is none, though TTL has not deleted it yet', async () => {
    const table = memoryTable();
    await dynamoOwnerStore(table, 'dedup').write(record);
    const at = (seconds: number) => dynamoOwnerDirectory(table, 'dedup', () => seconds * 1000);
    expect(await at(readAt + OWNER_RECORD_SECONDS).read(record.accountId)).toEqual({ ...record, routing: record.costCenters });
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
    expect(await directory.read('1')).toEqual({
      accountId: '1',
      costCenters: [{ id: 'cc-2', name: '' }],
      routing: [{ id: 'cc-2', name: '' }],
      readAt: 0,
    });
    expect(await directory.read('2')).toEqual({ accountId: '2', costCenters: [], routing: [], readAt: 0 });
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

describe('what directory-sync keeps beside the records', () => {
  const readAt = 1_795_000_000;
  const index = {
    accounts: ['111111111111', '222222222222'],
    costCenters: [
      { id: 'cc-1', name: 'Data 🚀 Platform' },
      { id: 'cc-2', name: 'Web shop' },
    ],
    readAt,
  };

  it('a payer’s index, in pieces when large, read back whole; none past its expiry', async () => {
    // Pieces of a few characters, of every size up to ten, so that some fall within the emoji: never between its halves.
    for (let size = 2; size <= 10; size++) {
      const table = memoryTable();
      const store = dynamoPayerIndex(table, 'dedup', () => readAt * 1000, size);
      await store.write('12#34', index);
      expect([...table.items.keys()].filter((id) => id.startsWith('directory#payer#12%2334')).length).toBeGreaterThan(10);
      for (const item of table.items.values()) expect(JSON.stringify(item)).not.toMatch(/\\ud83d"|"\\ude80/);
      expect(await store.read('12#34')).toEqual(index);
      expect(await store.read('12')).toBeUndefined();
      const later = dynamoPayerIndex(table, 'dedup', () => (readAt + OWNER_RECORD_SECONDS + 1) * 1000, size);
      expect(await later.read('12#34')).toBeUndefined();
    }
  });

  it('an index with a piece of another run, or a missing one, cannot be read, rather than be taken in part', async () => {
    const table = memoryTable();
    const store = dynamoPayerIndex(table, 'dedup', () => readAt * 1000, 20);
    await store.write('1', index);
    const piece = table.items.get('directory#payer#1#2') as { readAt: { N: string } };
    piece.readAt = { N: String(readAt - 3_600) };
    await expect(store.read('1')).rejects.toThrow(PayerIndexUnreadableError);
    table.items.delete('directory#payer#1#2');
    await expect(store.read('1')).rejects.toThrow('piece 2');
    table.items.set('directory#payer#2', {
      id: { S: 'directory#payer#2' },
      readAt: { N: '1' },
      data: { S: '{"x":1}' },
      expiresAt: { N: String(readAt) },
    });
    await expect(store.read('2')).rejects.toThrow('does not hold what directory-sync writes');
  });

  it('the last run’s outcome and counts, read back for npm run owners; nothing from an item it does not know', async () => {
    const table = memoryTable();
    const run = {
      at: readAt,
      outcome: 'partial' as const,
      payers: 3,
      payersRead: 2,
      payersSkipped: 1,
      accountsWritten: 4,
      accountsRemoved: 1,
      accountsNotWritten: 0,
    };
    await dynamoLastRun(table, 'dedup').write(run);
    expect(await readLastRun(table, 'dedup')).toEqual(run);
    table.items.set('directory#last-run', { id: { S: 'directory#last-run' }, at: { N: '1' }, outcome: { S: 'great' } });
    expect(await readLastRun(table, 'dedup')).toBeUndefined();
  });
});

describe('owners file', () => {
  it('describes the same records, for npm start and explain', async () => {
    const file = ownersFileSchema.parse({ accounts: { '123456789012': [{ id: 'cc-1', name: ' Data Platform ' }] } });
    const directory = fileOwnerDirectory(file);
    expect(await directory.read('123456789012')).toEqual({
      accountId: '123456789012',
      costCenters: [{ id: 'cc-1', name: 'Data Platform' }],
      routing: [{ id: 'cc-1', name: 'Data Platform' }],
    });
    expect(await directory.read('toString')).toBeUndefined();
    expect(await fileOwnerDirectory(file).read('nope')).toBeUndefined();
  });

  it('may name each cost center’s payer; an id named with two names is shared', async () => {
    const file = ownersFileSchema.parse({
      accounts: {
        '111111111111': [{ id: '7', name: 'Data', payer: '12345' }],
        '222222222222': [{ id: '7', name: 'Marketing', payer: '67890' }],
      },
    });
    expect((await fileOwnerDirectory(file).read('111111111111'))?.routing).toEqual([
      { id: '7', name: 'Data', payer: '12345', idShared: true },
    ]);
  });

  it('refuses a file with unknown members, a cost center without an id, or a payer with a colon', () => {
    expect(ownersFileSchema.safeParse({ accounts: {}, extra: 1 }).success).toBe(false);
    expect(ownersFileSchema.safeParse({ accounts: { a: [{ id: '', name: 'x' }] } }).success).toBe(false);
    expect(ownersFileSchema.safeParse({ accounts: { a: [{ id: '1', name: 'x', payer: '1:2' }] } }).success).toBe(false);
  });

  it('routes see more cost centers than a message names', async () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ id: `cc-${String(i).padStart(2, '0')}`, name: 'x' }));
    const owners = await fileOwnerDirectory(ownersFileSchema.parse({ accounts: { a: many } })).read('a');
    expect(owners?.routing).toHaveLength(51);
    expect(owners?.costCenters).toHaveLength(50);
  });
});
