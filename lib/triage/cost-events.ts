import type { CostEventChange, CostEventJob, CostEventSubject, CostEventWriter } from '../cost-events/events.js';
import type { Logger } from '../log/logger.js';
import { costEventMetric, type Metrics } from '../metrics/metrics.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason, ReasonedError } from '../shared/errors.js';
import type { TriagePorts } from './handle.js';

/**
 * What a click or a page's POST gives its cost events before it answers, the queue's share
 * included: a part of the 3 seconds a chat waits, beside the message's own update.
 */
export const COST_EVENT_BUDGET_MS = 1_200;
/** Of it, what the write itself may take; the rest is the queue's, should the platform be slow. */
const WRITE_BUDGET_MS = 800;
/** A queued cost event is tried again a little later, not at once: the platform was just slow or down. */
export const COST_EVENT_RETRY_DELAY_SECONDS = 30;
/** SQS takes at most this many messages in one call. */
const SQS_BATCH = 10;

/** The stack gives the triage function no retry queue (DELIVERY_QUEUE_URL): an event the platform cannot take now has nowhere to wait. */
export class CostEventUnqueuableError extends ReasonedError<'no_retry_queue'> {}

/**
 * The triage function's cost events: one written at once where the platform answers in time, and
 * otherwise (or several at once, a digest's "all") handed to the retry queue, where delivery-retry
 * writes each once at the platform's pace. Never dropped silently: what can be neither written
 * nor queued is logged and counted `failed`.
 */
export function costEventsPort(deps: {
  /** The writer, loaded with the first cost event (lib/cost-events/lazy-cost-events.ts in AWS). */
  writer: () => Promise<CostEventWriter>;
  enabled(): Promise<boolean>;
  /** Puts a job on the retry queue (SQS's SendMessage, delayed); undefined where the stack has none. */
  enqueue: ((body: string, delaySeconds: number, signal: AbortSignal) => Promise<void>) | undefined;
  metrics: Metrics;
  logger: Logger;
}): NonNullable<TriagePorts['costEvents']> {
  let writer: Promise<CostEventWriter> | undefined;
  const load = () => {
    writer ??= deps.writer();
    // A failed import is tried again with the next event rather than remembered.
    writer.catch(() => {
      writer = undefined;
    });
    return writer;
  };
  const count = (outcome: Parameters<typeof costEventMetric>[0], n = 1) => {
    for (let i = 0; i < n; i++) deps.metrics.add(costEventMetric(outcome));
  };
  const queued = async (change: CostEventChange, subjects: readonly CostEventSubject[], budget: InvocationBudget, capMs: number) => {
    const { enqueue } = deps;
    if (!enqueue) throw new CostEventUnqueuableError('No retry queue is configured.', 'no_retry_queue');
    await budget.step('retry_queue', capMs, async (signal) => {
      for (let i = 0; i < subjects.length; i += SQS_BATCH) {
        await Promise.all(
          subjects.slice(i, i + SQS_BATCH).map((subject) => {
            const job: CostEventJob = { version: 2, kind: 'cost_event', change, subject };
            return enqueue(JSON.stringify(job), COST_EVENT_RETRY_DELAY_SECONDS, signal);
          }),
        );
      }
    });
  };
  const toQueue = async (change: CostEventChange, subjects: readonly CostEventSubject[], budget: InvocationBudget, capMs: number) => {
    try {
      await queued(change, subjects, budget, capMs);
      count('queued', subjects.length);
    } catch (error) {
      count('failed', subjects.length);
      deps.logger.error('cost event neither written nor queued', { change, events: subjects.length, reason: errorReason(error) });
    }
  };
  return {
    enabled: deps.enabled,
    async apply(change, subjects, budget) {
      const [only] = subjects;
      if (!only) return;
      if (subjects.length > 1) return toQueue(change, subjects, budget, COST_EVENT_BUDGET_MS);
      const started = performance.now();
      try {
        const outcome = await budget.step('cost_event', WRITE_BUDGET_MS, async (signal) => (await load()).apply(change, only, signal));
        count(outcome);
        deps.logger.info('cost event', { change, outcome });
      } catch (error) {
        deps.logger.warn('cost event not done in time; it waits on the retry queue', { change, reason: errorReason(error) });
        const left = COST_EVENT_BUDGET_MS - (performance.now() - started);
        await toQueue(change, [only], budget, Math.max(200, Math.floor(left)));
      }
    },
  };
}
