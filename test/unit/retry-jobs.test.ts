// The kinds of job on the retry queue as one registry (lib/retry/jobs.ts): each is read by its own
// kind alone, and the batch loop (lib/retry/process-batch.ts) works any registered kind alike,
// one it has never heard of included: it plans it, runs it in its lane and settles it.
import { describe, expect, it } from 'vitest';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { type QueueRecord, type RetryDependencies, type RetryJobKind, retryJobKind } from '../../lib/retry/job-kind.js';
import { RETRY_JOBS } from '../../lib/retry/jobs.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch } from '../../lib/retry/process-batch.js';
import { sleep } from '../../lib/shared/sleep.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';

const message = webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title: 'EC2 spend rose' } });

/** A job of each registered kind, as the function that queues it writes it. */
const SAMPLES: Readonly<Record<string, unknown>> = {
  delivery: newJob('d-1', 'default', message, 'http_500', 0),
  group_close: { version: 2, kind: 'group_close', destination: 'default', groupId: '0b5e2a3c-1d4f-4a6b-8c7d-9e0f1a2b3c4d' },
  escalation: { version: 2, kind: 'escalation', from: 'default', firstSeen: 1_764_000_000, updates: 0, message },
  cost_event: {
    version: 2,
    kind: 'cost_event',
    change: 'write',
    subject: { title: 'EC2 spend rose', account: '123456789012', destination: 'default', by: 'Dana', day: '2026-11-26' },
  },
};

let counter = 0;
const record = (body: unknown): QueueRecord => {
  counter += 1;
  return {
    messageId: `m${counter}`,
    receiptHandle: `rh${counter}`,
    body: JSON.stringify(body),
    attributes: { ApproximateReceiveCount: '1' },
  };
};

function setup(jobs?: readonly RetryJobKind[]) {
  const deadLetters = memoryDeadLetters();
  const log = capturedLogger();
  const deps: RetryDependencies = {
    config: memoryConfigStore({
      config: {
        auth: { method: 'none', headers: [] },
        destinations: { default: { url: 'https://hooks.slack.com/services/T0/B0/a' } },
        routes: [],
      },
    }),
    delivery: createDelivery({
      services: chatServices({ slack: fakeChatService([]) }),
      postTimeoutMs: 5_000,
      deadLetters,
      logger: log.logger,
      now: Date.now,
      sleep,
    }),
    messages: { changeVisibility: async () => {}, send: async () => {} },
    pacer: createPacer(),
    maxAttempts: 5,
    postTimeoutMs: 5_000,
    logger: log.logger,
    budget: budgetOf(60_000),
    ...(jobs ? { jobs } : {}),
  };
  return { deps, deadLetters };
}

/**
 * A kind of job no code names: `{ "probe": <lane>, "n": <number> }`, run in the lane it names,
 * each run told to `runs` as it starts and ends; `gate` holds a run until it is opened.
 */
function probeKind(name: string, runs: string[], gates: Map<string, Promise<void>> = new Map(), wired = true) {
  return retryJobKind({
    name,
    parse: (body) => {
      const job = JSON.parse(body) as { probe?: string; kind?: string; n?: number };
      return job.kind === name && typeof job.probe === 'string' ? { lane: job.probe, n: job.n ?? 0 } : undefined;
    },
    ports: () => (wired ? {} : undefined),
    plan: async (job) => ({
      lane: job.lane,
      run: async () => {
        runs.push(`${name}:${job.lane}:${job.n} start`);
        await gates.get(`${name}:${job.n}`);
        runs.push(`${name}:${job.lane}:${job.n} end`);
        return job.n % 2 === 0 ? 'delivered' : 'retry_later';
      },
    }),
  });
}

/** Once every run that waits on no gate has gone as far as it can: the loop's work is promises, no timers. */
const everythingThatCanRun = () => new Promise((resolve) => setImmediate(resolve));

