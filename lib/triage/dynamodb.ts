import { type AwsJsonCall, isConditionFailure } from '../aws/json-client.js';
import { ReasonedError } from '../shared/errors.js';
import { TRIAGE_ACTIONS, TRIAGE_STATES, type TriageAction } from '../vocabulary/triage.js';
import { nextTriage, type TriageAudit, type TriageChange, type TriageState } from './state.js';
import type { TriageRecord, TriageStore } from './store.js';

/** Other actions kept changing the anomaly while this one was being recorded. */
export class TriageConflictError extends ReasonedError {}

/** How often an action is decided again when another one changed the item first. */
const WRITE_ATTEMPTS = 3;

type Attribute = { S?: string; N?: string; L?: Array<{ M?: Record<string, Attribute> }> };

/**
 * A triaged anomaly is kept as long as the link that changed it works, so that a snooze holds to
 * its end whatever the dedup window. The template caps that window at this too, so a triage
 * action never shortens an item's life; a later follow-up sets the window again.
 */
const TRIAGE_ITEM_SECONDS = 30 * 86_400;

const isAction = (value: string): value is TriageAction => (TRIAGE_ACTIONS as readonly string[]).includes(value);
const isState = (value: string | undefined): value is TriageState['state'] =>
  value !== undefined && (TRIAGE_STATES as readonly string[]).includes(value);

function recordOf(item: Record<string, Attribute>): TriageRecord {
  const state = item['triage']?.S;
  const until = Number(item['triageUntil']?.N);
  const at = Number(item['triageAt']?.N);
  const by = item['triageBy']?.S;
  const triage: TriageState = {
    state: isState(state) ? state : 'open',
    ...(Number.isFinite(until) ? { until } : {}),
    ...(Number.isFinite(at) ? { at } : {}),
    ...(by !== undefined ? { by } : {}),
  };
  const audit: TriageAudit[] = (item['audit']?.L ?? []).flatMap((entry) => {
    const action = entry.M?.['action']?.S ?? '';
    return isAction(action) ? [{ who: entry.M?.['who']?.S ?? '', action, at: Number(entry.M?.['at']?.N ?? 0) }] : [];
  });
  const channel = item['channel']?.S;
  const ts = item['ts']?.S;
  const firstSeen = Number(item['firstSeen']?.N);
  return { triage, audit, ...(channel && ts ? { opening: { channel, ts } } : {}), ...(Number.isFinite(firstSeen) ? { firstSeen } : {}) };
}

/** Triage state on the anomaly item: the relay's item, extended with triage attributes, an audit list and a version. */
export function dynamoTriageStore(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): TriageStore {
  const get = async (id: string, signal?: AbortSignal) => {
    const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: id } }, ConsistentRead: true }, signal);
    return output['Item'] as Record<string, Attribute> | undefined;
  };

  /** Writes a change over the version it was computed from; false when another action came in between. */
  async function write(id: string, change: TriageChange, version: number, signal?: AbortSignal): Promise<boolean> {
    const { state, audit } = change;
    const at = state.at ?? 0;
    const values: Record<string, unknown> = {
      ':state': { S: state.state },
      ':by': { S: state.by ?? '' },
      ':at': { N: String(at) },
      ':audit': { L: audit.map((e) => ({ M: { who: { S: e.who }, action: { S: e.action }, at: { N: String(e.at) } } })) },
      ':version': { N: String(version + 1) },
      ':expires': { N: String(at + TRIAGE_ITEM_SECONDS) },
    };
    let expression = 'SET triage = :state, triageBy = :by, triageAt = :at, audit = :audit, triageVersion = :version, expiresAt = :expires';
    if (state.until !== undefined) {
      expression += ', triageUntil = :until';
      values[':until'] = { N: String(state.until) };
    } else expression += ' REMOVE triageUntil';
    // Items written before versions existed hold none: they count as version 0.
    const condition =
      version === 0
        ? { ConditionExpression: 'attribute_not_exists(triageVersion) OR triageVersion = :seen' }
        : { ConditionExpression: 'triageVersion = :seen' };
    values[':seen'] = { N: String(version) };
    try {
      await dynamo(
        'UpdateItem',
        { TableName: tableName, Key: { id: { S: id } }, UpdateExpression: expression, ExpressionAttributeValues: values, ...condition },
        signal,
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  return {
    async read(id, signal) {
      const item = await get(id, signal);
      return item ? recordOf(item) : undefined;
    },
    async apply(id, action, who, nowSeconds, signal, onlyOpen) {
      // Read, decide, write over what was read: a repeat writes nothing, and two clicks at once
      // each decide from the other's result. The loser of a race decides once more.
      for (let attempt = 1; ; attempt++) {
        const item = await get(id, signal);
        const change = nextTriage(item && recordOf(item), action, who, nowSeconds, onlyOpen);
        if (!change) return { kind: 'unchanged' };
        if (await write(id, change, Number(item?.['triageVersion']?.N ?? 0) || 0, signal)) return { kind: 'applied', change };
        if (attempt >= WRITE_ATTEMPTS) throw new TriageConflictError('The anomaly changed while this action was recorded.', 'conflict');
      }
    },
    async firstUse(key, untilSeconds, signal) {
      try {
        // An update that creates the item: the role that may only update anomaly items needs no
        // PutItem, which could replace one whole. TTL deletes lazily: a record past its time is free again.
        await dynamo(
          'UpdateItem',
          {
            TableName: tableName,
            Key: { id: { S: key } },
            UpdateExpression: 'SET expiresAt = :until',
            ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
            ExpressionAttributeValues: { ':until': { N: String(untilSeconds) }, ':now': { N: String(Math.floor(now() / 1000)) } },
          },
          signal,
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
  };
}
