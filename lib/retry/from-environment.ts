import { lazySqs } from '../aws/clients.js';
import { DYNAMODB, SECRETS_MANAGER } from '../aws/json-client.js';
import { DYNAMODB_LIMITS, SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import { configSourceFor, createRelayConfigStore } from '../config/store.js';
import { COST_EVENT_CALL_MS, type CostEventWriter } from '../cost-events/events.js';
import type { CostEventWiring } from '../cost-events/lazy-cost-events.js';
import { dynamoLedger } from '../dedup/dynamodb.js';
import type { DeliveryLedger } from '../dedup/ledger.js';
import { deliverOnce, retryLedger } from '../dedup/once.js';
import { createDelivery, type Delivery, postTimeoutFrom } from '../delivery/deliver.js';
import { type EscalationQueue, sqsEscalationQueue } from '../escalation/queue.js';
import { escalationWatcher } from '../escalation/watch.js';
import { dynamoGroupStore } from '../group/dynamodb.js';
import { coldStartTracker, createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import type { Metrics } from '../metrics/metrics.js';
import { type ChatServices, createChatServices, destinationType } from '../notify/kinds.js';
import { sqsDeadLetters, sqsMessageOps, sqsRetryQueue } from '../queue/sqs.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { readEnvironment } from '../shared/environment.js';
import { ReasonedError } from '../shared/errors.js';
import { sleep } from '../shared/sleep.js';
import { triageControls } from '../triage-link/controls.js';
import { retryEnvironmentSchema } from './environment.js';
import { createPacer, pacedServices } from './pacer.js';
import { type BatchResult, processBatch, type QueueRecord, type RetryDependencies } from './process-batch.js';

export type RetryWorker = (records: readonly QueueRecord[], budget: InvocationBudget, requestId?: string) => Promise<BatchResult>;

/** The worker cannot run at all: failing the invocation is what Lambda's Errors metric and its alarm see. */
export class RetryWorkerMisconfiguredError extends ReasonedError {}

export interface RetryWiringOptions {
  logger?: Logger;
  /** Where metrics go; EMF lines on stdout by default. */
  metrics?: Metrics;
  /** The chat services; the real ones posting over node:http(s) by default. */
  services?: ChatServices;
  /** Where AWS calls go; AWS itself by default (the simulation gives stand-ins). */
  aws?: AwsPorts;
}

/** Wires the retry worker with real clients; the pacer and configuration cache live as long as the container. */
export function createRetryWorkerFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: RetryWiringOptions = {},
): RetryWorker {
  const reading = readEnvironment(retryEnvironmentSchema, env);
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  if (!reading.ok) {
    const variables = reading.problems.map((p) => p.path);
    // A failed invocation hands the whole batch back to the queue untouched, and Lambda counts the
    // error, so the delivery-retry errors alarm fires; the redrive policy parks the records if
    // this is never fixed.
    return async () => {
      log.error('delivery-retry is misconfigured; leaving messages on the queue', { variables });
      throw new RetryWorkerMisconfiguredError(`delivery-retry's environment is invalid: ${variables.join(', ')}.`, 'environment_invalid');
    };
  }
  const settings = reading.settings;
  const postTimeoutMs = postTimeoutFrom(settings);
  const metrics = options.metrics ?? metricsFromEnvironment('delivery-retry', env);
  const coldStart = coldStartTracker();
  const sqs = options.aws?.sqs ?? lazySqs();
  const deadLetters = settings.DEAD_LETTER_QUEUE_URL ? { deadLetters: sqsDeadLetters(sqs, settings.DEAD_LETTER_QUEUE_URL) } : {};
  // One pacer for everything this container posts: deliveries, each part of a digest, escalations.
  const pacer = createPacer();
  const delivery = createDelivery({
    services: pacedServices(
      options.services ?? createChatServices(undefined, settings, options.aws),
      pacer,
      settings.DELIVERY_MIN_INTERVAL_MS,
    ),
    postTimeoutMs,
    // An escalation's first attempt at the destination it goes to waits here when that cannot take it yet.
    retryQueue: sqsRetryQueue(sqs, settings.DELIVERY_QUEUE_URL),
    ...deadLetters,
    logger: log,
    metrics,
    now: Date.now,
    sleep,
    triage: triageControls({
      keySecretId: settings.TRIAGE_KEY_SECRET_ID,
      secrets: settings.TRIAGE_KEY_SECRET_ID ? jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, options.aws) : undefined,
      now: Date.now,
    }),
  });
  const ledger = settings.DEDUP_TABLE_NAME
    ? dynamoLedger(jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws), {
        tableName: settings.DEDUP_TABLE_NAME,
        windowSeconds: settings.DEDUP_WINDOW_SECONDS,
      })
    : undefined;
  const base = {
    config: createRelayConfigStore({
      source: configSourceFor(settings.RELAY_CONFIG_SECRET_ID, log, false, options.aws),
      ttlSeconds: settings.RELAY_CONFIG_TTL_SECONDS,
      logger: log,
    }),
    delivery,
    messages: sqsMessageOps(sqs, settings.DELIVERY_QUEUE_URL),
    pacer,
    maxAttempts: settings.DELIVERY_MAX_ATTEMPTS,
    postTimeoutMs,
    metrics,
    ...(settings.DEDUP_TABLE_NAME && ledger
      ? {
          groups: dynamoGroupStore(jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws), { tableName: settings.DEDUP_TABLE_NAME }),
          ledger: retryLedger({ ledger, logger: log, metrics }),
          escalations: escalationPorts(ledger, delivery, sqsEscalationQueue(sqs, settings.DELIVERY_QUEUE_URL), {
            logger: log,
            metrics,
            windowSeconds: settings.DEDUP_WINDOW_SECONDS,
          }),
        }
      : {}),
  };
  const loginId = settings.COST_API_CREDENTIALS_SECRET_ID;
  const costEvents =
    loginId && settings.DEDUP_TABLE_NAME
      ? lazyCostEventWriter({
          dynamo: jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws),
          tableName: settings.DEDUP_TABLE_NAME,
          secrets: jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, options.aws),
          credentialsSecretId: loginId,
          baseUrl: settings.COST_API_BASE_URL,
          timeoutMs: COST_EVENT_CALL_MS / 2,
          now: Date.now,
          logger: log,
        })
      : undefined;
  return (records, budget, requestId) =>
    processBatch(records, {
      ...base,
      ...(costEvents ? { costEvents } : {}),
      logger: log.child({ requestId, coldStart: coldStart() }),
      budget,
    });
}

