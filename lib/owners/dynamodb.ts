import type { AwsJsonCall } from '../aws/json-client.js';
import {
  type CostCenterRef,
  OWNER_RECORD_SECONDS,
  type OwnerDirectory,
  type OwnerRecord,
  type OwnerWriter,
  ownerRecordId,
} from './directory.js';

type Attribute = { S?: string; N?: string; L?: Array<{ M?: Record<string, { S?: string }> }> };

function recordOf(accountId: string, item: Record<string, Attribute>): OwnerRecord {
  const costCenters: CostCenterRef[] = (item['costCenters']?.L ?? []).flatMap((entry) => {
    const id = entry.M?.['id']?.S;
    return id ? [{ id, name: entry.M?.['name']?.S ?? '' }] : [];
  });
  return { accountId, costCenters, readAt: Number(item['readAt']?.N ?? 0) || 0 };
}

/** The directory in the dedup table: one `owner#<account>` item per cloud account. */
export function dynamoOwnerDirectory(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): OwnerDirectory {
  return {
    async read(accountId, signal) {
      const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: ownerRecordId(accountId) } } }, signal);
      const item = output['Item'] as Record<string, Attribute> | undefined;
      // TTL deletes lazily: an item past its time is as good as none.
      if (!item || Number(item['expiresAt']?.N ?? 0) < Math.floor(now() / 1000)) return undefined;
      return recordOf(accountId, item);
    },
  };
}

/** directory-sync's writes: the whole record, expiring OWNER_RECORD_SECONDS after the run that read it. */
export function dynamoOwnerWriter(dynamo: AwsJsonCall, tableName: string): OwnerWriter {
  return {
    async write({ accountId, costCenters, readAt }, signal) {
      await dynamo(
        'PutItem',
        {
          TableName: tableName,
          Item: {
            id: { S: ownerRecordId(accountId) },
            costCenters: { L: costCenters.map(({ id, name }) => ({ M: { id: { S: id }, name: { S: name } } })) },
            readAt: { N: String(readAt) },
            expiresAt: { N: String(readAt + OWNER_RECORD_SECONDS) },
          },
        },
        signal,
      );
    },
  };
}
