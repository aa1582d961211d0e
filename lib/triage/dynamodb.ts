import type { AwsJsonCall } from '../aws/json-client.js';
import type { TriageAction, TriageAudit, TriageState } from './state.js';
import type { TriageRecord, TriageStore } from './store.js';

type Attribute = { S?: string; N?: string; L?: Array<{ M?: Record<string, Attribute> }> };

/**
 * A triaged anomaly is kept as long as the link that changed it works, so that a snooze holds to
 * its end whatever the dedup window. The template caps that window at this too, so a triage
 * action never shortens an item's life; a later follow-up sets the window again.
 */
const TRIAGE_ITEM_SECONDS = 30 * 86_400;

const ACTIONS = new Set<string>(['acknowledge', 'expected', 'snooze', 'reopen']);

function recordOf(item: Record<string, Attribute>): TriageRecord {
  const state = item['triage']?.S;
  const until = Number(item['triageUntil']?.N);
  const at = Number(item['triageAt']?.N);
  const by = item['triageBy']?.S;
  const triage: TriageState = {
    state: state === 'acknowledged' || state === 'expected' || state === 'snoozed' ? state : 'open',
    ...(Number.isFinite(until) ? { until } : {}),
    ...(Number.isFinite(at) ? { at } : {}),
    ...(by !== undefined ? { by } : {}),
  };
  const audit: TriageAudit[] = (item['audit']?.L ?? []).flatMap((entry) => {
    const action = entry.M?.['action']?.S ?? '';
    return ACTIONS.has(action)
      ? [{ who: entry.M?.['who']?.S ?? '', action: action as TriageAction, at: Number(entry.M?.['at']?.N ?? 0) }]
      : [];
  });
  const channel = item['channel']?.S;
  const ts = item['ts']?.S;
  return { triage, audit, ...(channel && ts ? { opening: { channel, ts } } : {}) };
}

/** Triage state on the anomaly item: the relay's item, extended with triage attributes and an audit list. */
export function dynamoTriageStore(dynamo: AwsJsonCall, tableName: string): TriageStore {
  return {
    async read(id, signal) {
      const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: id } }, ConsistentRead: true }, signal);
      const item = output['Item'] as Record<string, Attribute> | undefined;
      return item ? recordOf(item) : undefined;
    },
    async apply(id, state, entry, signal) {
      const values: Record<string, unknown> = {
        ':state': { S: state.state },
        ':by': { S: entry.who },
        ':at': { N: String(entry.at) },
        ':entry': { L: [{ M: { who: { S: entry.who }, action: { S: entry.action }, at: { N: String(entry.at) } } }] },
        ':empty': { L: [] },
        ':expires': { N: String(entry.at + TRIAGE_ITEM_SECONDS) },
      };
      let expression =
        'SET triage = :state, triageBy = :by, triageAt = :at, audit = list_append(if_not_exists(audit, :empty), :entry), expiresAt = :expires';
      if (state.until !== undefined) {
        expression += ', triageUntil = :until';
        values[':until'] = { N: String(state.until) };
      } else expression += ' REMOVE triageUntil';
      await dynamo(
        'UpdateItem',
        { TableName: tableName, Key: { id: { S: id } }, UpdateExpression: expression, ExpressionAttributeValues: values },
        signal,
      );
    },
  };
}
