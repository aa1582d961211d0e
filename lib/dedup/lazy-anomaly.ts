// Loaded with import() by dynamodb.ts and bundled on its own (a lazy-*.ts module), so nothing it
// shares with the cold path moves into a chunk the cold path loads too. What must be the cold
// path's own instance (the condition-failure check of its error class) comes in as arguments.
import type { AwsJsonCall } from '../aws/json-client.js';
import type { AnomalyStart, AnomalyTable, EscalationClaim, EscalationClaimOutcome, StoredAnomaly } from './ledger.js';
import { KEPT_UNTIL, SUMMARY_KEEP_SECONDS } from './summary-record.js';
import { triageOfItem } from './triage-item.js';

const seconds = (ms: number) => Math.floor(ms / 1000);

type AnomalyItem = {
  firstSeen?: { N?: string };
  expiresAt?: { N?: string };
  followUps?: { N?: string };
  lastUpdate?: { N?: string };
  channel?: { S?: string };
  ts?: { S?: string };
  triage?: { S?: string };
  triageUntil?: { N?: string };
  triageBy?: { S?: string };
  triageAt?: { N?: string };
  escalatedAt?: { N?: string };
  escalationUntil?: { N?: string };
  escalationToken?: { S?: string };
  escalationUpdates?: { N?: string };
  escalationUnscheduled?: { N?: string };
  openingShown?: { N?: string };
};

/** The item as stored: `firstSeen` only where an opening wrote it (ledger.ts, anomalyStartOf). */
function storedAnomaly(item: AnomalyItem | undefined): StoredAnomaly | undefined {
  if (!item) return undefined;
  const firstSeen = Number(item.firstSeen?.N);
  const followUps = Number(item.followUps?.N);
  const lastUpdate = Number(item.lastUpdate?.N);
  const channel = item.channel?.S;
  const ts = item.ts?.S;
  const triage = triageOfItem(item);
  // A mark left by an earlier opening of the anomaly says nothing of this one.
  const escalation = item.escalatedAt
    ? 'escalated'
    : item.escalationUnscheduled?.N !== undefined && item.escalationUnscheduled.N === item.firstSeen?.N
      ? 'unscheduled'
      : undefined;
  return {
    ...(item.firstSeen?.N !== undefined && Number.isFinite(firstSeen) ? { firstSeen } : {}),
    ...(Number.isFinite(followUps) ? { followUps } : {}),
    ...(item.lastUpdate?.N !== undefined && Number.isFinite(lastUpdate) ? { lastUpdate } : {}),
    ...(channel && ts ? { opening: { channel, ts } } : {}),
    ...(triage ? { triage } : {}),
    ...(escalation ? { escalation } : {}),
  };
}

/** Why an escalation's lease was not taken, from the item the failed condition returned. */
function escalationFound(item: AnomalyItem | undefined, claim: EscalationClaim, t: number): EscalationClaimOutcome {
  if (item?.firstSeen?.N === undefined || Number(item.firstSeen.N) !== claim.firstSeen) return { kind: 'gone' };
  if (item.escalatedAt) return { kind: 'escalated' };
  if (item.triage) return { kind: 'triaged' };
  // The client retries a write whose answer was lost; the retry then meets the lease itself.
  if (item.escalationToken?.S === claim.token) return { kind: 'claimed' };
  if (claim.unposted && item.openingShown?.N !== item.firstSeen.N) return { kind: 'unshown' };
  const until = Number(item.escalationUntil?.N);
  if (Number.isFinite(until) && until >= t) return { kind: 'held', retryAfterSeconds: Math.max(1, until - t) };
  return { kind: 'newer' };
}

/**
 * Each anomaly's state in the dedup table: one item per anomaly and destination (`anomaly#…`),
 * holding ids and times only. Opened with a conditional write that returns the existing item
 * when it fails, so a follow-up learns the state in the same round trip.
 */
