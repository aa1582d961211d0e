import * as sdk from '@aws-sdk/client-sqs';
import type { LazySqs } from '../../lib/aws/clients.js';

/** A message as SQS keeps it. */
export interface StoredMessage {
  messageId: string;
  body: string;
  attributes: Record<string, string>;
  sentAt: number;
  visibleAt: number;
  receives: number;
  /** The receipt handle of its latest receive: an older one no longer changes it. */
  receipt?: string;
}

export interface QueueSettings {
  visibilityTimeoutSeconds: number;
  /** Receives after which a message moves to the dead-letter queue (RedrivePolicy). */
  maxReceiveCount?: number;
  deadLetterUrl?: string;
}

/** One record of a batch as Lambda's event source mapping hands it over. */
export interface ReceivedRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount: string; SentTimestamp: string };
  messageAttributes: Record<string, { dataType: 'String'; stringValue: string }>;
}

export interface MemorySqsOptions {
  now: () => number;
  /** Seeded: which receive is duplicated. */
  random: () => number;
  /** How often a receive leaves the message visible to another receiver too (SQS delivers at least once). */
  duplicateRate?: number;
  /** Called before every SendMessage/ChangeMessageVisibility: throw to fail it, or return a promise that never settles. */
  fault?: (operation: string) => Promise<never> | undefined;
  /** Told of every message sent or made visible at another time, so that a poller can wake. */
  onChange?: () => void;
}

/** SQS's largest message. */
const MAX_MESSAGE_BYTES = 256 * 1024;
const MAX_DELAY_SECONDS = 900;

class SqsError extends Error {
  constructor(
    override readonly name: string,
    message: string,
  ) {
    super(message);
  }
}

export interface MemorySqs {
  /** The port lib/queue/sqs.ts is given: a client whose `send` plays SQS, and the SDK's own commands. */
  lazySqs: LazySqs;
  create(url: string, settings: QueueSettings): void;
  /** Up to `max` visible messages, received (their visibility starts), as Lambda's poller takes them. */
  receive(url: string, max: number): ReceivedRecord[];
  /** Lambda deletes what a batch did not report as failed. */
  delete(url: string, receiptHandle: string): void;
  messages(url: string): readonly StoredMessage[];
  /** When the next message of the queue becomes visible; undefined when it holds none. */
  nextVisibleAt(url: string): number | undefined;
  readonly sent: Map<string, number>;
  /** Every message sent, in order. */
  readonly log: Array<{ at: number; url: string; body: string; attributes: Record<string, string> }>;
}

export function memorySqs(options: MemorySqsOptions): MemorySqs {
  const { now, random } = options;
  const queues = new Map<string, { settings: QueueSettings; messages: StoredMessage[] }>();
  const sent = new Map<string, number>();
  const log: MemorySqs['log'] = [];
  let counter = 0;

  const queue = (url: string) => {
    const found = queues.get(url);
    if (!found) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    return found;
  };

  const put = (url: string, body: string, attributes: Record<string, string>, delaySeconds: number) => {
    const stored: StoredMessage = {
      messageId: `m-${++counter}`,
      body,
      attributes,
      sentAt: now(),
      visibleAt: now() + delaySeconds * 1000,
      receives: 0,
    };
    queue(url).messages.push(stored);
    log.push({ at: now(), url, body, attributes });
    sent.set(url, (sent.get(url) ?? 0) + 1);
    options.onChange?.();
  };

  const send = async (command: unknown, sendOptions?: { abortSignal?: AbortSignal }): Promise<unknown> => {
    const hang = options.fault?.(command?.constructor?.name ?? 'unknown');
    if (hang) {
      const signal = sendOptions?.abortSignal;
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }
    if (command instanceof sdk.SendMessageCommand) {
      const input = command.input;
      const body = input.MessageBody ?? '';
      if (Buffer.byteLength(body) > MAX_MESSAGE_BYTES) {
        throw new SqsError(
          'InvalidParameterValue',
          'One or more parameters are invalid. Reason: Message must be shorter than 262144 bytes.',
        );
      }
      const delay = input.DelaySeconds ?? 0;
      if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
        throw new SqsError('InvalidParameterValue', 'Value for parameter DelaySeconds is invalid.');
      }
      const attributes = Object.fromEntries(
        Object.entries(input.MessageAttributes ?? {}).map(([name, value]) => [name, String(value.StringValue ?? '')]),
      );
      put(String(input.QueueUrl), body, attributes, delay);
      return { MessageId: `m-${counter}` };
    }
    if (command instanceof sdk.ChangeMessageVisibilityCommand) {
      const input = command.input;
      const seconds = input.VisibilityTimeout ?? 0;
      if (!Number.isInteger(seconds) || seconds < 0 || seconds > 43_200) {
        throw new SqsError('InvalidParameterValue', 'Value for parameter VisibilityTimeout is invalid.');
      }
      const message = queue(String(input.QueueUrl)).messages.find((m) => m.receipt === input.ReceiptHandle);
      if (!message) throw new SqsError('ReceiptHandleIsInvalid', 'The receipt handle has expired.');
      message.visibleAt = now() + seconds * 1000;
      options.onChange?.();
      return {};
    }
    throw new SqsError('UnsupportedOperation', `the simulation's SQS does not play ${command?.constructor?.name}`);
  };

  const client = { send } as unknown as Awaited<ReturnType<LazySqs>>['client'];

  return {
    lazySqs: async () => ({ client, sdk }),
    sent,
    log,
    create(url, settings) {
      queues.set(url, { settings, messages: [] });
    },
    receive(url, max) {
      const { settings, messages } = queue(url);
      const t = now();
      const out: ReceivedRecord[] = [];
      for (const message of [...messages]) {
        if (out.length >= max) break;
        if (message.visibleAt > t) continue;
        if (settings.maxReceiveCount !== undefined && settings.deadLetterUrl && message.receives >= settings.maxReceiveCount) {
          messages.splice(messages.indexOf(message), 1);
          queue(settings.deadLetterUrl).messages.push({ ...message, visibleAt: t, receipt: undefined });
          continue;
        }
        message.receives += 1;
        message.receipt = `${message.messageId}#${message.receives}`;
        // At least once: now and then a message stays visible, and a second receiver gets it too.
        const duplicated = random() < (options.duplicateRate ?? 0);
        message.visibleAt = duplicated ? t : t + settings.visibilityTimeoutSeconds * 1000;
        out.push({
          messageId: message.messageId,
          receiptHandle: message.receipt,
          body: message.body,
          attributes: { ApproximateReceiveCount: String(message.receives), SentTimestamp: String(message.sentAt) },
          messageAttributes: Object.fromEntries(
            Object.entries(message.attributes).map(([name, value]) => [name, { dataType: 'String' as const, stringValue: value }]),
          ),
        });
      }
      return out;
    },
    delete(url, receiptHandle) {
      const { messages } = queue(url);
      // SQS deletes a message by any of its receipt handles that is still current, and ignores the rest.
      const at = messages.findIndex((m) => m.receipt === receiptHandle);
      if (at >= 0) messages.splice(at, 1);
    },
    messages: (url) => queue(url).messages,
    nextVisibleAt(url) {
      const { messages } = queue(url);
      return messages.length === 0 ? undefined : Math.min(...messages.map((m) => m.visibleAt));
    },
  };
}
