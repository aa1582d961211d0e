// Where the operator commands read the owner directory: an owners file, or a deployed stack's
// dedup table (its `owner#` items, as directory-sync writes them).
import { readFile } from 'node:fs/promises';
import { awsJsonClient, DYNAMODB } from '../lib/aws/json-client.js';
import { DYNAMODB_LIMITS } from '../lib/aws/limits.js';
import {
  fileOwnerDirectory,
  OWNER_RECORD_PREFIX,
  type OwnerDirectory,
  type OwnerRecord,
  ownersFileSchema,
} from '../lib/owners/directory.js';
import { type Attribute, dynamoOwnerDirectory, ownerRecordOfItem } from '../lib/owners/dynamodb.js';
import { parseJson } from '../lib/shared/json.js';
import { describeIssues } from '../lib/shared/zod-issues.js';
import { regionFrom, stackOutputs, UsageError } from './stack.js';

export interface OwnersSource {
  /** Where the owners come from, as the output names it. */
  label: string;
  directory: OwnerDirectory;
  /** Every account the source knows, with its cost centers. */
  list(): Promise<OwnerRecord[]>;
}

export async function ownersFromFile(file: string): Promise<OwnersSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read the owners file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}`);
  }
  const json = parseJson(text);
  const parsed = json.ok ? ownersFileSchema.safeParse(json.value) : undefined;
  if (!parsed?.success) {
    const problems = parsed
      ? describeIssues(parsed.error, ownersFileSchema).map((p) => `  ${p.path}: ${p.problem}`)
      : ['  (root): is not valid JSON'];
    throw new UsageError(`${file} is not an owners file ({"accounts": {"<account id>": [{"id", "name"}]}}):\n${problems.join('\n')}`);
  }
  const file_ = parsed.data;
  return {
    label: file,
    directory: fileOwnerDirectory(file_),
    list: async () => Object.entries(file_.accounts).map(([accountId, costCenters]) => ({ accountId, costCenters, readAt: 0 })),
  };
}

/** The stack's owner directory: the `owner#` items of its dedup table (`DedupTableName` output, of `outputs` when given). */
export async function ownersFromStack(stack: string, region: string | undefined, outputs?: Record<string, string>): Promise<OwnersSource> {
  const tableName = (outputs ?? (await stackOutputs(stack, region)))['DedupTableName'];
  if (!tableName) throw new UsageError(`The stack ${stack} has no DedupTableName output; is it a Cost Alert Relay stack of this version?`);
  const found = regionFrom(region);
  if (found) process.env['AWS_REGION'] = found;
  const dynamo = awsJsonClient(DYNAMODB, { limits: DYNAMODB_LIMITS });
  const directory = dynamoOwnerDirectory(dynamo, tableName);
  return {
    label: `the owner directory of stack ${stack}`,
    directory,
    async list() {
      const records: OwnerRecord[] = [];
      let start: unknown;
      do {
        const page = await dynamo('Scan', {
          TableName: tableName,
          FilterExpression: 'begins_with(id, :owner)',
          ExpressionAttributeValues: { ':owner': { S: OWNER_RECORD_PREFIX } },
          ...(start ? { ExclusiveStartKey: start } : {}),
        });
        // Read as the relay reads them: an expired item that TTL has not deleted yet is no record.
        for (const item of (page['Items'] ?? []) as Array<Record<string, Attribute>>) {
          const record = ownerRecordOfItem(item);
          if (record) records.push(record);
        }
        start = page['LastEvaluatedKey'];
      } while (start);
      return records.sort((a, b) => a.accountId.localeCompare(b.accountId));
    },
  };
}
