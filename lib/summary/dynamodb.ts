import { type AwsJsonCall, isConditionFailure } from '../aws/json-client.js';
import { SUMMARY_DESTINATION, SUMMARY_FIRST_SEEN, SUMMARY_INDEX } from '../dedup/summary-record.js';
import { triageOfItem } from '../dedup/triage-item.js';
import { type SummaryRecords, type SummaryWeeks, WEEK_KEPT_SECONDS, weekItemId } from './store.js';
import type { SummaryRecord } from './view.js';

type Attribute = { S?: string; N?: string };
type Item = Record<string, Attribute | undefined>;

const number = (attribute: Attribute | undefined): number | undefined => {
  const value = Number(attribute?.N);
  return attribute?.N !== undefined && Number.isFinite(value) ? value : undefined;
};

function recordOf(item: Item): SummaryRecord | undefined {
  const id = item['id']?.S;
  const firstSeen = number(item[SUMMARY_FIRST_SEEN]);
  if (id === undefined || firstSeen === undefined) return undefined;
  const triage = triageOfItem(item);
  return {
    id,
    title: item['title']?.S ?? '',
    accountId: item['accountId']?.S ?? '',
    accountName: item['accountName']?.S ?? '',
    origin: item['origin']?.S,
    thread: item['thread']?.S,
    firstSeen,
    followUps: number(item['followUps']) ?? 0,
    ...(triage ? { triage } : {}),
  };
}

/**
 * A destination's anomalies from the dedup table's summary index (template.yaml declares it):
 * one query by destination and first sighting, page by page, never a scan of the table.
 */
export function dynamoSummaryRecords(dynamo: AwsJsonCall, tableName: string): SummaryRecords {
  return {
    async since(destination, fromSeconds, signal) {
      const records: SummaryRecord[] = [];
      let start: unknown;
      do {
        const page = await dynamo(
          'Query',
          {
            TableName: tableName,
            IndexName: SUMMARY_INDEX,
            KeyConditionExpression: '#destination = :destination AND #firstSeen >= :from',
            ExpressionAttributeNames: { '#destination': SUMMARY_DESTINATION, '#firstSeen': SUMMARY_FIRST_SEEN },
            ExpressionAttributeValues: { ':destination': { S: destination }, ':from': { N: String(fromSeconds) } },
            ...(start ? { ExclusiveStartKey: start } : {}),
          },
          signal,
        );
        for (const item of (page['Items'] ?? []) as Item[]) {
          const record = recordOf(item);
          if (record) records.push(record);
        }
        start = page['LastEvaluatedKey'];
      } while (start);
      return records;
    },
  };
}

/** The weeks taken, as `summary#<destination>#<week>` items beside the anomalies, expiring by themselves. */
export function dynamoSummaryWeeks(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): SummaryWeeks {
  const seconds = () => Math.floor(now() / 1000);
  const Key = (destination: string, week: string) => ({ id: { S: weekItemId(destination, week) } });
  return {
    async take(destination, week, { token, holdSeconds }, signal) {
      const t = seconds();
      try {
        await dynamo(
          'PutItem',
          {
            TableName: tableName,
            Item: {
              ...Key(destination, week),
              state: { S: 'taken' },
              token: { S: token },
              holdUntil: { N: String(t + holdSeconds) },
              expiresAt: { N: String(t + WEEK_KEPT_SECONDS) },
            },
            // Free when new, expired (TTL deletes lazily), or held by a run that outlived its hold.
            ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now OR (#state = :taken AND holdUntil < :now)',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':now': { N: String(t) }, ':taken': { S: 'taken' } },
          },
          signal,
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
    async posted(destination, week, coveredTo, signal) {
      await dynamo(
        'PutItem',
        {
          TableName: tableName,
          Item: {
            ...Key(destination, week),
            state: { S: 'posted' },
            coveredTo: { N: String(coveredTo) },
            expiresAt: { N: String(seconds() + WEEK_KEPT_SECONDS) },
          },
        },
        signal,
      );
    },
    async coveredTo(destination, week, signal) {
      // Consistent: the week's post may have been marked by the previous run only moments ago.
      const answer = await dynamo(
        'GetItem',
        {
          TableName: tableName,
          Key: Key(destination, week),
          ConsistentRead: true,
          ProjectionExpression: '#state, coveredTo',
          ExpressionAttributeNames: { '#state': 'state' },
        },
        signal,
      );
      const item = answer['Item'] as Item | undefined;
      return item?.['state']?.S === 'posted' ? number(item['coveredTo']) : undefined;
    },
    async release(destination, week, token, signal) {
      try {
        await dynamo(
          'DeleteItem',
          {
            TableName: tableName,
            Key: Key(destination, week),
            ConditionExpression: '#token = :token',
            ExpressionAttributeNames: { '#token': 'token' },
            ExpressionAttributeValues: { ':token': { S: token } },
          },
          signal,
        );
      } catch (error) {
        // Taken again by a later run meanwhile (this one outlived its hold): that one's to keep.
        if (!isConditionFailure(error)) throw error;
      }
    },
  };
}
