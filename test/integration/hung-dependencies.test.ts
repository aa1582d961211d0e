import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJob } from '../../lib/delivery/job.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { startBundle } from '../helpers/bundle.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, sqsClient, type TestQueues } from '../helpers/sqs.js';

// The relay's Lambda timeout in template.yaml; the contract answer must come well before it.
const RELAY_TIMEOUT_MS = 15_000;
const moto = motoUrl();
const alert = JSON.stringify({ metadata: { object_type: 'anomaly_alert' }, payload: { title: 'Hung dependency test' } });
const delivery = () => httpApiEvent({ headers: { 'content-type': 'application/json' }, body: alert });

describe.skipIf(!moto)('dependencies that accept the connection and never answer', () => {
  let proxy: AwsProxy;
  let slack: FakeSlack;
  let queues: TestQueues;
  let secretId: string;

  beforeAll(async () => {
    proxy = await startAwsProxy(moto!);
    slack = await startFakeSlack();
    slack.setBehaviour('/down', { kind: 'error', status: 500, body: 'rollup_error' });
    queues = await createQueues(sqsClient(moto!));
    secretId = await createSecret(secretsClient(moto!), {
      auth: { method: 'none' },
      destinations: { default: { url: slack.url('/down') } },
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await slack?.close();
  });

  // The SQS client sends to the queue URL's own host, so queues are reached through the proxy too.
  const viaProxy = (queueUrl: string) => queueUrl.replace(moto!, proxy.url);

  // The bundle runner ends an invocation at its timeout as Lambda does, so an answer at all is
  // an answer in time; the named deadline in the log shows it was the relay's own step deadline,
  // far shorter than the function's, that ended the wait.

  it('a hung Secrets Manager on a cold start: 503 well before the Lambda timeout', { timeout: 30_000 }, async () => {
    proxy.fault('secretsmanager.GetSecretValue', 'hang');
    const relay = await startBundle('webhook-relay', { ...awsEnvironment(proxy.url), RELAY_CONFIG_SECRET_ID: secretId });
    try {
      const value = await relay.invoke<{ statusCode: number; body: string }>(delivery(), { timeoutMs: RELAY_TIMEOUT_MS });
      expect(value.statusCode).toBe(503);
      expect(JSON.parse(value.body)).toMatchObject({ error: 'configuration_unavailable' });
      expect(relay.logRecords()).toContainEqual(
        expect.objectContaining({ message: 'delivery', status: 503, reason: 'configuration_deadline' }),
      );
    } finally {
      proxy.fault('secretsmanager.GetSecretValue', undefined);
      await relay.stop();
    }
  });

  it('a hung SQS SendMessage while the chat service fails: 503 in time, so the sender retries', { timeout: 30_000 }, async () => {
    proxy.fault('AmazonSQS.SendMessage', 'hang');
    const relay = await startBundle('webhook-relay', {
      ...awsEnvironment(proxy.url),
      RELAY_CONFIG_SECRET_ID: secretId,
      DELIVERY_QUEUE_URL: viaProxy(queues.deliveryQueueUrl),
      DEAD_LETTER_QUEUE_URL: viaProxy(queues.deadLetterQueueUrl),
    });
    try {
      const value = await relay.invoke<{ statusCode: number }>(delivery(), { timeoutMs: RELAY_TIMEOUT_MS });
      expect(value.statusCode).toBe(503);
      expect(relay.logRecords()).toContainEqual(
        expect.objectContaining({ message: 'could not queue an alert for a later attempt', error: 'retry_queue_deadline' }),
      );
      expect(proxy.count('AmazonSQS.SendMessage')).toBeGreaterThanOrEqual(1);
    } finally {
      proxy.fault('AmazonSQS.SendMessage', undefined);
      await relay.stop();
    }
  });

  it('delivery-retry: a hung ChangeMessageVisibility does not time the batch out; delivered records stay delivered', {
    timeout: 40_000,
  }, async () => {
    slack.setBehaviour('/ok', { kind: 'ok' });
    const mixed = await createSecret(secretsClient(moto!), {
      auth: { method: 'none' },
      destinations: { default: { url: slack.url('/down') }, ok: { url: slack.url('/ok') } },
    });
    proxy.fault('AmazonSQS.ChangeMessageVisibility', 'hang');
    const retry = await startBundle('delivery-retry', {
      ...awsEnvironment(proxy.url),
      RELAY_CONFIG_SECRET_ID: mixed,
      DELIVERY_QUEUE_URL: viaProxy(queues.deliveryQueueUrl),
      DELIVERY_MIN_INTERVAL_MS: '0',
    });
    const message = { metadata: { object_type: 'anomaly_alert' }, payload: { title: 'Retry me' } };
    const record = (id: string, destination: string) => ({
      messageId: id,
      receiptHandle: `handle-${id}`,
      body: JSON.stringify(newJob(`d-${id}`, destination, message as never, 'http_500', Date.now())),
      attributes: { ApproximateReceiveCount: '1' },
    });
    try {
      const value = await retry.invoke<{ batchItemFailures: Array<{ itemIdentifier: string }> }>(
        { Records: [record('fails', 'default'), record('works', 'ok')] },
        { timeoutMs: 30_000 },
      );
      expect(value.batchItemFailures).toEqual([{ itemIdentifier: 'fails' }]);
      expect(retry.logRecords()).toContainEqual(
        expect.objectContaining({ deliveryId: 'd-fails', message: 'could not set when to retry; the queue visibility timeout applies' }),
      );
      expect(slack.accepted('/ok')).toHaveLength(1);
      expect(proxy.count('AmazonSQS.ChangeMessageVisibility')).toBe(1);
    } finally {
      proxy.fault('AmazonSQS.ChangeMessageVisibility', undefined);
      await retry.stop();
    }
  });
});