/** The cost-event writer, loaded with the first queued cost event: other batches never parse it. */
function lazyCostEventWriter(wiring: CostEventWiring): CostEventWriter {
  let writer: Promise<CostEventWriter> | undefined;
  return {
    async apply(change, subject, signal) {
      writer ??= import('../cost-events/lazy-cost-events.js').then(({ costEventWriterFrom }) => costEventWriterFrom(wiring));
      writer.catch(() => {
        writer = undefined;
      });
      return (await writer).apply(change, subject, signal);
    },
  };
}

/**
 * What a due escalation needs: the anomaly's table, the queue it waits on, and a first attempt at
 * the destination it goes to as the relay makes one, which sets that destination's own
 * escalation waiting when it has one (escalations may chain; the configuration refuses loops).
 * The same watcher hears of follow-ups delivered from the queue or a group.
 */
function escalationPorts(
  ledger: DeliveryLedger,
  delivery: Delivery,
  queue: EscalationQueue,
  shared: { logger: Logger; metrics: Metrics; windowSeconds: number },
): NonNullable<RetryDependencies['escalations']> {
  const { logger, metrics } = shared;
  const held = escalationWatcher({
    ledger,
    queue,
    logger,
    metrics,
    now: Date.now,
    windowSeconds: shared.windowSeconds,
    typeOf: destinationType,
  });
  return { ledger, queue, held, first: deliverOnce({ ledger, delivery, logger, metrics, held }) };
}
