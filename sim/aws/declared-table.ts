import { declaredDedupTable } from '../../test/helpers/relay-stack.js';
import type { IndexDeclaration } from './dynamodb.js';

/** The dedup table's keys and indexes as template.yaml declares them, for the in-memory table. */
export function declaredTableShape(): { hashKey: string; indexes: IndexDeclaration[]; ttlAttribute: string } {
  const declared = declaredDedupTable();
  const hashKey = declared.KeySchema?.find((key) => key.KeyType === 'HASH')?.AttributeName;
  if (!hashKey) throw new Error('template.yaml declares no hash key for the dedup table');
  const indexes = (declared.GlobalSecondaryIndexes ?? []).map((index): IndexDeclaration => {
    const hash = index.KeySchema?.find((key) => key.KeyType === 'HASH')?.AttributeName;
    const range = index.KeySchema?.find((key) => key.KeyType === 'RANGE')?.AttributeName;
    if (!index.IndexName || !hash) throw new Error('template.yaml declares an index without a name or hash key');
    return {
      name: index.IndexName,
      hashKey: hash,
      ...(range ? { rangeKey: range } : {}),
      projection: index.Projection?.ProjectionType === 'ALL' ? 'ALL' : [...(index.Projection?.NonKeyAttributes ?? [])],
    };
  });
  // The stack's TimeToLiveSpecification: the one attribute every item's lifetime is written to.
  return { hashKey, indexes, ttlAttribute: 'expiresAt' };
}
