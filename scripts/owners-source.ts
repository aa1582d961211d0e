// Where the operator commands read the owner directory: an owners file, or a deployed stack's
// dedup table (its `owner#` items, as directory-sync writes them, and its last run).
import { readFile } from 'node:fs/promises';
import { type AwsJsonCall, awsJsonClient, DYNAMODB } from '../lib/aws/json-client.js';
import type { AwsCallLimits } from '../lib/aws/limits.js';
import { type LastRun, readLastRun } from '../lib/directory/last-run.js';
import {
  type AccountOwners,
  fileOwnerDirectory,
  OWNER_RECORD_PREFIX,
  type OwnerDirectory,
  ownersFileSchema,
  ownersOfFile,
  ownersOfRecord,
} from '../lib/owners/directory.js';
import { type Attribute, dynamoOwnerDirectory, ownerRecordOfItem } from '../lib/owners/dynamodb.js';
import { parseJson, whereJsonFails } from '../lib/shared/json.js';
import { describeIssues } from '../lib/shared/zod-issues.js';
import { awsErrorMessage, regionFrom, stackOutputs, UsageError } from './stack.js';

export interface OwnersSource {
  /** Where the owners come from, as the output names it. */
  label: string;
  directory: OwnerDirectory;
  /** Every account the source knows, with its cost centers. */
  list(): Promise<AccountOwners[]>;
  /** The stack's last directory-sync run; absent for a file, which has none. */
  lastRun?(): Promise<LastRun | undefined>;
}

/** An owners file that cannot be used: the message names the file and each problem by path, never a value. */
export class OwnersFileError extends UsageError {
  override name = 'OwnersFileError';
}

const OWNERS_FILE_FORMAT = '{"accounts": {"<account id>": [{"id", "name", "payer"?}]}}';

export async function ownersFromFile(file: string): Promise<OwnersSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new OwnersFileError(`Cannot read the owners file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}`);
  }
  const json = parseJson(text);
  const parsed = json.ok ? ownersFileSchema.safeParse(json.value) : undefined;
  if (!parsed?.success) {
    const syntax = json.ok ? undefined : await whereJsonFails(text);
    const problems = parsed
      ? describeIssues(parsed.error, ownersFileSchema).map((p) => `  ${p.path}: ${p.problem}`)
      : [syntax ? `  line ${syntax.line}, column ${syntax.column}: not valid JSON (${syntax.problem})` : '  (root): is not valid JSON'];
    throw new OwnersFileError(`${file} is not an owners file (${OWNERS_FILE_FORMAT}):\n${problems.join('\n')}`);
  }
  const owners = parsed.data;
  return { label: file, directory: fileOwnerDirectory(owners), list: async () => ownersOfFile(owners) };
}

/**
 * An operator's read of the table: a scan page may take seconds on a table that also holds every
 * delivery seen, so its calls get more time than the relay's, and pages stay small.
 */
const OPERATOR_DYNAMODB_LIMITS: AwsCallLimits = { connectionTimeoutMs: 3_000, requestTimeoutMs: 10_000, maxAttempts: 3 };
const SCAN_PAGE_ITEMS = 250;

/** What went wrong reading the table, in our words: the table, what was being read, and what to try. */
function readFailure(tableName: string, what: string, limits: AwsCallLimits, error: unknown): UsageError {
  const name = error instanceof Error ? error.name : '';
  const why =
    name === 'TimeoutError'
      ? `DynamoDB did not answer within ${limits.requestTimeoutMs / 1000} s, ${limits.maxAttempts} times (a busy or throttled table). Try again in a minute.`
      : awsErrorMessage(error);
  return new UsageError(`Could not read ${what} from the table ${tableName}: ${why}`);
}

/** The stack's owner directory: the `owner#` items of its dedup table (`DedupTableName` output, of `outputs` when given). */
export async function ownersFromStack(
  stack: string,
  region: string | undefined,
  outputs?: Record<string, string>,
  limits: AwsCallLimits = OPERATOR_DYNAMODB_LIMITS,
): Promise<OwnersSource> {
  const tableName = (outputs ?? (await stackOutputs(stack, region)))['DedupTableName'];
  if (!tableName) throw new UsageError(`The stack ${stack} has no DedupTableName output; is it a Cost Alert Relay stack of this version?`);
  const found = regionFrom(region);
  if (found) process.env['AWS_REGION'] = found;
  const dynamo = awsJsonClient(DYNAMODB, { limits });
  const reading =
    <A extends unknown[], T>(what: string, work: (...args: A) => Promise<T>) =>
    async (...args: A): Promise<T> => {
      try {
        return await work(...args);
      } catch (error) {
        throw readFailure(tableName, what, limits, error);
      }
    };
  const records = dynamoOwnerDirectory(dynamo, tableName);
  return {
    label: `the owner directory of stack ${stack}`,
    directory: { read: reading('an owner record', records.read) },
    list: reading('the owner directory', () => scanOwners(dynamo, tableName)),
    lastRun: reading('the last directory-sync run', () => readLastRun(dynamo, tableName)),
  };
}

async function scanOwners(dynamo: AwsJsonCall, tableName: string): Promise<AccountOwners[]> {
  const owners: AccountOwners[] = [];
  let start: unknown;
  do {
    const page = await dynamo('Scan', {
      TableName: tableName,
      FilterExpression: 'begins_with(id, :owner)',
      ExpressionAttributeValues: { ':owner': { S: OWNER_RECORD_PREFIX } },
      Limit: SCAN_PAGE_ITEMS,
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    // Read as the relay reads them: an expired item that TTL has not deleted yet is no record.
    for (const item of (page['Items'] ?? []) as Array<Record<string, Attribute>>) {
      const record = ownerRecordOfItem(item);
      if (record) owners.push(ownersOfRecord(record));
    }
    start = page['LastEvaluatedKey'];
  } while (start);
  return owners.sort((a, b) => a.accountId.localeCompare(b.accountId));
}
