import { type AwsJsonCall, isConditionFailure } from '../aws/json-client.js';
import {
  type AnomalyTable,
  anomalyStartOf,
  type Claim,
  type ClaimOutcome,
  type DeliveryLedger,
  type QueuedClaimOutcome,
} from './ledger.js';

export interface DynamoLedgerOptions {
  tableName: string;
  /** How long a delivery is remembered. */
  windowSeconds: number;
  now?: () => number;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

type StoredItem = { state?: { S?: string }; claimToken?: { S?: string }; claimUntil?: { N?: string } };

/** What a claim that failed its condition found in the table. */
function foundOutcome(item: StoredItem | undefined, token: string, t: number): QueuedClaimOutcome {
  const state = item?.state?.S;
  if (state === 'delivered' || state === 'queued' || state === 'parked') return { kind: 'done', state };
  // The client retries a write whose answer was lost; the retry then meets the write itself.
  if (item?.claimToken?.S === token) return { kind: 'claimed' };
  const until = Number(item?.claimUntil?.N);
  return { kind: 'in_progress', retryAfterSeconds: Number.isFinite(until) ? Math.max(1, until - t) : 1 };
}

/**
 * The ledger in a DynamoDB table (partition key `id`, TTL attribute `expiresAt`). Each item
 * holds only the hashed id, a state, an attempt's random token and two times (or, parked, the
 * time of the parked job's first attempt and its parking's random token). A claim is one
 * conditional write that returns the existing item when it fails, so the first post waits
 * for one round trip at most.
 */
export function dynamoLedger(dynamo: AwsJsonCall, options: DynamoLedgerOptions): DeliveryLedger {
  const now = options.now ?? Date.now;
  const { tableName: TableName } = options;
  let loaded: Promise<AnomalyTable> | undefined;
  const anomalies = () => {
    loaded ??= import('./lazy-anomaly.js').then(({ dynamoAnomalyTable }) =>
      dynamoAnomalyTable(dynamo, options, now, isConditionFailure, anomalyStartOf),
    );
    return loaded;
  };

  /** One conditional write of the claim, free as `condition` says; what it found when it was not. */
  const claimWhere = async (
    id: string,
    claim: Claim,
    condition: string,
    values: Record<string, { S: string }>,
    signal: AbortSignal | undefined,
  ): Promise<QueuedClaimOutcome> => {
    const t = seconds(now());
    try {
      await dynamo(
        'PutItem',
        {
          TableName,
          Item: {
            id: { S: id },
            state: { S: 'claimed' },
            claimToken: { S: claim.token },
            claimUntil: { N: String(t + claim.holdSeconds) },
            expiresAt: { N: String(t + options.windowSeconds) },
          },
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':now': { N: String(t) }, ':claimed': { S: 'claimed' }, ...values },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
        signal,
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return foundOutcome(error.fields['Item'] as StoredItem | undefined, claim.token, t);
    }
  };

  return {
    // Free when new, past its window (TTL deletes lazily), parked (the platform sent it again), or
    // a claim that outlived its attempt.
    async claim(id, claim, signal): Promise<ClaimOutcome> {
      const found = await claimWhere(
        id,
        claim,
        'attribute_not_exists(id) OR expiresAt < :now OR #state = :parked OR (#state = :claimed AND claimUntil < :now)',
        { ':parked': { S: 'parked' } },
        signal,
      );
      // A parked record meets this condition, so a failed claim never finds one; were it so, the record changed meanwhile.
      return found.kind === 'done' && found.state === 'parked' ? { kind: 'in_progress', retryAfterSeconds: 1 } : found;
    },

    // As a first attempt's claim, and free too while the alert waits on the queue; parked, free
    // but for a stale copy of the parked job (staleCopy in ledger.ts).
    claimQueued: (id, claim, signal) => {
      const { firstAttemptAt, parkToken } = claim.job;
      const parked = parkToken === undefined ? 'parkedFirst <> :first' : '(parkedFirst <> :first OR parkToken = :park)';
      return claimWhere(
        id,
        claim,
        `attribute_not_exists(id) OR expiresAt < :now OR #state = :queued OR (#state = :parked AND ${parked}) OR (#state = :claimed AND claimUntil < :now)`,
        {
          ':queued': { S: 'queued' },
          ':parked': { S: 'parked' },
          ':first': { S: firstAttemptAt },
          ...(parkToken === undefined ? {} : { ':park': { S: parkToken } }),
        },
        signal,
      );
    },

    async record(id, state, signal) {
      const t = seconds(now());
      await dynamo(
        'PutItem',
        { TableName, Item: { id: { S: id }, state: { S: state }, expiresAt: { N: String(t + options.windowSeconds) } } },
        signal,
      );
    },

    async park(id, parking, signal) {
      const t = seconds(now());
      await dynamo(
        'PutItem',
        {
          TableName,
          Item: {
            id: { S: id },
            state: { S: 'parked' },
            parkedFirst: { S: parking.firstAttemptAt },
            parkToken: { S: parking.parkToken },
            expiresAt: { N: String(t + options.windowSeconds) },
          },
        },
        signal,
      );
    },

    // The anomaly's operations load on first use: a relay without the table never parses them.
    startAnomaly: async (id, signal, summary) => (await anomalies()).startAnomaly(id, signal, summary),
    anomalyOpened: async (id, opening, signal) => (await anomalies()).anomalyOpened(id, opening, signal),
    anomalyFollowedUp: async (id, signal) => (await anomalies()).anomalyFollowedUp(id, signal),
    forgetAnomaly: async (id, signal) => (await anomalies()).forgetAnomaly(id, signal),
    readAnomaly: async (id, signal) => (await anomalies()).readAnomaly(id, signal),
    escalations: anomalies,

    async release(id, token, signal) {
      const condition = token
        ? { ConditionExpression: 'claimToken = :token', ExpressionAttributeValues: { ':token': { S: token } } }
        : {
            ConditionExpression: '#state <> :delivered',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':delivered': { S: 'delivered' } },
          };
      try {
        await dynamo('DeleteItem', { TableName, Key: { id: { S: id } }, ...condition }, signal);
      } catch (error) {
        // Delivered meanwhile (by a concurrent retry), or claimed by a later attempt: that item must stay.
        if (!isConditionFailure(error)) throw error;
      }
    },
  };
}
