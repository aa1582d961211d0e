import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryJob } from './job.js';

/** SQS delays and visibility timeouts are whole seconds up to 15 minutes. */
export const MAX_SQS_DELAY_SECONDS = 900;
export const clampSeconds = (seconds: number): number =>
  Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

export interface RetryQueue {
  enqueue(job: DeliveryJob, delaySeconds: number): Promise<void>;
}

export interface DeadLetterQueue {
  /** Parks a message for a human, with the reason and destination as message attributes. */
  park(body: string, reason: string, destination?: string): Promise<void>;
}

export interface QueueMessageOps {
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
}

type SqsModule = typeof import('@aws-sdk/client-sqs');

/**
 * The SQS client is loaded on first use: most deliveries never touch a queue, and the
 * client's module evaluation would otherwise add to every cold start.
 */
export function lazySqs(): () => Promise<{ client: SQSClient; sdk: SqsModule }> {
  let loaded: Promise<{ client: SQSClient; sdk: SqsModule }> | undefined;
  return () =>
    (loaded ??= import('@aws-sdk/client-sqs').then((sdk) => ({
      sdk,
      client: new sdk.SQSClient({ maxAttempts: 3, requestHandler: { connectionTimeout: 2_000, requestTimeout: 4_000 } }),
    })));
}

type Sqs = ReturnType<typeof lazySqs>;

/** One message with string attributes (absent ones left out) and an optional delay. */
async function sendMessage(
  sqs: Sqs,
  queueUrl: string,
  body: string,
  attributes: Record<string, string | undefined>,
  delaySeconds?: number,
): Promise<void> {
  const { client, sdk } = await sqs();
  const messageAttributes = Object.fromEntries(
    Object.entries(attributes)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
  );
  await client.send(
    new sdk.SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageAttributes: messageAttributes,
      ...(delaySeconds === undefined ? {} : { DelaySeconds: clampSeconds(delaySeconds) }),
    }),
  );
}

export function sqsRetryQueue(sqs: Sqs, queueUrl: string): RetryQueue {
  return {
    enqueue: (job, delaySeconds) =>
      sendMessage(sqs, queueUrl, JSON.stringify(job), { destination: job.destination }, delaySeconds),
  };
}

export function sqsDeadLetterQueue(sqs: Sqs, queueUrl: string): DeadLetterQueue {
  return {
    park: (body, reason, destination) => sendMessage(sqs, queueUrl, body, { reason, destination }),
  };
}

export function sqsMessageOps(sqs: Sqs, queueUrl: string): QueueMessageOps {
  return {
    async changeVisibility(receiptHandle, seconds) {
      const { client, sdk } = await sqs();
      await client.send(
        new sdk.ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: clampSeconds(seconds),
        }),
      );
    },
  };
}
