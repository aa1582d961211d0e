import { DYNAMODB, SECRETS_MANAGER } from '../../lib/aws/json-client.js';
import type { AwsPorts } from '../../lib/aws/ports.js';
import { declaredTableShape } from '../../sim/aws/declared-table.js';
import { type MemoryTableOptions, memoryTable } from '../../sim/aws/dynamodb.js';
import { memorySecrets } from '../../sim/aws/secrets.js';
import { memorySqs } from '../../sim/aws/sqs.js';

/**
 * The simulation's AWS in memory, for in-process tests of code that talks to AWS through its
 * ports: the dedup table as template.yaml declares it (conditions, update expressions, TTL and
 * DynamoDB's refusals, reserved words included), Secrets Manager and SQS. `aws` is what a
 * function's wiring (`lib/*\/from-environment.ts`) takes as its `aws` option.
 */
export function memoryAws(options: { now: () => number; tableName?: string; ttlDelayMs?: number }) {
  const { now } = options;
  const tableName = options.tableName ?? 'dedup';
  const faults: { table?: MemoryTableOptions['fault'] } = {};
  const table = memoryTable({
    tableName,
    now,
    ...declaredTableShape(),
    // DynamoDB deletes an expired item within days: until then, reads return it.
    ttlDelayMs: () => options.ttlDelayMs ?? 0,
    fault: (operation, input) => faults.table?.(operation, input),
  });
  const secrets = memorySecrets({ now });
  const sqs = memorySqs({ now, random: () => 0.5 });
  const aws: AwsPorts = {
    json: (service) => {
      if (service === DYNAMODB) return table.call;
      if (service === SECRETS_MANAGER) return secrets.call;
      throw new Error(`no in-memory ${service.signingName} here`);
    },
    sqs: sqs.lazySqs,
  };
  /** `faults.table`: called before each table operation; throw to fail it (see MemoryTableOptions.fault). */
  return { tableName, table, secrets, sqs, aws, faults };
}
