import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CreateTableCommand, type CreateTableCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, secretsClient } from './aws.js';
import { type RunningBundle, startBundle } from './bundle.js';
import { loadTemplate, resourcesOfType } from './cloudformation.js';
import { type FakeSlack, startFakeSlack } from './slack-server.js';
import { createQueues, type Poller, sqsClient, startPoller, type TestQueues } from './sqs.js';

export interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface RelayStack {
  slack: FakeSlack;
  /** The environment both functions got. */
  env: Record<string, string>;
  queues: TestQueues;
  sqs: ReturnType<typeof sqsClient>;
  relay: RunningBundle;
  retry: RunningBundle;
  poller?: Poller;
  paths: Record<string, string>;
  /** Posts an anomaly alert with this title and account id; routes pick the destination by account. */
  send(title: string, accountId?: string): Promise<Answer>;
  startRetrying(): void;
  stop(): Promise<void>;
}

const anomaly = JSON.parse(readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8')) as {
  payload: Record<string, string>;
};

/**
 * The whole no-alert-lost path on loopback: the relay and delivery-retry bundles, the retry
 * and dead-letter queues in moto_server, a fake Slack, and a poller in the role of Lambda's
 * SQS event source mapping. Destinations: `default`, plus one per extra path, routed by the
 * account id that equals the destination's name.
 */
export async function startRelayStack(
  moto: string,
  extraDestinations: string[] = [],
  extraEnv: Record<string, string> = {},
  /** More options per destination, such as `group`. */
  destinationOptions: Record<string, Record<string, unknown>> = {},
): Promise<RelayStack> {
  const slack = await startFakeSlack();
  const paths: Record<string, string> = { default: '/services/T0/B0/default' };
  for (const [i, name] of extraDestinations.entries()) paths[name] = `/services/T0/B${i + 1}/${name}`;
  const secretId = await createSecret(secretsClient(moto), {
    auth: { method: 'none' },
    destinations: Object.fromEntries(
      Object.entries(paths).map(([name, path]) => [name, { url: slack.url(path), ...destinationOptions[name] }]),
    ),
    routes: extraDestinations.map((name) => ({ when: { accountId: [name] }, to: [name] })),
  });
  const sqs = sqsClient(moto);
  const queues = await createQueues(sqs);
  const env = {
    ...awsEnvironment(moto),
    RELAY_CONFIG_SECRET_ID: secretId,
    DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
    DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
    SLACK_TIMEOUT_MS: '2000',
    ...extraEnv,
  };
  const relay = await startBundle('webhook-relay', env);
  const retry = await startBundle('delivery-retry', env);

  const stack: RelayStack = {
    slack,
    env,
    queues,
    sqs,
    relay,
    retry,
    paths,
    send: (title, accountId = '123456789012') =>
      relay.invoke<Answer>(
        httpApiEvent({
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...anomaly, payload: { ...anomaly.payload, title, account_id: accountId } }),
        }),
      ),
    startRetrying: () => {
      stack.poller ??= startPoller(sqs, queues, retry);
    },
    stop: async () => {
      await stack.poller?.stop();
      await Promise.all([relay.stop(), retry.stop()]);
      await slack.close();
    },
  };
  return stack;
}

/** The header text of a message Slack received: where the tests put a unique title. */
export function titleOf(body: unknown): string {
  const blocks = (body as { blocks?: Array<{ type: string; text?: { text: string } }> }).blocks ?? [];
  return blocks.find((b) => b.type === 'header')?.text?.text ?? '';
}

/**
 * The dedup table's schema as template.yaml declares it: keys, attribute definitions and indexes,
 * so that every test runs against the table the stack creates, and a change there reaches them all.
 */
export function declaredDedupTable(): Pick<
  CreateTableCommandInput,
  'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes' | 'BillingMode'
> {
  const [[, table] = []] = resourcesOfType(loadTemplate(new URL('../../template.yaml', import.meta.url).pathname), 'AWS::DynamoDB::Table');
  const properties = (table?.Properties ?? {}) as Record<string, unknown>;
  return {
    AttributeDefinitions: properties['AttributeDefinitions'] as CreateTableCommandInput['AttributeDefinitions'],
    KeySchema: properties['KeySchema'] as CreateTableCommandInput['KeySchema'],
    BillingMode: properties['BillingMode'] as CreateTableCommandInput['BillingMode'],
    ...(properties['GlobalSecondaryIndexes']
      ? { GlobalSecondaryIndexes: properties['GlobalSecondaryIndexes'] as CreateTableCommandInput['GlobalSecondaryIndexes'] }
      : {}),
  };
}

/** A dedup table in moto, created from template.yaml's declaration; its name goes in DEDUP_TABLE_NAME. */
export async function createDedupTable(moto: string): Promise<{ name: string; dynamo: DynamoDBClient }> {
  const dynamo = new DynamoDBClient({
    endpoint: moto,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const name = `dedup-${randomUUID().slice(0, 8)}`;
  await dynamo.send(new CreateTableCommand({ TableName: name, ...declaredDedupTable() }));
  return { name, dynamo };
}