export function dynamoAnomalyTable(
  dynamo: AwsJsonCall,
  options: { tableName: string; windowSeconds: number },
  now: () => number,
  isConditionFailure: (error: unknown) => error is { fields: Record<string, unknown> },
  startOf: (stored: StoredAnomaly | undefined) => AnomalyStart,
): AnomalyTable {
  const { tableName: TableName } = options;
  // A write whose condition says it has nothing to do: someone else's lease, or a later opening.
  const ignoringConditionFailure = (write: Promise<unknown>): Promise<void> =>
    write.then(
      () => undefined,
      (error: unknown) => {
        if (!isConditionFailure(error)) throw error;
      },
    );
  // A mark on the opening it is about, never on a later one (the update would create a gone item).
  const markOpening = (id: string, firstSeen: number, attribute: 'escalationUnscheduled' | 'openingShown', signal?: AbortSignal) =>
    ignoringConditionFailure(
      dynamo(
        'UpdateItem',
        {
          TableName,
          Key: { id: { S: id } },
          UpdateExpression: `SET ${attribute} = :firstSeen`,
          ConditionExpression: 'firstSeen = :firstSeen',
          ExpressionAttributeValues: { ':firstSeen': { N: String(firstSeen) } },
        },
        signal,
      ),
    );
  // What a summary shows loads with the first anomaly at a destination that has one.
  let summaries: Promise<typeof import('./lazy-dedup-summary.js')> | undefined;
  const summaryCode = () => {
    summaries ??= import('./lazy-dedup-summary.js');
    return summaries;
  };
  /**
   * An update that sets the usual window (`:expires`) without shortening a summarised or waiting
   * anomaly's life below KEPT_UNTIL: the later of the two. The window reaching past KEPT_UNTIL
   * removes it, so that it costs a second write once, not on every later update.
   */
  const updateKeepingSummary = async (
    input: { UpdateExpression: string; ExpressionAttributeValues: Record<string, unknown> },
    id: string,
    signal?: AbortSignal,
  ) => {
    const base = { TableName, Key: { id: { S: id } }, ExpressionAttributeValues: input.ExpressionAttributeValues };
    const keeping = `${input.UpdateExpression}, expiresAt = if_not_exists(${KEPT_UNTIL}, :expires)`;
    try {
      await dynamo(
        'UpdateItem',
        { ...base, UpdateExpression: keeping, ConditionExpression: `attribute_not_exists(${KEPT_UNTIL}) OR ${KEPT_UNTIL} >= :expires` },
        signal,
      );
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    try {
      await dynamo(
        'UpdateItem',
        {
          ...base,
          UpdateExpression: `${input.UpdateExpression}, expiresAt = :expires REMOVE ${KEPT_UNTIL}`,
          ConditionExpression: `attribute_not_exists(${KEPT_UNTIL}) OR ${KEPT_UNTIL} < :expires`,
        },
        signal,
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Raised in between (an escalation's wait kept it longer): that is the later one now.
      await dynamo('UpdateItem', { ...base, UpdateExpression: keeping }, signal);
    }
  };

  return {
    async startAnomaly(id, signal, summary) {
      const t = seconds(now());
      const expires = t + options.windowSeconds;
      const code = summary ? await summaryCode() : undefined;
      const attributes = summary && code?.summaryAttributes(summary, t);
      let found: AnomalyItem | undefined;
      try {
        await dynamo(
          'PutItem',
          {
            TableName,
            Item: {
              id: { S: id },
              firstSeen: { N: String(t) },
              followUps: { N: '0' },
              expiresAt: { N: String(attributes ? Math.max(expires, t + SUMMARY_KEEP_SECONDS) : expires) },
              ...attributes,
            },
            ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
            ExpressionAttributeValues: { ':now': { N: String(t) } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
          signal,
        );
        return { kind: 'opened' as const, firstSeen: t };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        found = error.fields['Item'] as AnomalyItem | undefined;
      }
      const start = startOf(storedAnomaly(found));
      if (start.kind === 'existing') {
        if (summary) await code?.refreshSummary(dynamo, TableName, id, found, summary, signal);
        return start;
      }
      // An item nobody opened (triage state written first): open it in place, keeping that state
      // and its longer life; of two deliveries arriving together, the condition lets one open it.
      const kept = Math.max(expires, Number(found?.expiresAt?.N) || 0, attributes ? t + SUMMARY_KEEP_SECONDS : 0);
      const set = code?.setting(attributes ?? {});
      try {
        await dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: `SET firstSeen = :now, followUps = :zero, expiresAt = :expires${set ? `, ${set.expression}` : ''}`,
            ConditionExpression: 'attribute_not_exists(firstSeen)',
            ...(set ? { ExpressionAttributeNames: set.names } : {}),
            ExpressionAttributeValues: { ':now': { N: String(t) }, ':zero': { N: '0' }, ':expires': { N: String(kept) }, ...set?.values },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
          signal,
        );
        return { ...start, firstSeen: t };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        return startOf(storedAnomaly(error.fields['Item'] as AnomalyItem | undefined));
      }
    },

    async readAnomaly(id, signal) {
      const read = await dynamo('GetItem', { TableName, Key: { id: { S: id } }, ConsistentRead: true }, signal);
      const item = read['Item'] as AnomalyItem | undefined;
      // Past its window it is gone, whether or not TTL has deleted it yet.
      if (Number(item?.expiresAt?.N) < seconds(now())) return undefined;
      const start = startOf(storedAnomaly(item));
      return start.kind === 'existing' ? start.state : undefined;
    },

    async anomalyOpened(id, opening, signal) {
      const t = seconds(now());
      await updateKeepingSummary(
        {
          UpdateExpression: 'SET channel = :channel, ts = :ts, firstSeen = if_not_exists(firstSeen, :now)',
          ExpressionAttributeValues: {
            ':channel': { S: opening.channel },
            ':ts': { S: opening.ts },
            ':expires': { N: String(t + options.windowSeconds) },
            ':now': { N: String(t) },
          },
        },
        id,
        signal,
      );
    },

    async anomalyFollowedUp(id, signal) {
      const t = seconds(now());
      await updateKeepingSummary(
        {
          UpdateExpression: 'ADD followUps :one SET lastUpdate = :now, firstSeen = if_not_exists(firstSeen, :now)',
          ExpressionAttributeValues: { ':one': { N: '1' }, ':now': { N: String(t) }, ':expires': { N: String(t + options.windowSeconds) } },
        },
        id,
        signal,
      );
    },

    async forgetAnomaly(id, signal) {
      // Only an opening nobody has: once a message or a follow-up exists, the anomaly stays.
      const nobodyHasIt = 'attribute_not_exists(ts) AND followUps = :zero';
      try {
        await dynamo(
          'DeleteItem',
          {
            TableName,
            Key: { id: { S: id } },
            ConditionExpression: `${nobodyHasIt} AND attribute_not_exists(triage)`,
            ExpressionAttributeValues: { ':zero': { N: '0' } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
          signal,
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        if ((error.fields['Item'] as AnomalyItem | undefined)?.triage === undefined) return;
      }
      // What someone decided stays: only the opening goes, so the next delivery opens again.
      await ignoringConditionFailure(
        dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: 'REMOVE firstSeen, followUps',
            ConditionExpression: nobodyHasIt,
            ExpressionAttributeValues: { ':zero': { N: '0' } },
          },
          signal,
        ),
      );
    },

    async keepAnomaly(id, firstSeen, untilSeconds, signal) {
      // Only ever longer, and only the opening the escalation waits on.
      await ignoringConditionFailure(
        dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            // Kept until then also through later follow-ups, which set the usual window otherwise.
            UpdateExpression: `SET expiresAt = :until, ${KEPT_UNTIL} = :until`,
            ConditionExpression: 'firstSeen = :firstSeen AND expiresAt < :until',
            ExpressionAttributeValues: { ':firstSeen': { N: String(firstSeen) }, ':until': { N: String(untilSeconds) } },
          },
          signal,
        ),
      );
    },

    async claimEscalation(id, claim, signal) {
      const t = seconds(now());
      // A triage action of any kind cancels, also one written before the opening; a job that saw
      // fewer follow-ups than the item lets the job with the later content go first.
      const newer = claim.updates === undefined ? '' : ' AND (attribute_not_exists(followUps) OR followUps <= :updates)';
      // An opening that waited (in a group, on the retry queue), only once it was shown with a way to triage.
      const shown = claim.unposted ? ' AND openingShown = :firstSeen' : '';
      try {
        await dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: 'SET escalationUntil = :until, escalationToken = :token',
            ConditionExpression:
              'firstSeen = :firstSeen AND attribute_not_exists(triage) AND attribute_not_exists(escalatedAt)' +
              ` AND (attribute_not_exists(escalationUntil) OR escalationUntil < :now)${newer}${shown}`,
            ExpressionAttributeValues: {
              ':firstSeen': { N: String(claim.firstSeen) },
              ':until': { N: String(t + claim.holdSeconds) },
              ':token': { S: claim.token },
              ':now': { N: String(t) },
              ...(claim.updates === undefined ? {} : { ':updates': { N: String(claim.updates) } }),
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
          signal,
        );
        return { kind: 'claimed' };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        return escalationFound(error.fields['Item'] as AnomalyItem | undefined, claim, t);
      }
    },

    async escalated(id, firstSeen, signal) {
      await ignoringConditionFailure(
        dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: 'SET escalatedAt = :now REMOVE escalationUntil, escalationToken',
            // Never on a later opening of the anomaly, nor an item that is gone (the update would create one).
            ConditionExpression: 'firstSeen = :firstSeen',
            ExpressionAttributeValues: { ':firstSeen': { N: String(firstSeen) }, ':now': { N: String(seconds(now())) } },
          },
          signal,
        ),
      );
    },

    async waitingEscalation(id, firstSeen, signal) {
      const read = await dynamo(
        'GetItem',
        { TableName, Key: { id: { S: id } }, ProjectionExpression: 'firstSeen, escalationUpdates, expiresAt' },
        signal,
      );
      const item = read['Item'] as AnomalyItem | undefined;
      if (item?.firstSeen?.N === undefined || Number(item.firstSeen.N) !== firstSeen) return { updates: 0 };
      const expiresAt = Number(item.expiresAt?.N);
      return { updates: Number(item.escalationUpdates?.N) || 0, ...(Number.isFinite(expiresAt) ? { expiresAt } : {}) };
    },

    async escalationWaiting(id, firstSeen, updates, signal) {
      await ignoringConditionFailure(
        dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: 'SET escalationUpdates = :updates',
            // Only ever more, and only on the opening the job waits on (the update would create a gone item).
            ConditionExpression: 'firstSeen = :firstSeen AND (attribute_not_exists(escalationUpdates) OR escalationUpdates < :updates)',
            ExpressionAttributeValues: { ':firstSeen': { N: String(firstSeen) }, ':updates': { N: String(updates) } },
          },
          signal,
        ),
      );
    },

    escalationUnscheduled: (id, firstSeen, signal) => markOpening(id, firstSeen, 'escalationUnscheduled', signal),

    async escalationScheduled(id, firstSeen, signal) {
      await ignoringConditionFailure(
        dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: 'REMOVE escalationUnscheduled',
            ConditionExpression: 'escalationUnscheduled = :firstSeen',
            ExpressionAttributeValues: { ':firstSeen': { N: String(firstSeen) } },
          },
          signal,
        ),
      );
    },

    openingShown: (id, firstSeen, signal) => markOpening(id, firstSeen, 'openingShown', signal),

    async releaseEscalation(id, token, signal) {
      await ignoringConditionFailure(
        dynamo(
          'UpdateItem',
          {
            TableName,
            Key: { id: { S: id } },
            UpdateExpression: 'REMOVE escalationUntil, escalationToken',
            ConditionExpression: 'escalationToken = :token',
            ExpressionAttributeValues: { ':token': { S: token } },
          },
          signal,
        ),
      );
    },
  };
}
