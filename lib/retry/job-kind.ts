// The port of the retry queue's jobs: what a kind of job is to the batch loop, and what every
// job's work is given and may come to. The kinds are lib/retry/jobs/*.ts, listed in jobs.ts.
import type { RelayConfigStore } from '../config/store.js';
import type { CostEventWriter } from '../cost-events/events.js';
import type { AnomalyHeld, RetryLedger } from '../dedup/once.js';
import type { Delivery } from '../delivery/deliver.js';
import type { EscalationPorts } from '../escalation/process.js';
import type { GroupStore } from '../group/store.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { QueueMessageOps } from '../queue/sqs.js';
import type { InvocationBudget } from '../shared/deadline.js';
import type { Sleep } from '../shared/sleep.js';
import type { Pacer } from './pacer.js';

/** The fields of an SQS record this function reads (Lambda's SQSRecord has them all). */
export interface QueueRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount?: string };
}

export interface RetryDependencies {
  config: RelayConfigStore;
  /**
   * Posts through the chat services as `pacedServices(services, pacer)` wraps them, so that every
   * post tells the pacer it went out and a Retry-After holds its key, whatever job it belongs to.
   */
  delivery: Delivery;
  messages: QueueMessageOps;
  /** The container's pacer: each webhook's slots, holds and the slots of records waiting on the queue. */
  pacer: Pacer;
  /** Attempts in all (the relay's first one included) before an alert is parked. */
  maxAttempts: number;
  postTimeoutMs: number;
  logger: Logger;
  metrics?: Metrics;
  /** Tells the dedup table what became of a queued alert; without it nothing is remembered. */
  ledger?: RetryLedger;
  budget: InvocationBudget;
  /** Where grouped alerts wait (the dedup table); without it a closing job is parked as malformed. */
  groups?: GroupStore;
  /**
   * What escalations waiting on the queue need (lib/escalation); without them an escalation job is
   * parked as malformed. `held`: the relay's watcher, told of a follow-up delivered from here.
   */
  escalations?: Pick<EscalationPorts, 'ledger' | 'first' | 'queue'> & { held: AnomalyHeld };
  /** Writes the cost events the triage function queued (lib/cost-events); without it such a job is parked as malformed. */
  costEvents?: CostEventWriter;
  /** The kinds of job a message may be; every registered kind (lib/retry/jobs.ts) by default. */
  jobs?: readonly RetryJobKind[];
  sleep?: Sleep;
  /** The clock: escalations are due by it, and a batch's waits are measured on it; Date.now by default. */
  now?: () => number;
}

/** `resent`: the job waits on the queue as a new message, so the one received is done. */
export type RecordOutcome = 'delivered' | 'retry_later' | 'parked' | 'not_attempted' | 'resent';

/** A job as it goes back to the queue as a new message: its body, and its message's attributes. */
export interface Resend {
  body: string;
  attributes: Record<string, string | undefined>;
}

/**
 * A record's job as a new message, with the attempts it made: what its body carried in, and this
 * message's receives but `waits`, those that were no attempt (a wait for its slot, this one included).
 */
export type Again = (waits: number) => Resend;

/** Where a record posts, for the records that post to a destination: they keep its pace in order. */
export interface Pace {
  key: string;
  intervalMs: number;
  destination: string;
  again: Again;
}

/** A record's work; `wentBack`: how many of its receives only sent it back to wait for its slot. */
export type Run = (wentBack: number) => Promise<RecordOutcome>;

/**
 * What a record comes to before anything is posted: an outcome already, or work to run. Work in
 * one lane runs in order: the records that post at one pace key, whatever kind of job they are,
 * or the records its kind puts in one `lane` of its own (the copies of one escalation).
 */
export type Planned = { outcome: RecordOutcome } | { lane?: string; pace?: Pace; run: Run };

/** What one batch shares: how long into it a record may still wait for its destination's slot. */
export interface Batch {
  holdUntil: number;
}

/**
 * One kind of job on the retry queue: a delivery, a group's closing, an escalation, a cost event.
 * Each is a module of lib/retry/jobs/, listed once in lib/retry/jobs.ts; the batch loop
 * (process-batch.ts) asks each whether a message is its job and what working it takes, and names
 * none. `Ports` is what the kind needs of the container beyond what every job has.
 */
export interface RetryJobKindOf<Job, Ports> {
  /** Its name in a lane of its own, and where a job is named (its schema's `kind`, where it has one). */
  readonly name: string;
  /** The job a message's body is, read strictly; undefined for any other body. */
  parse(body: string): Job | undefined;
  /**
   * What working such jobs takes here (the dedup table, the cost-event writer); undefined when
   * this container has none, and its job is parked as malformed rather than handed out until
   * SQS's redrive.
   */
  ports(deps: RetryDependencies): Ports | undefined;
  /** What the record comes to before anything is posted: an outcome, or work at its destination's pace or in a lane of its own. */
  plan(job: Job, ports: Ports, record: QueueRecord, deps: RetryDependencies, batch: Batch): Promise<Planned>;
}

/**
 * A kind of job as the batch loop holds it: the work a message's body comes to where it is this
 * kind's job (`unable` where this container cannot work it), or undefined for another body.
 */
export interface RetryJobKind {
  readonly name: string;
  read(body: string, deps: RetryDependencies): ((record: QueueRecord, batch: Batch) => Promise<Planned>) | 'unable' | undefined;
}

/** A kind of job, its job and ports kept within it: the registry and the batch loop hold any kind alike. */
export function retryJobKind<Job, Ports>(kind: RetryJobKindOf<Job, Ports>): RetryJobKind {
  return {
    name: kind.name,
    read(body, deps) {
      const job = kind.parse(body);
      if (job === undefined) return undefined;
      const ports = kind.ports(deps);
      return ports === undefined ? 'unable' : (record, batch) => kind.plan(job, ports, record, deps, batch);
    },
  };
}
