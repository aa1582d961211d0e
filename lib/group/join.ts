import { randomUUID } from 'node:crypto';
import { deliveryRecordId } from '../dedup/fingerprint.js';
import type { AlertForTarget, FirstResult } from '../delivery/deliver.js';
import { originSchema } from '../delivery/origin.js';
import type { Logger } from '../log/logger.js';
import { deliveryMetric, groupOpenedMetric, type Metrics, noMetrics } from '../metrics/metrics.js';
import { destinationType, groupWaitOf } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import type { GroupCloseJob } from './job.js';
import { entryBytes, type GroupEntry, type GroupStore, MAX_GROUP_BYTES } from './store.js';

/** Where a group's closing waits: a delayed message on the retry queue, or a timer under `npm start`. */
export type ScheduleClose = (job: GroupCloseJob, delaySeconds: number, signal?: AbortSignal) => Promise<void>;

export interface GroupingPorts {
  store: GroupStore;
  schedule: ScheduleClose;
  logger: Logger;
  metrics?: Metrics;
  now: () => number;
}

/** The most one table or queue call of a join may take; on failure the alert is delivered on its own. */
export const GROUP_CALL_BUDGET_MS = 1_000;

/** A race with another opener is lost at most this often before the alert goes on its own. */
const OPEN_TRIES = 3;

/**
 * The first attempt for a grouped destination: the alert joins the open group, or opens one
 * whose closing is scheduled first, so that no group ever waits without its closer. A group
 * that is closing or full, an alert too large for any group, or a table or queue that fails,
 * never holds an alert back: it is delivered on its own by `alone`.
 */
export function joinGroup(ports: GroupingPorts, alone: (alert: AlertForTarget, budget: InvocationBudget) => Promise<FirstResult>) {
  const metrics = ports.metrics ?? noMetrics;
  return async (alert: AlertForTarget, budget: InvocationBudget): Promise<FirstResult> => {
    const { target, message } = alert;
    const wait = groupWaitOf(target.destination);
    if (wait === undefined) return alone(alert, budget);
    const type = destinationType(target.destination);
    const entry: GroupEntry = {
      key: deliveryRecordId(message, target.name),
      at: ports.now(),
      message,
      ...(alert.anomaly ? { anomaly: alert.anomaly } : {}),
      // As a queued job keeps it: only an API's own origin is ever linked to.
      ...(alert.origin !== undefined && originSchema.safeParse(alert.origin).success ? { origin: alert.origin } : {}),
      ...(alert.costCenters?.length ? { costCenters: alert.costCenters.map(({ id, name }) => ({ id, name })) } : {}),
      ...(alert.firstSeen !== undefined ? { firstSeen: alert.firstSeen } : {}),
    };
    if (entryBytes(entry) > MAX_GROUP_BYTES) return alone(alert, budget);
    const grouped = (): FirstResult => {
      metrics.add(deliveryMetric('grouped', type));
      return { kind: 'grouped' };
    };
    const step = <T>(name: string, work: (signal: AbortSignal) => Promise<T>) => budget.step(name, GROUP_CALL_BUDGET_MS, work);
    try {
      for (let tries = 0; tries < OPEN_TRIES; tries++) {
        const joined = await step('dedup_table', (signal) => ports.store.join(target.name, entry, signal));
        if (joined.kind === 'joined' || joined.kind === 'duplicate') return grouped();
        if (joined.kind === 'busy') return alone(alert, budget);
        const groupId = randomUUID();
        await step('retry_queue', (signal) =>
          ports.schedule({ version: 2, kind: 'group_close', destination: target.name, groupId }, wait, signal),
        );
        // The closing job of a lost race finds no group of its id and closes nothing.
        if (await step('dedup_table', (signal) => ports.store.open(target.name, groupId, entry, wait, signal))) {
          metrics.add(groupOpenedMetric(type));
          ports.logger.info('group opened', { destination: target.name, waitSeconds: wait });
          return grouped();
        }
      }
    } catch (error) {
      ports.logger.warn('grouping unavailable; delivering the alert on its own', { destination: target.name, error: errorReason(error) });
    }
    return alone(alert, budget);
  };
}
