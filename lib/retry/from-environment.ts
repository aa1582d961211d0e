import { createRelayConfigCache } from '../config/relay-config-cache.js';
import { describeIssues } from '../config/schema.js';
import { createLogger, parseLogLevel, type Logger } from '../log/logger.js';
import { lazySqs, sqsDeadLetterQueue, sqsMessageOps } from '../queue/sqs.js';
import { createSlackPoster } from '../slack/post.js';
import { retryEnvironmentSchema } from './environment.js';
import { createPacer } from './pacer.js';
import { processBatch, type QueueRecord } from './process-batch.js';

export type RetryWorker = (
  records: readonly QueueRecord[],
  remainingTimeMs: () => number,
) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }>;

/** Wires the retry worker with real clients; the pacer and configuration cache live as long as the container. */
export function createRetryWorkerFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  logger?: Logger,
): RetryWorker {
  const parsed = retryEnvironmentSchema.safeParse(env);
  const log = logger ?? createLogger({ level: parseLogLevel(env['LOG_LEVEL']) });
  if (!parsed.success) {
    const problems = describeIssues(parsed.error).map((p) => p.path);
    // Every record goes back to the queue; the redrive policy parks them if this is never fixed.
    return async (records) => {
      log.error('delivery-retry is misconfigured; leaving messages on the queue', { variables: problems });
      return { batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) };
    };
  }
  const settings = parsed.data;
  const sqs = lazySqs();
  const base = {
    config: createRelayConfigCache({ secretId: settings.RELAY_CONFIG_SECRET_ID, ttlSeconds: settings.RELAY_CONFIG_TTL_SECONDS, logger: log }),
    post: createSlackPoster({ timeoutMs: settings.SLACK_TIMEOUT_MS }),
    postTimeoutMs: settings.SLACK_TIMEOUT_MS,
    messages: sqsMessageOps(sqs, settings.DELIVERY_QUEUE_URL),
    ...(settings.DEAD_LETTER_QUEUE_URL ? { deadLetters: sqsDeadLetterQueue(sqs, settings.DEAD_LETTER_QUEUE_URL) } : {}),
    pacer: createPacer(settings.DELIVERY_MIN_INTERVAL_MS),
    maxAttempts: settings.DELIVERY_MAX_ATTEMPTS,
    logger: log,
  };
  return (records, remainingTimeMs) => processBatch(records, { ...base, remainingTimeMs });
}
