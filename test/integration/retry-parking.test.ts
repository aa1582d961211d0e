import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { emfRecords } from '../helpers/memory-metrics.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, type Poller, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();

interface Parked {
  body: string;
  reason: string | undefined;
  destination: string | undefined;
}

describe.skipIf(!moto)('delivery-retry parks what it cannot deliver, with the reason', () => {
  let slack: FakeSlack;
  let retry: RunningBundle;
  let queues: TestQueues;
  let poller: Poller;
  const sqs = moto ? sqsClient(moto) : undefined;
  const parked: Parked[] = [];

  beforeAll(async () => {
    slack = await startFakeSlack();
    slack.setBehaviour('/down', { kind: 'error', status: 500, body: 'rollup_error' });
    queues = await createQueues(sqs!);
    const secretId = await createSecret(secretsClient(moto!), {
      auth: { method: 'none' },
      destinations: { default: { url: slack.url('/default') }, down: { url: slack.url('/down') } },
    });
    retry = await startBundle('delivery-retry', {
      ...awsEnvironment(moto!),
      RELAY_CONFIG_SECRET_ID: secretId,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      DELIVERY_MAX_ATTEMPTS: '3',
    });
    poller = startPoller(sqs!, queues, retry);
  });
  afterAll(async () => {
    await poller?.stop();
    await retry?.stop();
    await slack?.close();
  });

  const enqueue = (body: unknown) =>
    sqs!.send(
      new SendMessageCommand({ QueueUrl: queues.deliveryQueueUrl, MessageBody: typeof body === 'string' ? body : JSON.stringify(body) }),
    );
  const job = (destination: string, attempt: number, title: string) => ({
    version: 2,
    deliveryId: `delivery-${title}`,
    destination,
    attempt,
    firstAttemptAt: new Date().toISOString(),
    message: { metadata: { object_type: 'anomaly_alert' }, payload: { title } },
  });
  const waitForParked = async (match: (p: Parked) => boolean, timeoutMs = 20_000): Promise<Parked> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = parked.find(match);
      if (found) return found;
      const { Messages = [] } = await sqs!.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 600,
        }),
      );
      for (const m of Messages) {
        parked.push({
          body: m.Body!,
          reason: m.MessageAttributes?.['reason']?.StringValue,
          destination: m.MessageAttributes?.['destination']?.StringValue,
        });
      }
    }
    throw new Error('nothing matching was parked in time');
  };

  it('a message that is not a delivery job', async () => {
    await enqueue('{"hello": "world"}');
    const found = await waitForParked((p) => p.body.includes('hello'));
    expect(found.reason).toBe('malformed_message');
  });

  it('a destination the configuration no longer has', async () => {
    await enqueue(job('removed-team', 1, 'Orphan alert'));
    const found = await waitForParked((p) => p.body.includes('Orphan alert'));
    expect(found).toMatchObject({ reason: 'destination_not_configured', destination: 'removed-team' });
    expect(slack.requests.filter((r) => JSON.stringify(r.body).includes('Orphan alert'))).toHaveLength(0);
  });

  it('a destination that keeps failing, once the attempts run out', { timeout: 40_000 }, async () => {
    // Two attempts made already (relay + one retry); DELIVERY_MAX_ATTEMPTS is 3.
    await enqueue(job('down', 2, 'Exhausted alert'));
    const found = await waitForParked((p) => p.body.includes('Exhausted alert'), 30_000);
    expect(found).toMatchObject({ reason: 'attempts_exhausted:rollup_error', destination: 'down' });
    expect(JSON.parse(found.body)).toMatchObject({ attempt: 3, lastReason: 'rollup_error' });
    expect(slack.requests.filter((r) => r.path === '/down')).toHaveLength(1);
    // The parked-alerts alarm watches this metric; it names the reason, never the destination or its URL.
    // The line arrives once the park has returned, which may be just after the queue shows the message.
    const metrics = await vi.waitFor(() => {
      const lines = emfRecords(retry.output().split('\n'));
      expect(lines).toContainEqual(
        expect.objectContaining({ service: 'delivery-retry', reason: 'attempts_exhausted:rollup_error', AlertsParked: 1 }),
      );
      return lines;
    });
    expect(metrics).toContainEqual(
      expect.objectContaining({ service: 'delivery-retry', outcome: 'parked', destinationType: 'slack', Deliveries: 1 }),
    );
    expect(JSON.stringify(metrics)).not.toMatch(/down|Exhausted|127\.0\.0\.1/);
  });

  it('delivers a good job once and never posts it again', async () => {
    const { MessageId } = await enqueue(job('default', 1, 'Plain alert'));
    // Posted, and the record finished: the poller deleted it after the function returned.
    expect(await waitFor(() => poller.deleted.includes(MessageId!), 15_000)).toBe(true);
    expect(slack.accepted('/default').filter((r) => JSON.stringify(r.body).includes('Plain alert'))).toHaveLength(1);
    // Nothing can bring it back: it was never reported as a failure and the queue holds nothing.
    expect(poller.failures).not.toContain(MessageId);
    const attributes = await sqs!.send(
      new GetQueueAttributesCommand({
        QueueUrl: queues.deliveryQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(attributes.Attributes).toEqual({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '0',
    });
    expect(retry.output()).not.toContain('/default');
  });
});
