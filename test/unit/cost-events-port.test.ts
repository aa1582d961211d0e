// The triage function's cost events port (lib/triage/cost-events.ts) on its own: how many jobs a
// digest's "all" queues, and how the write and the queue share the time a page or a click gives
// them. Its time is the budget's timers, faked here; the rest of the path is in cost-events.test.ts.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CostEventSubject, parseCostEventJob } from '../../lib/cost-events/events.js';
import { createLogger } from '../../lib/log/logger.js';
import { COST_EVENT_BUDGET_MS, costEventsPort } from '../../lib/triage/cost-events.js';
import { budgetOf } from '../helpers/budget.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const subject = (n: number): CostEventSubject => ({
  title: `Anomaly ${n}`,
  account: `Analytics (12345678901${n % 10})`,
  destination: 'storm',
  by: 'Dana',
  day: '2026-11-28',
});

/** Waits `ms` on the (faked) timers, or until the signal says the step's time is up. */
const taking = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

function port(options: { enqueueMs?: number } = {}) {
  const metrics = memoryMetrics();
  const lines: string[] = [];
  const queued: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const costEvents = costEventsPort({
    // A platform that never answers: each single event is left to the queue once the write's time is up.
    writer: async () => ({ apply: (_change, _subject, signal) => taking(60_000, signal).then(() => 'written' as const) }),
    enabled: async () => true,
    enqueue: async (body, _delay, signal) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        await taking(options.enqueueMs ?? 0, signal);
        queued.push(body);
      } finally {
        inFlight--;
      }
    },
    metrics,
    logger: createLogger({ sink: (line) => lines.push(line) }),
  });
  return { costEvents, metrics, lines, queued, mostInFlight: () => mostInFlight };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the triage function’s cost events port', () => {
  it('a digest’s “all” of 23 anomalies queues each one once, ten messages at a time', async () => {
    const p = port();
    await p.costEvents.apply(
      'write',
      Array.from({ length: 23 }, (_, i) => subject(i)),
      budgetOf(10_000),
    );
    expect(p.queued.map((body) => parseCostEventJob(body)?.subject.title)).toEqual(Array.from({ length: 23 }, (_, i) => `Anomaly ${i}`));
    expect(p.mostInFlight()).toBe(10);
    expect(p.metrics.count('CostEvents', { outcome: 'queued' })).toBe(23);
  });

  it('no anomaly changed, no event: nothing is written, queued or counted', async () => {
    const p = port();
    await p.costEvents.apply('write', [], budgetOf(10_000));
    expect(p.queued).toEqual([]);
    expect(p.metrics.count('CostEvents', { outcome: 'queued' }) + p.metrics.count('CostEvents', { outcome: 'failed' })).toBe(0);
  });

  it('a platform that does not answer leaves the event to the queue, within what is left of the port’s time', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    // The write had 800 ms of the 1.2 s; a queue answering in 300 ms of the 400 left takes it.
    const p = port({ enqueueMs: 300 });
    // Well into the invocation: the port counts its own time, not the clock's.
    vi.advanceTimersByTime(5_000);
    const done = p.costEvents.apply('write', [subject(1)], budgetOf(10_000));
    await vi.advanceTimersByTimeAsync(COST_EVENT_BUDGET_MS);
    await done;
    expect(p.queued).toHaveLength(1);
    expect(p.metrics.count('CostEvents', { outcome: 'queued' })).toBe(1);
  });

  it('a queue slower than what is left of the port’s time is cut off: the event is counted failed, and the answer is not held up', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const p = port({ enqueueMs: 500 });
    let settled = false;
    const done = p.costEvents.apply('write', [subject(1)], budgetOf(10_000)).then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(COST_EVENT_BUDGET_MS);
    expect(settled).toBe(true);
    await done;
    expect(p.queued).toHaveLength(0);
    expect(p.metrics.count('CostEvents', { outcome: 'failed' })).toBe(1);
    expect(p.lines.join('\n')).toContain('cost event neither written nor queued');
  });
});
