import { type AwsJsonCall, AwsServiceError } from '../../lib/aws/json-client.js';
import {
  type AttributeValue,
  checkAllUsed,
  conditionOf,
  ExpressionError,
  type ExpressionInput,
  type Item,
  project,
  updateOf,
} from './expressions.js';

/** A global secondary index as template.yaml declares it. */
export interface IndexDeclaration {
  name: string;
  hashKey: string;
  rangeKey?: string;
  /** Non-key attributes it projects (INCLUDE), or every attribute (ALL). */
  projection: readonly string[] | 'ALL';
}

export interface MemoryTableOptions {
  tableName: string;
  hashKey: string;
  indexes?: readonly IndexDeclaration[];
  /** The TTL attribute (epoch seconds). */
  ttlAttribute?: string;
  /** The simulated clock, in milliseconds. */
  now: () => number;
  /**
   * How long after a write its index entries change (DynamoDB's indexes are eventually
   * consistent); drawn per write. Zero by default.
   */
  indexLagMs?: () => number;
  /**
   * How long after its TTL an expired item is really deleted (DynamoDB deletes within days, and
   * until then reads return it); drawn per item. Zero by default.
   */
  ttlDelayMs?: () => number;
  /** Called before every operation: throw to fail it (a throttle, a 5xx), or return a promise that never settles to hang it. */
  fault?: (operation: string, input: Record<string, unknown>) => Promise<never> | undefined;
}

/** DynamoDB's largest item. */
const MAX_ITEM_BYTES = 400 * 1024;

function attributeBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-/, '').replace(/^0+/, '').length / 2) + 1;
  if (value.B !== undefined) return Buffer.from(value.B, 'base64').length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((n, s) => n + Buffer.byteLength(s), 0);
  if (value.NS) return value.NS.reduce((n, s) => n + s.length, 0);
  if (value.L) return 3 + value.L.reduce((n, v) => n + 1 + attributeBytes(v), 0);
  if (value.M) return 3 + Object.entries(value.M).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + attributeBytes(v), 0);
  return 0;
}

/** An item's size as DynamoDB counts it: names and values. */
export const itemBytes = (item: Item): number =>
  Object.entries(item).reduce((n, [name, value]) => n + Buffer.byteLength(name) + attributeBytes(value), 0);

const validation = (message: string) => new AwsServiceError('ValidationException', 400, { message });
const conditionFailed = (old: Item | undefined, wantOld: boolean) =>
  new AwsServiceError('ConditionalCheckFailedException', 400, wantOld && old ? { Item: structuredClone(old) } : {});

interface PendingIndexWrite {
  at: number;
  seq: number;
  id: string;
  entry: Item | undefined;
}

/** A table of DynamoDB in memory, answering our adapters' calls as DynamoDB's JSON protocol does. */
export interface MemoryTable {
  call: AwsJsonCall;
  /** Every item as stored (expired ones DynamoDB has not deleted yet included). */
  items(): ReadonlyMap<string, Item>;
  /** Operations by name, for the simulation's counts. */
  readonly calls: Map<string, number>;
}

