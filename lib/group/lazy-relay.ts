// Loaded with import() by the relay's wiring, only when a grouped destination gets its first alert.
import type { LazySqs } from '../aws/clients.js';
import { DYNAMODB } from '../aws/json-client.js';
import { DYNAMODB_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import type { DeliveryLedger } from '../dedup/ledger.js';
import { type AnomalyHeld, retryLedger } from '../dedup/once.js';
import { type AlertForTarget, type Delivery, postTimeoutFrom, type Target } from '../delivery/deliver.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { sendMessage } from '../queue/sqs.js';
import { type InvocationBudget, invocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { sleep } from '../shared/sleep.js';
import { closeGroup } from './close.js';
import { dynamoGroupStore } from './dynamodb.js';
import { joinGroup, type ScheduleClose } from './join.js';
import { inMemoryGroupStore } from './store.js';

// Bundled on its own (scripts/esbuild-options.mjs): what it shares with the cold path, it gets as arguments.
export interface GroupingWiring {
  delivery: Delivery;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
  /** The relay's settings that grouping reads. */
  settings: Parameters<typeof postTimeoutFrom>[0] & { DEDUP_TABLE_NAME?: string | undefined; DELIVERY_QUEUE_URL?: string | undefined };
  sqs: LazySqs;
  /** `npm start`'s: an in-process timer instead of the table and the queue, and the in-memory ledger the relay uses. */
  options: { ledger?: DeliveryLedger; localGroups?: boolean; aws?: AwsPorts };
  /** The relay's escalation watcher: told of a follow-up the timer's closing delivers, as delivery-retry tells it in AWS. */
  held?: AnomalyHeld;
}

/** How long the closing of a local group may take: as long as a retry-worker invocation. */
const LOCAL_CLOSE_MS = 60_000;

const wired = new WeakMap<GroupingWiring, Delivery['first']>();

/**
 * The relay's first attempt for a grouped destination. Grouping needs the dedup table and the
 * retry queue in AWS, or `npm start`'s timer; without them each alert is delivered on its own.
 */
export function groupedFirst(wiring: GroupingWiring, alert: AlertForTarget, budget: InvocationBudget): ReturnType<Delivery['first']> {
  let first = wired.get(wiring);
  if (!first) {
    first = relayGrouping(wiring) ?? wiring.delivery.first;
    wired.set(wiring, first);
  }
  return first(alert, budget);
}

function relayGrouping(wiring: GroupingWiring): Delivery['first'] | undefined {
  const { delivery, logger, metrics, now, settings, sqs } = wiring;
  const { DEDUP_TABLE_NAME: tableName, DELIVERY_QUEUE_URL: queueUrl } = settings;
  // In AWS the dedup table holds the group and the retry queue its closing.
  if (tableName && queueUrl) {
    const schedule: ScheduleClose = (job, delaySeconds, signal) =>
      sendMessage(sqs, queueUrl, JSON.stringify(job), { destination: job.destination }, delaySeconds, signal);
    const store = dynamoGroupStore(jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, wiring.options.aws), { tableName, now });
    return joinGroup({ store, schedule, logger, metrics, now }, delivery.first);
  }
  if (!wiring.options.localGroups) return undefined;
  // Without a table or a queue, an in-process timer stands in for both: a closing that cannot
  // post is tried again by the same timer, as the retry queue would.
  const store = inMemoryGroupStore();
  const ledger = wiring.options.ledger ? retryLedger({ ledger: wiring.options.ledger, logger, metrics }) : undefined;
  const targets = new Map<string, Target>();
  const schedule: ScheduleClose = async (job, delaySeconds) => {
    const run = async () => {
      const target = targets.get(job.destination);
      if (!target) return;
      // No dead-letter queue here: a refused alert is logged as delivery.park logs a single one, and that is all there is to do.
      const park: Delivery['park'] = async (parcel, within) => {
        await delivery.park(parcel, within);
        return true;
      };
      const deps = { store, delivery, logger, metrics, park, now, sleep, reserveMs: 0, postTimeoutMs: postTimeoutFrom(settings) };
      const end = Date.now() + LOCAL_CLOSE_MS;
      const budget = invocationBudget({ getRemainingTimeInMillis: () => end - Date.now() });
      try {
        const outcome = await closeGroup(
          job,
          target,
          { ...deps, ...(ledger ? { ledger } : {}), ...(wiring.held ? { held: wiring.held } : {}) },
          budget,
        );
        if (outcome.kind === 'retry') setTimeout(run, outcome.delaySeconds * 1000).unref();
      } catch (error) {
        logger.error('a group could not be closed', { destination: job.destination, error: errorReason(error) });
      }
    };
    setTimeout(run, delaySeconds * 1000).unref();
  };
  const join = joinGroup({ store, schedule, logger, metrics, now }, delivery.first);
  return (alert, budget) => {
    targets.set(alert.target.name, alert.target);
    return join(alert, budget);
  };
}
