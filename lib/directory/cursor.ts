import type { AwsJsonCall } from '../aws/json-client.js';
import { OWNER_RECORD_SECONDS } from '../owners/directory.js';

/**
 * Where the next run starts reading payers: the payer at which the last run stopped for time or
 * the platform's pace. Without it every run would begin with the same payers and an organisation
 * larger than one run's reach would never get records for the rest.
 */
export interface SyncCursor {
  /** The payer's account key, or undefined when no run has stopped early. */
  read(signal?: AbortSignal): Promise<string | undefined>;
  write(payer: string, signal?: AbortSignal): Promise<void>;
}

/** Its item id in the dedup table: not an `owner#` item, so neither the relay nor `npm run owners` meets it. */
export const SYNC_CURSOR_ID = 'directory#cursor';

/** The cursor as one item of the dedup table: a payer's account key and its expiry, nothing secret. */
export function dynamoSyncCursor(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): SyncCursor {
  return {
    async read(signal) {
      const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: SYNC_CURSOR_ID } } }, signal);
      const item = output['Item'] as Record<string, { S?: string }> | undefined;
      return item?.['nextPayer']?.S || undefined;
    },
    async write(payer, signal) {
      // It goes when the directory would, should directory-sync stop running.
      const expiresAt = Math.floor(now() / 1000) + OWNER_RECORD_SECONDS;
      await dynamo(
        'PutItem',
        { TableName: tableName, Item: { id: { S: SYNC_CURSOR_ID }, nextPayer: { S: payer }, expiresAt: { N: String(expiresAt) } } },
        signal,
      );
    },
  };
}
