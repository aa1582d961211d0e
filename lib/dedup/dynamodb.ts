import type { AwsJsonCall } from '../aws/json-client.js';
import { CLAIM_SECONDS, type ClaimOutcome, type DeliveryLedger } from './ledger.js';

export interface DynamoLedgerOptions {
  tableName: string;
  /** How long a delivery is remembered. */
  windowSeconds: number;
  now?: () => number;
}

const seconds = (ms: number) => Math.floor(ms / 1000);
const isConditionFailure = (error: unknown) => (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';

/**
 * The ledger in a DynamoDB table (partition key `id`, TTL attribute `expiresAt`). Each item
 * holds only the hashed id, a state and two times. A claim is one conditional write that
 * returns the existing item when it fails, so the first post waits for one round trip at most.
 */
export function dynamoLedger(dynamo: AwsJsonCall, options: DynamoLedgerOptions): DeliveryLedger {
  const now = options.now ?? Date.now;
  const { tableName: TableName } = options;

  return {
    async claim(id, signal) {
      const t = seconds(now());
      try {
        await dynamo(
          'PutItem',
          {
            TableName,
            Item: {
              id: { S: id },
              state: { S: 'claimed' },
              claimUntil: { N: String(t + CLAIM_SECONDS) },
              expiresAt: { N: String(t + options.windowSeconds) },
            },
            // Free when new, past its window (TTL deletes lazily), or a claim that outlived its attempt.
            ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now OR (#state = :claimed AND claimUntil < :now)',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':now': { N: String(t) }, ':claimed': { S: 'claimed' } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
          signal,
        );
        return { kind: 'claimed' };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const state = (error as { fields?: { Item?: { state?: { S?: string } } } }).fields?.Item?.state?.S;
        const outcome: ClaimOutcome = state === 'delivered' || state === 'queued' ? { kind: 'done', state } : { kind: 'in_progress' };
        return outcome;
      }
    },

    async record(id, state, signal) {
      const t = seconds(now());
      await dynamo('PutItem', { TableName, Item: { id: { S: id }, state: { S: state }, expiresAt: { N: String(t + options.windowSeconds) } } }, signal);
    },

    async release(id, signal) {
      try {
        await dynamo(
          'DeleteItem',
          {
            TableName,
            Key: { id: { S: id } },
            ConditionExpression: '#state <> :delivered',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':delivered': { S: 'delivered' } },
          },
          signal,
        );
      } catch (error) {
        // Delivered meanwhile (by a concurrent retry): that record must stay.
        if (!isConditionFailure(error)) throw error;
      }
    },
  };
}
