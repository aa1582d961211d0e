// Imported with import() by the triage function and delivery-retry with the first cost event a
// configuration asks for (platform.costEvents), and bundled on its own: neither parses the
// platform client or the event's records before.
import { platformCredentialsIn } from '../api-key/credentials.js';
import type { AwsJsonCall } from '../aws/json-client.js';
import { createCostApiClient } from '../cost-api/client.js';
import { platformSession } from '../cost-api/session.js';
import type { Logger } from '../log/logger.js';
import { dynamoOwnerDirectory } from '../owners/dynamodb.js';
import { dynamoCostEventRecords } from './dynamodb.js';
import { type CostEventWriter, costEventWriter } from './events.js';

export interface CostEventWiring {
  dynamo: AwsJsonCall;
  tableName: string;
  secrets: AwsJsonCall;
  credentialsSecretId: string;
  baseUrl: string;
  /** Per platform call: what the caller can give it (a click's answer, a retry's batch). */
  timeoutMs: number;
  now: () => number;
  logger: Logger;
}

export function costEventWriterFrom(wiring: CostEventWiring): CostEventWriter {
  const client = createCostApiClient({ baseUrl: wiring.baseUrl, timeoutMs: wiring.timeoutMs, maxAttempts: 1, logger: wiring.logger });
  const credentials = platformCredentialsIn(wiring.secrets, wiring.credentialsSecretId);
  return costEventWriter({
    records: dynamoCostEventRecords(wiring.dynamo, wiring.tableName),
    owners: dynamoOwnerDirectory(wiring.dynamo, wiring.tableName, wiring.now),
    platform: { client, session: platformSession({ client, credentials, now: wiring.now }) },
    now: wiring.now,
    logger: wiring.logger,
  });
}
