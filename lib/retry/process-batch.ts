import { errorReason } from '../shared/errors.js';
import type { Batch, Pace, Planned, QueueRecord, RecordOutcome, RetryDependencies, Run } from './job-kind.js';
import { RETRY_JOBS } from './jobs.js';
import { AFTER_POST_MS, handBack, parkAsReceived, receivesOf } from './record.js';

export type { QueueRecord, RetryDependencies } from './job-kind.js';

export type BatchResult = { batchItemFailures: Array<{ itemIdentifier: string }> };

/** A record that fails unexpectedly this many times fails the same way every time: park it with the reason. */
export const UNEXPECTED_FAILURES_BEFORE_PARKING = 3;

/**
 * How far into an invocation a record may still wait for its webhook's next slot. Lambda hands
 * a container its next batch only once this one is answered, so every second spent waiting on
 * one webhook's pace is a second that other destinations' work in the next batches waits too
 * (a group's closing, an escalation). A record whose slot comes later goes back to the queue
 * until then, its slot booked (lib/retry/pacer.ts).
 */
export const PACE_HOLD_MS = 2_000;

/**
 * Works through one SQS batch. Each record is either done (delivered, parked in the dead-letter
 * queue, or sent again as a new message: SQS deletes it) or reported as a batch item failure with
 * its visibility set to when it should be tried again. Records that post to one pace key (a webhook, a
 * Google Chat space, a Slack channel) go in order at that key's pace; different keys, and
 * escalations, go side by side, so that no destination waits on another's pace or Retry-After.
 * A post a chat service accepted is never retried.
 */
export async function processBatch(records: readonly QueueRecord[], deps: RetryDependencies): Promise<BatchResult> {
  const now = deps.now ?? Date.now;
  const holdUntil = now() + PACE_HOLD_MS;
  const batch = { holdUntil };
  const planned = await Promise.all(
    records.map((record) =>
      plan(record, deps, batch).catch(async (error: unknown) => ({ outcome: await unexpected(record, deps, error) })),
    ),
  );
  const outcomes: RecordOutcome[] = [];
  const lanes = new Map<string, Array<{ record: QueueRecord; index: number; pace?: Pace; run: Run }>>();
  planned.forEach((step, index) => {
    if ('outcome' in step) {
      outcomes[index] = step.outcome;
      return;
    }
    const record = records[index]!;
    // A pace key is the destination's, whatever kind of job posts there; a lane is its kind's own.
    const key = step.pace?.key ?? (step.lane === undefined ? record.messageId : `${step.kind}:${step.lane}`);
    const lane = lanes.get(key) ?? [];
    lane.push({ record, index, ...(step.pace ? { pace: step.pace } : {}), run: step.run });
    lanes.set(key, lane);
  });
  await Promise.all(
    [...lanes.values()].map(async (lane) => {
      // Records sent back to wait for their slots: booked in order, their visibility set side by side.
      const waiting: Array<Promise<void>> = [];
      for (const { record, index, pace, run } of lane) {
        if (pace && !slotInTime(record, pace, deps, holdUntil)) {
          waiting.push(
            waitForSlot(record, pace, deps).then((outcome) => {
              outcomes[index] = outcome;
            }),
          );
          continue;
        }
        outcomes[index] = await settled(record, deps, async () =>
          run(pace ? await deps.pacer.wait(pace.key, pace.intervalMs, record.messageId) : 0),
        );
      }
      await Promise.all(waiting);
    }),
  );
  return {
    batchItemFailures: records
      .filter((_, index) => outcomes[index] === 'retry_later' || outcomes[index] === 'not_attempted')
      .map((record) => ({ itemIdentifier: record.messageId })),
  };
}

/** Whether a record's slot comes soon enough in this invocation, with time for its post after it. */
function slotInTime(record: QueueRecord, pace: Pace, deps: RetryDependencies, holdUntil: number): boolean {
  const now = deps.now ?? Date.now;
  const wait = deps.pacer.delayFor(pace.key, record.messageId);
  return now() + wait <= holdUntil && deps.budget.fits(wait + deps.postTimeoutMs + AFTER_POST_MS);
}

/** Back to the queue, unposted, until its slot, which it books now: a record after it in its lane books the next. */
function waitForSlot(record: QueueRecord, pace: Pace, deps: RetryDependencies): Promise<RecordOutcome> {
  const seconds = Math.max(1, Math.ceil(deps.pacer.book(pace.key, pace.intervalMs, record.messageId) / 1000));
  deps.logger.debug('waits on the queue for its slot', { messageId: record.messageId, destination: pace.destination, seconds });
  return handBack(record, seconds, () => pace.again(deps.pacer.wentBack(pace.key, record.messageId)), deps);
}

/** A record's work, with what an unexpected failure of it comes to. */
async function settled(record: QueueRecord, deps: RetryDependencies, work: () => Promise<RecordOutcome>): Promise<RecordOutcome> {
  try {
    return await work();
  } catch (error) {
    return unexpected(record, deps, error);
  }
}

async function unexpected(record: QueueRecord, deps: RetryDependencies, error: unknown): Promise<RecordOutcome> {
  deps.logger.error('retry failed unexpectedly', { messageId: record.messageId, reason: errorReason(error) });
  return receivesOf(record) >= UNEXPECTED_FAILURES_BEFORE_PARKING
    ? parkAsReceived(record, `unexpected_error:${errorReason(error)}`, deps)
    : 'retry_later';
}

/**
 * What a record is, read before anything is posted: the work of the kind of job whose job its body
 * is (lib/retry/jobs.ts), with that kind's name for its lane; parked as malformed when no kind
 * reads it, or when the kind that does cannot be worked in this container.
 */
async function plan(record: QueueRecord, deps: RetryDependencies, batch: Batch): Promise<Planned & { kind?: string }> {
  for (const kind of deps.jobs ?? RETRY_JOBS) {
    const work = kind.read(record.body, deps);
    if (work === undefined) continue;
    if (work === 'unable') break;
    return { ...(await work(record, batch)), kind: kind.name };
  }
  return { outcome: await parkAsReceived(record, 'malformed_message', deps) };
}
