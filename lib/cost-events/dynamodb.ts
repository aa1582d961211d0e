import { type AwsJsonCall, isConditionFailure } from '../aws/json-client.js';
import { CLAIM_SECONDS, type CostEventRecords } from './events.js';

/** An event's record lives as long as an anomaly's decisions matter (a triage action keeps its item 30 days). */
const KEPT_SECONDS = 30 * 86_400;

type Item = Record<string, { S?: string; N?: string }> | undefined;

/** `uuid` is one of DynamoDB's reserved words: expressions name it through a placeholder. */
const UUID = { '#uuid': 'uuid' };

/** The `costevent#` items of the dedup table: the event's uuid, or a writer's claim on writing it. */
export function dynamoCostEventRecords(dynamo: AwsJsonCall, tableName: string): CostEventRecords {
  const update = (id: string, input: Record<string, unknown>, signal: AbortSignal) =>
    dynamo('UpdateItem', { TableName: tableName, Key: { id: { S: id } }, ...input }, signal);
  return {
    async claim(id, token, nowSeconds, signal) {
      try {
        const answer = await update(
          id,
          {
            UpdateExpression: 'SET claimToken = :token, claimUntil = :until, expiresAt = :kept',
            ConditionExpression: 'attribute_not_exists(#uuid) AND (attribute_not_exists(claimUntil) OR claimUntil < :now)',
            ExpressionAttributeNames: UUID,
            ExpressionAttributeValues: {
              ':token': { S: token },
              ':until': { N: String(nowSeconds + CLAIM_SECONDS) },
              ':kept': { N: String(nowSeconds + KEPT_SECONDS) },
              ':now': { N: String(nowSeconds) },
            },
            ReturnValues: 'ALL_OLD',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
          signal,
        );
        return { kind: 'claimed', lapsed: Boolean((answer['Attributes'] as Item)?.['claimToken']?.S) };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        return (error.fields['Item'] as Item)?.['uuid']?.S ? { kind: 'written' } : { kind: 'busy' };
      }
    },
    async release(id, token, signal) {
      await update(
        id,
        {
          UpdateExpression: 'REMOVE claimToken, claimUntil',
          ConditionExpression: 'claimToken = :token',
          ExpressionAttributeValues: { ':token': { S: token } },
        },
        signal,
      ).catch((error: unknown) => {
        if (!isConditionFailure(error)) throw error;
      });
    },
    async record(id, token, uuid, signal) {
      await update(
        id,
        {
          UpdateExpression: 'SET #uuid = :uuid REMOVE claimToken, claimUntil',
          ConditionExpression: 'claimToken = :token',
          ExpressionAttributeNames: UUID,
          ExpressionAttributeValues: { ':uuid': { S: uuid }, ':token': { S: token } },
        },
        signal,
      );
    },
    async read(id, signal) {
      const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: id } }, ConsistentRead: true }, signal);
      const item = output['Item'] as Item;
      if (!item) return undefined;
      const uuid = item['uuid']?.S;
      const claimUntil = Number(item['claimUntil']?.N);
      return { ...(uuid ? { uuid } : {}), ...(Number.isFinite(claimUntil) ? { claimUntil } : {}) };
    },
    async forget(id, uuid, signal) {
      await update(
        id,
        {
          UpdateExpression: 'REMOVE #uuid',
          ConditionExpression: '#uuid = :uuid',
          ExpressionAttributeNames: UUID,
          ExpressionAttributeValues: { ':uuid': { S: uuid } },
        },
        signal,
      ).catch((error: unknown) => {
        if (!isConditionFailure(error)) throw error;
      });
    },
  };
}