export function memoryTable(options: MemoryTableOptions): MemoryTable {
  const { tableName, hashKey, now } = options;
  const items = new Map<string, Item>();
  const deleteAt = new Map<string, number>();
  const indexes = new Map((options.indexes ?? []).map((index) => [index.name, { declaration: index, entries: new Map<string, Item>() }]));
  const pending: PendingIndexWrite[] = [];
  const lastIndexWrite = new Map<string, number>();
  const calls = new Map<string, number>();
  let seq = 0;

  const indexEntry = (index: IndexDeclaration, item: Item | undefined): Item | undefined => {
    if (!item || item[index.hashKey] === undefined || (index.rangeKey && item[index.rangeKey] === undefined)) return undefined;
    if (index.projection === 'ALL') return structuredClone(item);
    const keep = new Set([hashKey, index.hashKey, ...(index.rangeKey ? [index.rangeKey] : []), ...index.projection]);
    return Object.fromEntries(
      Object.entries(item)
        .filter(([name]) => keep.has(name))
        .map(([n, v]) => [n, structuredClone(v)]),
    );
  };

  const settleIndexes = () => {
    const t = now();
    pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
    while (pending.length > 0 && (pending[0] as PendingIndexWrite).at <= t) {
      const write = pending.shift() as PendingIndexWrite;
      for (const { declaration, entries } of indexes.values()) {
        const entry = indexEntry(declaration, write.entry);
        if (entry) entries.set(write.id, entry);
        else entries.delete(write.id);
      }
    }
  };

  const store = (id: string, item: Item | undefined) => {
    if (item) items.set(id, item);
    else items.delete(id);
    deleteAt.delete(id);
    const ttl = options.ttlAttribute && item?.[options.ttlAttribute]?.N;
    if (ttl !== undefined && ttl !== '') deleteAt.set(id, Number(ttl) * 1000 + (options.ttlDelayMs?.() ?? 0));
    if (indexes.size === 0) return;
    // An item's index entries change in the order it was written, however the lags fall.
    const at = Math.max(now() + (options.indexLagMs?.() ?? 0), lastIndexWrite.get(id) ?? 0);
    lastIndexWrite.set(id, at);
    pending.push({ at, seq: seq++, id, entry: item ? structuredClone(item) : undefined });
  };

  /** What DynamoDB's TTL has deleted by now. */
  const sweep = () => {
    const t = now();
    for (const [id, at] of [...deleteAt]) if (at <= t) store(id, undefined);
    settleIndexes();
  };

  const keyOf = (input: Record<string, unknown>, field: 'Key' | 'Item'): string => {
    const source = input[field] as Item | undefined;
    const key = source?.[hashKey]?.S;
    if (key === undefined) throw validation('The provided key element does not match the schema');
    if (field === 'Key' && Object.keys(source ?? {}).length !== 1) throw validation('The provided key element does not match the schema');
    return key;
  };

  const expressionInput = (input: Record<string, unknown>): ExpressionInput => ({
    names: input['ExpressionAttributeNames'] as Record<string, string> | undefined,
    values: input['ExpressionAttributeValues'] as Record<string, AttributeValue> | undefined,
  });

  const checkCondition = (input: Record<string, unknown>, old: Item | undefined, extra: Array<{ used: never }> = []) => {
    const expression = input['ConditionExpression'] as string | undefined;
    const names = expressionInput(input);
    const parsed = expression ? conditionOf(expression, names) : undefined;
    checkAllUsed(names, [...(parsed ? [parsed.used] : []), ...extra.map((e) => e.used)]);
    if (parsed && !parsed.holds(old)) throw conditionFailed(old, input['ReturnValuesOnConditionCheckFailure'] === 'ALL_OLD');
  };

  const fitting = (item: Item) => {
    if (itemBytes(item) > MAX_ITEM_BYTES) throw validation('Item size has exceeded the maximum allowed size');
    return item;
  };

  const operations: Record<string, (input: Record<string, unknown>) => Record<string, unknown>> = {
    GetItem(input) {
      const item = items.get(keyOf(input, 'Key'));
      if (!item) return {};
      const projected = project(item, input['ProjectionExpression'] as string | undefined, expressionInput(input).names);
      return { Item: structuredClone(projected?.item ?? item) };
    },
    PutItem(input) {
      const id = keyOf(input, 'Item');
      const old = items.get(id);
      checkCondition(input, old);
      const item = fitting(structuredClone(input['Item'] as Item));
      store(id, item);
      return input['ReturnValues'] === 'ALL_OLD' && old ? { Attributes: old } : {};
    },
    UpdateItem(input) {
      const id = keyOf(input, 'Key');
      const old = items.get(id);
      const expression = input['UpdateExpression'] as string | undefined;
      const update = expression ? updateOf(expression, expressionInput(input)) : undefined;
      checkCondition(input, old, update ? [update as never] : []);
      const base: Item = old ?? { [hashKey]: { S: id } };
      const next = update ? update.apply(base) : structuredClone(base);
      if (next[hashKey]?.S !== id) throw validation('Cannot update attribute id. This attribute is part of the key');
      store(id, fitting(next));
      const returns = input['ReturnValues'];
      const only = (item: Item) =>
        Object.fromEntries(
          Object.entries(item)
            .filter(([name]) => update?.touched.has(name))
            .map(([n, v]) => [n, structuredClone(v)]),
        );
      if (returns === 'ALL_NEW') return { Attributes: structuredClone(next) };
      if (returns === 'UPDATED_NEW') return { Attributes: only(next) };
      if (returns === 'ALL_OLD' && old) return { Attributes: old };
      if (returns === 'UPDATED_OLD' && old) return { Attributes: only(old) };
      return {};
    },
    DeleteItem(input) {
      const id = keyOf(input, 'Key');
      const old = items.get(id);
      checkCondition(input, old);
      if (old) store(id, undefined);
      return input['ReturnValues'] === 'ALL_OLD' && old ? { Attributes: old } : {};
    },
    Query(input) {
      const indexName = input['IndexName'] as string | undefined;
      const index = indexName ? indexes.get(indexName) : undefined;
      if (indexName && !index) throw validation('The table does not have the specified index');
      if (!index) throw validation('Query on the table itself is not played here: name an index');
      const { declaration, entries } = index;
      const names = expressionInput(input);
      const key = conditionOf(String(input['KeyConditionExpression'] ?? ''), names, 'KeyConditionExpression');
      const filter = input['FilterExpression'] ? conditionOf(String(input['FilterExpression']), names, 'FilterExpression') : undefined;
      checkAllUsed(names, [key.used, ...(filter ? [filter.used] : [])]);
      const range = declaration.rangeKey;
      const matched = [...entries.values()]
        .filter((entry) => key.holds(entry))
        .sort((a, b) => {
          const x = range ? Number(a[range]?.N ?? a[range]?.S) : 0;
          const y = range ? Number(b[range]?.N ?? b[range]?.S) : 0;
          return x - y || String(a[hashKey]?.S).localeCompare(String(b[hashKey]?.S));
        });
      if (input['ScanIndexForward'] === false) matched.reverse();
      return page(matched, input, filter?.holds, (entry) => ({
        [hashKey]: entry[hashKey] as AttributeValue,
        [declaration.hashKey]: entry[declaration.hashKey] as AttributeValue,
        ...(range ? { [range]: entry[range] as AttributeValue } : {}),
      }));
    },
    Scan(input) {
      const names = expressionInput(input);
      const filter = input['FilterExpression'] ? conditionOf(String(input['FilterExpression']), names, 'FilterExpression') : undefined;
      const projected = input['ProjectionExpression'] ? project({}, String(input['ProjectionExpression']), names.names) : undefined;
      checkAllUsed(names, [...(filter ? [filter.used] : []), ...(projected ? [projected.used] : [])]);
      const all = [...items.values()].sort((a, b) => String(a[hashKey]?.S).localeCompare(String(b[hashKey]?.S)));
      const answer = page(all, input, filter?.holds, (item) => ({ [hashKey]: item[hashKey] as AttributeValue }));
      if (input['ProjectionExpression']) {
        answer['Items'] = (answer['Items'] as Item[]).map(
          (item) => project(item, String(input['ProjectionExpression']), names.names)?.item ?? item,
        );
      }
      return answer;
    },
  };

  /** One page after ExclusiveStartKey, at most Limit items read; the filter applies after the limit, as DynamoDB's. */
  function page(
    ordered: Item[],
    input: Record<string, unknown>,
    filter: ((item: Item) => boolean) | undefined,
    keyOfItem: (item: Item) => Item,
  ): Record<string, unknown> {
    const start = input['ExclusiveStartKey'] as Item | undefined;
    let from = 0;
    if (start) {
      const startId = start[hashKey]?.S;
      const at = ordered.findIndex((item) => item[hashKey]?.S === startId);
      from = at + 1;
    }
    const limit = typeof input['Limit'] === 'number' ? input['Limit'] : Number.POSITIVE_INFINITY;
    const read = ordered.slice(from, from + limit);
    const more = from + read.length < ordered.length;
    const kept = filter ? read.filter(filter) : read;
    const answer: Record<string, unknown> =
      input['Select'] === 'COUNT'
        ? { Count: kept.length, ScannedCount: read.length }
        : { Items: structuredClone(kept), Count: kept.length, ScannedCount: read.length };
    if (more && read.length > 0) answer['LastEvaluatedKey'] = keyOfItem(read[read.length - 1] as Item);
    return answer;
  }

  const call: AwsJsonCall = async (operation, input, signal) => {
    calls.set(operation, (calls.get(operation) ?? 0) + 1);
    const hang = options.fault?.(operation, input);
    if (hang) {
      return new Promise((_, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    if (input['TableName'] !== tableName) throw new AwsServiceError('ResourceNotFoundException', 400, {});
    const run = operations[operation];
    if (!run) throw new AwsServiceError('UnknownOperationException', 400, {});
    sweep();
    try {
      return run(input);
    } catch (error) {
      if (error instanceof ExpressionError) throw validation(error.message);
      throw error;
    }
  };

  return {
    call,
    items: () => {
      sweep();
      return items;
    },
    calls,
  };
}
