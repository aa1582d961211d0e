// `npm start`'s stand-in for the retry queue and delivery-retry: loaded with import() by
// lazy-escalation-relay.ts only when the relay runs without a queue and was asked for local escalations.

import type { DeliveryLedger } from '../dedup/ledger.js';
import type { AnomalyHeld } from '../dedup/once.js';
import { deliverOnce } from '../dedup/once.js';
import { invocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { AGAIN_SECONDS } from './plan.js';
import { processEscalation } from './process.js';
import type { EscalationQueue } from './queue.js';
import type { EscalationWiring } from './wiring.js';

/** How long the processing of one local escalation may take: as long as a delivery-retry invocation. */
const LOCAL_RUN_MS = 60_000;

/**
 * An in-process timer in place of the delayed message: when it fires, the job is processed here
 * as delivery-retry would, with the relay's in-memory ledger (and the triage page's state), and
 * what would go back on the queue is set on the timer again. Timers do not keep the process alive.
 */
export function localEscalationQueue(wiring: EscalationWiring & { ledger: DeliveryLedger }, held: AnomalyHeld): EscalationQueue {
  const { ledger, delivery, logger, metrics, now, config } = wiring;
  const first = deliverOnce({ ledger, delivery, logger, metrics, now, held });
  let runs = 0;
  const queue: EscalationQueue = {
    async schedule(job, delaySeconds) {
      const run = async () => {
        const end = Date.now() + LOCAL_RUN_MS;
        const budget = invocationBudget({ getRemainingTimeInMillis: () => end - Date.now() });
        try {
          const outcome = await processEscalation(
            job,
            { config, ledger, first, queue, logger, metrics, now },
            budget,
            `local-escalation-${++runs}`,
          );
          if (outcome === 'retry_later') setTimeout(run, AGAIN_SECONDS * 1000).unref();
        } catch (error) {
          logger.error('an escalation could not be processed', { destination: job.from, error: errorReason(error) });
        }
      };
      setTimeout(run, delaySeconds * 1000).unref();
    },
  };
  return queue;
}
