import type { AwsJsonCall } from '../aws/json-client.js';
import { fittingCostCenters } from '../message/cost-center.js';
import {
  type CostCenterRef,
  OWNER_RECORD_PREFIX,
  OWNER_RECORD_SECONDS,
  type OwnerDirectory,
  type OwnerRecord,
  type OwnerStore,
  ownerRecordId,
  ownersOfRecord,
  type PartCostCenter,
  type PayerPart,
} from './directory.js';

/** An attribute value as the DynamoDB JSON protocol carries it (the kinds owner items use). */
export type Attribute = { S?: string; N?: string; BOOL?: boolean; L?: Attribute[]; M?: Record<string, Attribute> };

/** Each entry with an id, as written; names default to empty, and `shared` marks an id another payer uses too. */
const entriesOf = (list: Attribute | undefined): PartCostCenter[] =>
  (list?.L ?? []).flatMap((entry) => {
    const id = entry.M?.['id']?.S;
    if (!id) return [];
    return [{ id, name: entry.M?.['name']?.S ?? '', ...(entry.M?.['shared']?.BOOL === true ? { idShared: true } : {}) }];
  });

const costCenterList = (costCenters: readonly PartCostCenter[]) => ({
  L: costCenters.map(({ id, name, idShared }) => ({
    M: { id: { S: id }, name: { S: name }, ...(idShared ? { shared: { BOOL: true } } : {}) },
  })),
});

const epochSeconds = (attribute: { N?: string } | undefined): number => Number(attribute?.N ?? 0) || 0;

/**
 * An `owner#` item as the record it holds, as every reader of the directory takes it; undefined
 * for an item that is not one, or has expired (TTL deletes lazily: an item past its time is as
 * good as none). What a message names stays within what a queued retry carries, however the
 * item was written.
 */
export function ownerRecordOfItem(item: Record<string, Attribute> | undefined, now: () => number = Date.now): OwnerRecord | undefined {
  const id = item?.['id']?.S;
  if (!item || !id?.startsWith(OWNER_RECORD_PREFIX)) return undefined;
  if (epochSeconds(item['expiresAt']) < Math.floor(now() / 1000)) return undefined;
  const accountId = id.slice(OWNER_RECORD_PREFIX.length);
  const costCenters: CostCenterRef[] = fittingCostCenters(entriesOf(item['costCenters']));
  const record: OwnerRecord = { accountId, costCenters, readAt: epochSeconds(item['readAt']) };
  const payers = item['payers']?.M;
  if (payers) {
    // Items written before parts named their account key were keyed by it alone.
    record.parts = Object.entries(payers).map(([key, part]) => ({
      accountKey: part.M?.['accountKey']?.S || key,
      costCenters: entriesOf(part.M?.['costCenters']),
      readAt: epochSeconds(part.M?.['readAt']),
    }));
  }
  return record;
}

/** One GetItem: the record, or undefined when there is none or it has expired. */
async function readRecord(
  dynamo: AwsJsonCall,
  tableName: string,
  now: () => number,
  accountId: string,
  signal: AbortSignal | undefined,
): Promise<OwnerRecord | undefined> {
  const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: ownerRecordId(accountId) } } }, signal);
  return ownerRecordOfItem(output['Item'] as Record<string, Attribute> | undefined, now);
}

/** The directory in the dedup table: one `owner#<account>` item per cloud account. */
export function dynamoOwnerDirectory(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): OwnerDirectory {
  return {
    read: async (accountId, signal) => {
      const record = await readRecord(dynamo, tableName, now, accountId, signal);
      return record && ownersOfRecord(record);
    },
  };
}

/**
 * directory-sync's store: whole records, each payer's part (with its account key) beside what a
 * message names, expiring OWNER_RECORD_SECONDS after their oldest part was read.
 */
export function dynamoOwnerStore(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): OwnerStore {
  const partItem = ({ accountKey, costCenters, readAt }: PayerPart) => ({
    M: { accountKey: { S: accountKey }, costCenters: costCenterList(costCenters), readAt: { N: String(readAt) } },
  });
  return {
    read: (accountId, signal) => readRecord(dynamo, tableName, now, accountId, signal),
    async write({ accountId, costCenters, readAt, parts }, signal) {
      await dynamo(
        'PutItem',
        {
          TableName: tableName,
          Item: {
            id: { S: ownerRecordId(accountId) },
            costCenters: costCenterList(costCenters.map(({ id, name }) => ({ id, name }))),
            readAt: { N: String(readAt) },
            expiresAt: { N: String(readAt + OWNER_RECORD_SECONDS) },
            ...(parts ? { payers: { M: Object.fromEntries(parts.map((part) => [part.accountKey, partItem(part)])) } } : {}),
          },
        },
        signal,
      );
    },
    async remove(accountId, signal) {
      await dynamo('DeleteItem', { TableName: tableName, Key: { id: { S: ownerRecordId(accountId) } } }, signal);
    },
  };
}
