import { createHash } from 'node:crypto';
import { type AwsJsonCall, isConditionFailure } from '../aws/json-client.js';
import {
  encodeEntry,
  entryBytes,
  type GroupEntry,
  type GroupStore,
  type JoinOutcome,
  joinOrder,
  MAX_GROUP_ALERTS,
  MAX_GROUP_BYTES,
  type TakeOutcome,
} from './store.js';

/** A flushed group's item lives this long, without the alerts' text, so a late closing job finds it flushed. */
export const FLUSHED_GROUP_SECONDS = 3_600;
/** An open group that never closes (its closing job lost for good) leaves the table this long after it should have closed. */
const UNCLOSED_GROUP_SECONDS = 86_400;

const seconds = (ms: number) => Math.floor(ms / 1000);

type GroupItem = {
  groupId?: { S?: string };
  state?: { S?: string };
  alerts?: { M?: Record<string, { S?: string }> };
  postedParts?: { N?: string };
  leaseUntil?: { N?: string };
};

const idOf = (destination: string) => `group#${createHash('sha256').update(destination).digest('hex')}`;
const encode = (entry: GroupEntry) => ({ S: encodeEntry(entry) });

function entriesOf(item: GroupItem): GroupEntry[] {
  return Object.values(item.alerts?.M ?? {})
    .map((value) => JSON.parse(value.S ?? 'null') as GroupEntry | null)
    .filter((entry): entry is GroupEntry => entry !== null)
    .sort(joinOrder);
}

/**
 * Each grouped destination's open group in the dedup table: one item (`group#…`) whose
 * `alerts` map is keyed by each alert's delivery record id, so concurrent relays join with one
 * conditional update each and a re-sent alert joins once. `alertBytes` counts what the alerts
 * take (entryBytes), added in the same update whose condition keeps it within MAX_GROUP_BYTES.
 * A closer leases the item (`leaseToken`, `leaseUntil` in epoch seconds); its later writes are
 * conditional on its token. The alerts' text is removed when the group is flushed.
 */
export function dynamoGroupStore(dynamo: AwsJsonCall, options: { tableName: string; now?: () => number }): GroupStore {
  const { tableName: TableName } = options;
  const now = options.now ?? Date.now;
  const update = async (input: Record<string, unknown>, signal?: AbortSignal) => {
    try {
      return { ok: true as const, result: await dynamo('UpdateItem', { TableName, ...input }, signal) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { ok: false as const, item: error.fields['Item'] as GroupItem | undefined };
    }
  };
  return {
    async join(destination, entry, signal): Promise<JoinOutcome> {
      const bytes = entryBytes(entry);
      const answer = await update(
        {
          Key: { id: { S: idOf(destination) } },
          UpdateExpression: 'SET alerts.#key = :entry ADD #bytes :bytes',
          // A group without `alertBytes` (written before it was counted) takes no one: its size is unknown.
          ConditionExpression:
            '#state = :open AND attribute_not_exists(alerts.#key) AND size(alerts) < :max AND #bytes <= :room AND expiresAt > :now',
          ExpressionAttributeNames: { '#state': 'state', '#key': entry.key, '#bytes': 'alertBytes' },
          ExpressionAttributeValues: {
            ':open': { S: 'open' },
            ':entry': encode(entry),
            ':bytes': { N: String(bytes) },
            ':max': { N: String(MAX_GROUP_ALERTS) },
            ':room': { N: String(MAX_GROUP_BYTES - bytes) },
            ':now': { N: String(seconds(now())) },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
        signal,
      );
      if (answer.ok) return { kind: 'joined' };
      const state = answer.item?.state?.S;
      if (state === 'open' && answer.item?.alerts?.M?.[entry.key]) return { kind: 'duplicate' };
      return state === 'open' || state === 'closing' ? { kind: 'busy' } : { kind: 'none' };
    },
    async open(destination, groupId, entry, waitSeconds, signal) {
      const t = seconds(now());
      try {
        await dynamo(
          'PutItem',
          {
            TableName,
            Item: {
              id: { S: idOf(destination) },
              state: { S: 'open' },
              groupId: { S: groupId },
              alerts: { M: { [entry.key]: encode(entry) } },
              alertBytes: { N: String(entryBytes(entry)) },
              postedParts: { N: '0' },
              expiresAt: { N: String(t + waitSeconds + UNCLOSED_GROUP_SECONDS) },
            },
            ConditionExpression: 'attribute_not_exists(id) OR #state = :flushed OR expiresAt < :now',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':flushed': { S: 'flushed' }, ':now': { N: String(t) } },
          },
          signal,
        );
        return true;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        return false;
      }
    },
    async take(destination, groupId, lease, signal): Promise<TakeOutcome> {
      const t = seconds(now());
      const answer = await update(
        {
          Key: { id: { S: idOf(destination) } },
          UpdateExpression: 'SET #state = :closing, leaseToken = :token, leaseUntil = :until',
          // Its own token too: an update that was written but whose answer was lost, when tried again.
          ConditionExpression:
            'groupId = :group AND (#state = :open OR (#state = :closing AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now OR leaseToken = :token)))',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':group': { S: groupId },
            ':open': { S: 'open' },
            ':closing': { S: 'closing' },
            ':token': { S: lease.token },
            ':until': { N: String(t + lease.holdSeconds) },
            ':now': { N: String(t) },
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
        signal,
      );
      if (answer.ok) {
        const item = answer.result['Attributes'] as GroupItem;
        return { kind: 'taken', entries: entriesOf(item), postedParts: Number(item.postedParts?.N ?? '0') };
      }
      const old = answer.item;
      if (old?.groupId?.S !== groupId || old.state?.S !== 'closing') return { kind: 'gone' };
      return { kind: 'leased', retryAfterSeconds: Math.max(1, Number(old.leaseUntil?.N ?? '0') - t) };
    },
    async posted(destination, groupId, token, parts, signal) {
      const answer = await update(
        {
          Key: { id: { S: idOf(destination) } },
          UpdateExpression: 'SET postedParts = :parts',
          ConditionExpression: 'groupId = :group AND leaseToken = :token',
          ExpressionAttributeValues: { ':group': { S: groupId }, ':token': { S: token }, ':parts': { N: String(parts) } },
        },
        signal,
      );
      return answer.ok;
    },
    async flushed(destination, groupId, token, signal) {
      const answer = await update(
        {
          Key: { id: { S: idOf(destination) } },
          UpdateExpression: 'SET #state = :flushed, expiresAt = :expires REMOVE alerts, alertBytes',
          ConditionExpression: 'groupId = :group AND leaseToken = :token',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':group': { S: groupId },
            ':token': { S: token },
            ':flushed': { S: 'flushed' },
            ':expires': { N: String(seconds(now()) + FLUSHED_GROUP_SECONDS) },
          },
        },
        signal,
      );
      return answer.ok;
    },
    async release(destination, groupId, token, signal) {
      await update(
        {
          Key: { id: { S: idOf(destination) } },
          UpdateExpression: 'REMOVE leaseToken, leaseUntil',
          ConditionExpression: 'groupId = :group AND leaseToken = :token',
          ExpressionAttributeValues: { ':group': { S: groupId }, ':token': { S: token } },
        },
        signal,
      );
    },
  };
}
