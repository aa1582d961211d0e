import type { LazySqs } from '../aws/clients.js';
import { clampSeconds } from '../delivery/decide.js';
import type { DeadLetters, RetryQueue } from '../delivery/queues.js';

/** What the retry worker does to a message it received, and to the queue it came from. */
export interface QueueMessageOps {
  changeVisibility(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void>;
  /** A new message on the same queue, visible after `delaySeconds`: a job that waits without spending a receive. */
  send(body: string, delaySeconds: number, attributes: Record<string, string | undefined>, signal?: AbortSignal): Promise<void>;
}

/** One message with string attributes (absent ones left out) and an optional delay. */
export async function sendMessage(
  sqs: LazySqs,
  queueUrl: string,
  body: string,
  attributes: Record<string, string | undefined>,
  delaySeconds: number | undefined,
  signal: AbortSignal | undefined,
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
    signal ? { abortSignal: signal } : {},
  );
}

export function sqsRetryQueue(sqs: LazySqs, queueUrl: string): RetryQueue {
  return {
    enqueue: (job, delaySeconds, signal) =>
      sendMessage(sqs, queueUrl, JSON.stringify(job), { destination: job.destination }, delaySeconds, signal),
  };
}

export function sqsDeadLetters(sqs: LazySqs, queueUrl: string): DeadLetters {
  return { park: (body, reason, destination, signal) => sendMessage(sqs, queueUrl, body, { reason, destination }, undefined, signal) };
}

export function sqsMessageOps(sqs: LazySqs, queueUrl: string): QueueMessageOps {
  return {
    send: (body, delaySeconds, attributes, signal) => sendMessage(sqs, queueUrl, body, attributes, delaySeconds, signal),
    async changeVisibility(receiptHandle, seconds, signal) {
      const { client, sdk } = await sqs();
      await client.send(
        new sdk.ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: clampSeconds(seconds),
        }),
        signal ? { abortSignal: signal } : {},
      );
    },
  };
}
