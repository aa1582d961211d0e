import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import type { RunningBundle } from './bundle.js';

export function sqsClient(url: string): SQSClient {
  return new SQSClient({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
}

export interface TestQueues {
  deliveryQueueUrl: string;
  deadLetterQueueUrl: string;
  deliveryQueueArn: string;
}

/** The retry queue and its dead-letter queue, wired with a redrive policy as the template does. */
export async function createQueues(client: SQSClient, visibilityTimeoutSeconds = 120): Promise<TestQueues> {
  const id = randomUUID().slice(0, 8);
  const dlq = await client.send(new CreateQueueCommand({ QueueName: `relay-dlq-${id}` }));
  const dlqArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl!, AttributeNames: ['QueueArn'] }))).Attributes![
    'QueueArn'
  ]!;
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: `relay-deliveries-${id}`,
      Attributes: {
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 30 }),
      },
    }),
  );
  const arn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl!, AttributeNames: ['QueueArn'] }))).Attributes![
    'QueueArn'
  ]!;
  return { deliveryQueueUrl: queue.QueueUrl!, deadLetterQueueUrl: dlq.QueueUrl!, deliveryQueueArn: arn };
}

export async function receiveAll(client: SQSClient, queueUrl: string): Promise<Message[]> {
  const out: Message[] = [];
  for (let i = 0; i < 20; i++) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        VisibilityTimeout: 30,
      }),
    );
    if (Messages.length === 0) break;
    out.push(...Messages);
  }
  return out;
}

/** Messages as Lambda's SQS event source mapping hands them to a function. */
export function toEvent(messages: Message[], arn: string): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body!,
      attributes: {
        ApproximateReceiveCount: m.Attributes?.['ApproximateReceiveCount'] ?? '1',
        SentTimestamp: m.Attributes?.['SentTimestamp'] ?? '0',
        SenderId: 'relay',
        ApproximateFirstReceiveTimestamp: m.Attributes?.['ApproximateFirstReceiveTimestamp'] ?? '0',
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    })),
  };
}

export interface Poller {
  stop(): Promise<void>;
  invocations: number;
  /** Message ids the function reported as batch item failures (they stay on the queue). */
  failures: string[];
  /** Message ids the poller deleted because the function finished them. */
  deleted: string[];
  /** Every message body the function was given, as SQS held it. */
  bodies: string[];
}

/**
 * Plays Lambda's SQS event source mapping: long-polls the queue, invokes the function with
 * a batch, and deletes the records not reported in `batchItemFailures`.
 */
export function startPoller(client: SQSClient, queues: TestQueues, fn: RunningBundle, functionTimeoutMs = 60_000): Poller {
  let running = true;
  const state: Poller = { invocations: 0, failures: [], deleted: [], bodies: [], stop: async () => {} };
  const loop = (async () => {
    while (running) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deliveryQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      if (!running || Messages.length === 0) continue;
      state.invocations++;
      state.bodies.push(...Messages.map((m) => m.Body ?? ''));
      const result = await fn.invoke<{ batchItemFailures: Array<{ itemIdentifier: string }> }>(toEvent(Messages, queues.deliveryQueueArn), {
        timeoutMs: functionTimeoutMs,
      });
      const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
      state.failures.push(...failed);
      const done = Messages.filter((m) => !failed.has(m.MessageId!));
      if (done.length > 0) {
        await client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queues.deliveryQueueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
        state.deleted.push(...done.map((m) => m.MessageId!));
      }
    }
  })();
  state.stop = async () => {
    running = false;
    await loop;
  };
  return state;
}

/** Polls `condition` (which may ask a server) until it holds or `timeoutMs` is up; says which. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return condition();
}
