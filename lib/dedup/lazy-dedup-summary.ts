// Loaded with import() by lazy-anomaly.ts for an anomaly at a destination with a weekly summary,
// and bundled on its own: a relay whose destinations have none never parses the formatting code
// it needs.
import type { AwsJsonCall } from '../aws/json-client.js';
import { summaryFields } from './summary-fields.js';
import { KEPT_UNTIL, SUMMARY_DESTINATION, SUMMARY_KEEP_SECONDS, type SummaryNote } from './summary-record.js';

type Attribute = { S: string } | { N: string };

/** The item's attributes for the summary (summary-record.ts): what it shows, and how long the item must live for it. */
export function summaryAttributes(note: SummaryNote, firstSeen: number): Record<string, Attribute> {
  const fields = summaryFields(note);
  return {
    [SUMMARY_DESTINATION]: { S: fields.destination },
    title: { S: fields.title },
    accountId: { S: fields.accountId },
    accountName: { S: fields.accountName },
    ...(fields.origin ? { origin: { S: fields.origin } } : {}),
    ...(fields.thread ? { thread: { S: fields.thread } } : {}),
    [KEPT_UNTIL]: { N: String(firstSeen + SUMMARY_KEEP_SECONDS) },
  };
}

/** `SET #s0 = :s0, …`: some of the names may be reserved words in DynamoDB. */
export function setting(attributes: Record<string, unknown>) {
  const entries = Object.entries(attributes);
  return {
    expression: entries.map((_, i) => `#s${i} = :s${i}`).join(', '),
    names: Object.fromEntries(entries.map(([name], i) => [`#s${i}`, name])),
    values: Object.fromEntries(entries.map(([, value], i) => [`:s${i}`, value])),
  };
}

type FoundItem = { firstSeen?: { N?: string }; expiresAt?: { N?: string }; summaryOf?: { S?: string }; origin?: { S?: string } };

/**
 * A later delivery of a summarised anomaly whose item lacks what the summary shows (the
 * destination's summary is new, or the triage function wrote the item first) or names another
 * origin: what the summary shows is written again, and the item kept long enough for it. Best
 * effort: the delivery goes on whatever happens here.
 */
export async function refreshSummary(
  dynamo: AwsJsonCall,
  TableName: string,
  id: string,
  found: FoundItem | undefined,
  note: SummaryNote,
  signal?: AbortSignal,
): Promise<void> {
  const firstSeen = Number(found?.firstSeen?.N);
  if (!Number.isFinite(firstSeen) || (found?.[SUMMARY_DESTINATION]?.S === note.destination && found.origin?.S === note.origin)) return;
  const set = setting(summaryAttributes(note, firstSeen));
  const keep = Math.max(Number(found?.expiresAt?.N) || 0, firstSeen + SUMMARY_KEEP_SECONDS);
  await dynamo(
    'UpdateItem',
    {
      TableName,
      Key: { id: { S: id } },
      UpdateExpression: `SET ${set.expression}, expiresAt = :keep`,
      // The opening it was read with: an item opened again meanwhile gets its own attributes.
      ConditionExpression: 'firstSeen = :first',
      ExpressionAttributeNames: set.names,
      ExpressionAttributeValues: { ...set.values, ':keep': { N: String(keep) }, ':first': { N: String(firstSeen) } },
    },
    signal,
  ).catch(() => undefined);
}
