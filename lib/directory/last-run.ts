import type { AwsJsonCall } from '../aws/json-client.js';
import { DIRECTORY_SYNC_OUTCOMES, type DirectorySyncOutcome } from '../metrics/metrics.js';

/**
 * When directory-sync last ran and how it ended, for `npm run owners` and `config explain --stack`:
 * an item 71 hours old reads like a fresh one unless the operator also sees that the runs since
 * have failed. Counts and an outcome only; never a name, key or token.
 */
export interface LastRun {
  /** Epoch seconds when the run ended. */
  at: number;
  outcome: DirectorySyncOutcome;
  payers: number;
  payersRead: number;
  payersSkipped: number;
  accountsWritten: number;
  accountsRemoved: number;
  accountsNotWritten: number;
}

export interface LastRunStore {
  write(run: LastRun, signal?: AbortSignal): Promise<void>;
}

/** Its item id in the dedup table: not an `owner#` item, so neither the relay nor a scan of owners meets it. */
const LAST_RUN_ID = 'directory#last-run';
/** Kept well past the records: a run long ago is what an operator must see when the schedule stopped. */
const LAST_RUN_SECONDS = 30 * 86_400;

const COUNTS = ['payers', 'payersRead', 'payersSkipped', 'accountsWritten', 'accountsRemoved', 'accountsNotWritten'] as const;

export function dynamoLastRun(dynamo: AwsJsonCall, tableName: string): LastRunStore {
  return {
    async write(run, signal) {
      const counts = Object.fromEntries(COUNTS.map((name) => [name, { N: String(run[name]) }]));
      await dynamo(
        'PutItem',
        {
          TableName: tableName,
          Item: {
            id: { S: LAST_RUN_ID },
            at: { N: String(run.at) },
            outcome: { S: run.outcome },
            ...counts,
            expiresAt: { N: String(run.at + LAST_RUN_SECONDS) },
          },
        },
        signal,
      );
    },
  };
}

/** The last run as directory-sync kept it; undefined when none was kept (no run yet, or one of an older version). */
export async function readLastRun(dynamo: AwsJsonCall, tableName: string, signal?: AbortSignal): Promise<LastRun | undefined> {
  const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: LAST_RUN_ID } } }, signal);
  const item = output['Item'] as Record<string, { S?: string; N?: string }> | undefined;
  const outcome = DIRECTORY_SYNC_OUTCOMES.find((o) => o === item?.['outcome']?.S);
  const at = Number(item?.['at']?.N);
  if (!item || !outcome || !Number.isFinite(at)) return undefined;
  const count = (name: (typeof COUNTS)[number]) => Number(item[name]?.N ?? 0) || 0;
  return {
    at,
    outcome,
    payers: count('payers'),
    payersRead: count('payersRead'),
    payersSkipped: count('payersSkipped'),
    accountsWritten: count('accountsWritten'),
    accountsRemoved: count('accountsRemoved'),
    accountsNotWritten: count('accountsNotWritten'),
  };
}
