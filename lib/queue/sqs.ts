import type { LazySqs } from '../aws/clients.js';
import { clampSeconds } from '../delivery/decide.js';
import type { DeadLetters, RetryQueue } from '../delivery/queues.js';

/** What the retry worker does to a message it received. */
export interface QueueMessageOps {
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
}

/** One message with string attributes (absent ones left out) and an optional delay. */
async function sendMessage(
  sqs: LazySqs,
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

export function sqsRetryQueue(sqs: LazySqs, queueUrl: string): RetryQueue {
  return {
    enqueue: (job, delaySeconds) => sendMessage(sqs, queueUrl, JSON.stringify(job), { destination: job.destination }, delaySeconds),
  };
}

export function sqsDeadLetters(sqs: LazySqs, queueUrl: string): DeadLetters {
  return { park: (body, reason, destination) => sendMessage(sqs, queueUrl, body, { reason, destination }) };
}

export function sqsMessageOps(sqs: LazySqs, queueUrl: string): QueueMessageOps {
  return {
    async changeVisibility(receiptHandle, seconds) {
      const { client, sdk } = await sqs();
      await client.send(
        new sdk.ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: clampSeconds(seconds) }),
      );
    },
  };
}
