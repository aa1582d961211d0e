// Loaded with import() by the relay's wiring, only when a destination with `escalate` holds an
// anomaly's post, and bundled on its own (a lazy-*.ts module): a configuration without
// escalations never parses it. What it shares with the cold path comes in as arguments.
import type { AnomalyStart } from '../dedup/ledger.js';
import type { AnomalyHeld } from '../dedup/once.js';
import type { AlertForTarget } from '../delivery/deliver.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { type EscalationQueue, sqsEscalationQueue } from './queue.js';
import { escalationWatcher } from './watch.js';
import type { EscalationWiring } from './wiring.js';

export type { EscalationWiring } from './wiring.js';

const wired = new WeakMap<EscalationWiring, Promise<AnomalyHeld>>();

/**
 * The relay's escalations: in AWS a delayed job on the retry queue that delivery-retry processes
 * when due. False when the wait could not be set (AnomalyHeld).
 */
export function watch(
  wiring: EscalationWiring,
  alert: AlertForTarget,
  start: AnomalyStart,
  held: 'delivered' | 'queued',
  budget: InvocationBudget,
): Promise<boolean> {
  let watcher = wired.get(wiring);
  if (!watcher) {
    watcher = watcherFor(wiring);
    wired.set(wiring, watcher);
  }
  return watcher
    .then((watching) => watching(alert, start, held, budget))
    .catch((error: unknown) => {
      wiring.logger.error('escalation could not be scheduled', { destination: alert.target.name, error: errorReason(error) });
      return false;
    });
}

async function watcherFor(wiring: EscalationWiring): Promise<AnomalyHeld> {
  const { ledger, settings, logger, metrics, now, typeOf } = wiring;
  if (!ledger) throw new Error('escalations need the dedup ledger');
  const ports = {
    ledger,
    logger,
    metrics,
    now,
    typeOf,
    windowSeconds: settings.DEDUP_TABLE_NAME ? settings.DEDUP_WINDOW_SECONDS : undefined,
  };
  // The job is processed where the anomaly's state is: delivery-retry reads the table.
  if (settings.DELIVERY_QUEUE_URL && settings.DEDUP_TABLE_NAME) {
    return escalationWatcher({ ...ports, queue: sqsEscalationQueue(wiring.sqs, settings.DELIVERY_QUEUE_URL) });
  }
  if (!wiring.options.localEscalations) return escalationWatcher({ ...ports, queue: undefined });
  const { localEscalationQueue } = await import('./lazy-escalation-local.js');
  // The timer's escalations set their destination's own escalation waiting through this same watcher.
  let watcher: AnomalyHeld | undefined;
  const queue: EscalationQueue = localEscalationQueue({ ...wiring, ledger }, (...held) => (watcher as AnomalyHeld)(...held));
  watcher = escalationWatcher({ ...ports, queue });
  return watcher;
}