/** A promise and what opens it; it opens by itself after a while, so that a wrong order fails rather than hangs. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
    setTimeout(resolve, 2_000).unref();
  });
  return { opened, open };
}

describe('the kinds of job on the retry queue', () => {
  it('are registered once each, under names of their own, and a job of each is read by its own kind alone', () => {
    const names = RETRY_JOBS.map((kind) => kind.name);
    expect(new Set(names).size).toBe(names.length);
    // A kind registered without a sample here fails: its jobs must be told apart from the others' too.
    expect([...names].sort()).toEqual(Object.keys(SAMPLES).sort());
    const { deps } = setup();
    const everyPort: RetryDependencies = {
      ...deps,
      groups: {} as NonNullable<RetryDependencies['groups']>,
      escalations: {} as NonNullable<RetryDependencies['escalations']>,
      costEvents: { apply: async () => 'skipped' },
    };
    for (const [name, sample] of Object.entries(SAMPLES)) {
      const readers = RETRY_JOBS.filter((kind) => kind.read(JSON.stringify(sample), everyPort) !== undefined).map((kind) => kind.name);
      expect(readers, name).toEqual([name]);
    }
    for (const body of ['{', '{}', JSON.stringify({ version: 2, kind: 'group_close' })]) {
      expect(
        RETRY_JOBS.filter((kind) => kind.read(body, everyPort) !== undefined).map((kind) => kind.name),
        body,
      ).toEqual([]);
    }
  });

  it('the batch loop works a kind it has never heard of: in its own lane, in order there, side by side with other lanes, settled', async () => {
    const runs: string[] = [];
    const first = gate();
    const probe = probeKind('probe', runs, new Map([['probe:2', first.opened]]));
    const { deps, deadLetters } = setup([...RETRY_JOBS, probe]);
    const [a2, a3, b4] = [
      record({ kind: 'probe', probe: 'a', n: 2 }),
      record({ kind: 'probe', probe: 'a', n: 3 }),
      record({ kind: 'probe', probe: 'b', n: 4 }),
    ];
    const batch = processBatch([a2, a3, b4], deps);
    // Lane b runs while lane a's first record waits; lane a's second waits for its first.
    await everythingThatCanRun();
    expect(runs).toContain('probe:b:4 end');
    expect(runs).not.toContain('probe:a:3 start');
    first.open();
    expect(await batch).toEqual({ batchItemFailures: [{ itemIdentifier: a3.messageId }] });
    expect(runs.indexOf('probe:a:3 start')).toBeGreaterThan(runs.indexOf('probe:a:2 end'));
    expect(deadLetters.parked).toEqual([]);
  });

  it("a lane is its kind's own: two kinds naming the same lane go side by side", async () => {
    const runs: string[] = [];
    const held = gate();
    const one = probeKind('one', runs, new Map([['one:2', held.opened]]));
    const other = probeKind('other', runs);
    const { deps } = setup([one, other]);
    const batch = processBatch([record({ kind: 'one', probe: 'x', n: 2 }), record({ kind: 'other', probe: 'x', n: 4 })], deps);
    await everythingThatCanRun();
    expect(runs).toEqual(['one:x:2 start', 'other:x:4 start', 'other:x:4 end']);
    held.open();
    expect(await batch).toEqual({ batchItemFailures: [] });
  });

  it('a job no registered kind reads, or one whose kind this container cannot work, is parked as malformed, as it came', async () => {
    const runs: string[] = [];
    const { deps, deadLetters } = setup([probeKind('probe', runs), probeKind('unwired', runs, new Map(), false)]);
    const unknown = record({ kind: 'nobody', probe: 'a' });
    const unwired = record({ kind: 'unwired', probe: 'a', n: 2 });
    // A delivery job too, as this container knows no kind but the two above.
    const delivery = record(SAMPLES['delivery']);
    expect(await processBatch([unknown, unwired, delivery], deps)).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked).toEqual([
      { body: unknown.body, reason: 'malformed_message' },
      { body: unwired.body, reason: 'malformed_message' },
      { body: delivery.body, reason: 'malformed_message' },
    ]);
    expect(runs).toEqual([]);
  });
});
