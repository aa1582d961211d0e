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

export function sqsRetryQueue(sqs: ReturnType<typeof lazySqs>, queueUrl: string): RetryQueue {
  return {
    async enqueue(job, delaySeconds) {
      const { client, sdk } = await sqs();
      await client.send(
        new sdk.SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(job),
          DelaySeconds: clampSeconds(delaySeconds),
          MessageAttributes: { destination: { DataType: 'String', StringValue: job.destination } },
        }),
      );
    },
  };
}

export function sqsDeadLetterQueue(sqs: ReturnType<typeof lazySqs>, queueUrl: string): DeadLetterQueue {
  return {
    async park(body, reason, destination) {
      const { client, sdk } = await sqs();
      await client.send(
        new sdk.SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          MessageAttributes: {
            reason: { DataType: 'String', StringValue: reason },
            ...(destination ? { destination: { DataType: 'String', StringValue: destination } } : {}),
          },
        }),
      );
    },
  };
}

export function sqsMessageOps(sqs: ReturnType<typeof lazySqs>, queueUrl: string): QueueMessageOps {
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
