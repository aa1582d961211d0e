import { lazySqs } from '../aws/clients.js';
import { configSourceFor, createRelayConfigStore } from '../config/store.js';
import { createDelivery } from '../delivery/deliver.js';
import { createChatServices } from '../delivery/services.js';
import { createLogger, parseLogLevel, type Logger } from '../log/logger.js';
import { sqsDeadLetters, sqsMessageOps } from '../queue/sqs.js';
import { readEnvironment } from '../shared/environment.js';
import { sleep } from '../shared/sleep.js';
import { retryEnvironmentSchema } from './environment.js';
import { createPacer } from './pacer.js';
import { processBatch, type BatchResult, type QueueRecord } from './process-batch.js';

export type RetryWorker = (records: readonly QueueRecord[], remainingTimeMs: () => number) => Promise<BatchResult>;

/** Wires the retry worker with real clients; the pacer and configuration cache live as long as the container. */
export function createRetryWorkerFromEnvironment(env: Record<string, string | undefined> = process.env, logger?: Logger): RetryWorker {
  const reading = readEnvironment(retryEnvironmentSchema, env);
  const log = logger ?? createLogger({ level: reading.ok ? reading.settings.LOG_LEVEL : parseLogLevel(env['LOG_LEVEL']) });
  if (!reading.ok) {
    const variables = reading.problems.map((p) => p.path);
    // Every record goes back to the queue; the redrive policy parks them if this is never fixed.
    return async (records) => {
      log.error('delivery-retry is misconfigured; leaving messages on the queue', { variables });
      return { batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) };
    };
  }
  const settings = reading.settings;
  const sqs = lazySqs();
  const deadLetters = settings.DEAD_LETTER_QUEUE_URL ? { deadLetters: sqsDeadLetters(sqs, settings.DEAD_LETTER_QUEUE_URL) } : {};
  const base = {
    config: createRelayConfigStore({
      source: configSourceFor(settings.RELAY_CONFIG_SECRET_ID, log, false),
      ttlSeconds: settings.RELAY_CONFIG_TTL_SECONDS,
      logger: log,
    }),
    delivery: createDelivery({ services: createChatServices(), postTimeoutMs: settings.SLACK_TIMEOUT_MS, ...deadLetters, logger: log, now: Date.now, sleep }),
    messages: sqsMessageOps(sqs, settings.DELIVERY_QUEUE_URL),
    pacer: createPacer(),
    maxAttempts: settings.DELIVERY_MAX_ATTEMPTS,
    postTimeoutMs: settings.SLACK_TIMEOUT_MS,
    ...(settings.DELIVERY_MIN_INTERVAL_MS !== undefined ? { minIntervalMs: settings.DELIVERY_MIN_INTERVAL_MS } : {}),
    logger: log,
  };
  return (records, remainingTimeMs) => processBatch(records, { ...base, remainingTimeMs });
}
