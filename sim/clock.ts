/**
 * Simulated time for the whole process while a seed runs: Date, performance.now, setTimeout,
 * setInterval and AbortSignal.timeout follow a clock that jumps from one timer to the next, so
 * that weeks pass in seconds and every deadline in our code (withDeadline, node-request's timers,
 * the cost API's AbortSignal.timeout) fires at its simulated time. Between two timers the clock
 * lets every promise settle (a real setImmediate runs only once the microtask queue is empty), so
 * the order of events depends on the seed alone. Nothing else in the process may use real time
 * while it is installed.
 */

import { createRequire, syncBuiltinESMExports } from 'node:module';

// The builtin's own object: what `import { randomUUID } from 'node:crypto'` reads after a sync.
const nodeCrypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

interface Timer {
  id: number;
  at: number;
  seq: number;
  callback: () => void;
  interval?: number;
  cleared: boolean;
}

/** A minimal binary heap of timers by time, then by the order they were set. */
class TimerHeap {
  private readonly items: Timer[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): Timer | undefined {
    return this.items[0];
  }
  push(timer: Timer): void {
    const items = this.items;
    items.push(timer);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i] as Timer, items[parent] as Timer)) break;
      [items[i], items[parent]] = [items[parent] as Timer, items[i] as Timer];
      i = parent;
    }
  }
  pop(): Timer | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < items.length && before(items[l] as Timer, items[smallest] as Timer)) smallest = l;
        if (r < items.length && before(items[r] as Timer, items[smallest] as Timer)) smallest = r;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest] as Timer, items[i] as Timer];
        i = smallest;
      }
    }
    return top;
  }
}

const before = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export interface SimClock {
  now(): number;
  /** Runs every timer due up to `time`, in order, letting promises settle between them; then sets the clock to `time`. */
  runUntil(time: number): Promise<void>;
  /** Lets every pending promise settle without moving the clock. */
  settle(): Promise<void>;
  /** Timers fired so far. */
  readonly fired: number;
  uninstall(): void;
}

const realSetImmediate = globalThis.setImmediate;
const yieldToMicrotasks = () => new Promise<void>((resolve) => realSetImmediate(resolve));

/**
 * Installs simulated time in this process, starting at `start` (epoch ms), and `Math.random` from
 * the seed (backoffs and jitter draw from it).
 */
export function installClock(start: number, random: () => number): SimClock {
  const original = {
    Date: globalThis.Date,
    setTimeout: globalThis.setTimeout,
    clearTimeout: globalThis.clearTimeout,
    setInterval: globalThis.setInterval,
    clearInterval: globalThis.clearInterval,
    performanceNow: performance.now.bind(performance),
    abortTimeout: AbortSignal.timeout,
    random: Math.random,
    randomUUID: nodeCrypto.randomUUID,
    webRandomUUID: globalThis.crypto.randomUUID,
  };
  let now = start;
  let seq = 0;
  let fired = 0;
  const heap = new TimerHeap();
  const byId = new Map<number, Timer>();

  // What Node's Timeout objects offer that our code or its libraries call.
  class SimTimeout {
    constructor(readonly timer: Timer) {}
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    hasRef() {
      return true;
    }
    refresh() {
      const { timer } = this;
      if (!timer.cleared) {
        timer.cleared = true;
        const renewed: Timer = { ...timer, at: now + (timer.interval ?? 0), seq: seq++, cleared: false };
        this.renewed(renewed);
      }
      return this;
    }
    private renewed(timer: Timer) {
      (this as { timer: Timer }).timer = timer;
      byId.set(timer.id, timer);
      heap.push(timer);
    }
    [Symbol.toPrimitive]() {
      return this.timer.id;
    }
  }

  const schedule = (callback: (...args: unknown[]) => void, ms: unknown, args: unknown[], repeat: boolean) => {
    const delay = Math.max(1, Number(ms) || 0);
    const id = ++seq;
    const timer: Timer = {
      id,
      at: now + delay,
      seq: id,
      callback: () => callback(...args),
      cleared: false,
      ...(repeat ? { interval: delay } : {}),
    };
    byId.set(id, timer);
    heap.push(timer);
    return new SimTimeout(timer);
  };
  const clear = (handle: unknown) => {
    if (handle === undefined || handle === null) return;
    const id = typeof handle === 'object' && handle instanceof SimTimeout ? handle.timer.id : Number(handle);
    const timer = byId.get(id);
    if (timer) {
      timer.cleared = true;
      byId.delete(id);
    }
  };

  const OriginalDate = original.Date;
  class SimDate extends OriginalDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(now);
      else super(...(args as [string]));
    }
    static override now() {
      return now;
    }
  }

  globalThis.Date = SimDate as DateConstructor;
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
    schedule(callback, ms, args, false)) as unknown as typeof setTimeout;
  globalThis.setInterval = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
    schedule(callback, ms, args, true)) as unknown as typeof setInterval;
  globalThis.clearTimeout = clear as typeof clearTimeout;
  globalThis.clearInterval = clear as typeof clearInterval;
  performance.now = () => now - start;
  Math.random = random;
  // Tokens and ids drawn from the seed too: a group's members, leases and parked records are
  // ordered or told apart by them, and a run must replay exactly.
  const seededUUID = () => {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
    hex[12] = '4';
    hex[16] = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
    const h = hex.join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}` as `${string}-${string}-${string}-${string}-${string}`;
  };
  nodeCrypto.randomUUID = seededUUID;
  globalThis.crypto.randomUUID = seededUUID;
  syncBuiltinESMExports();
  AbortSignal.timeout = (ms: number) => {
    const controller = new AbortController();
    schedule(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms, [], false);
    return controller.signal;
  };

  const settle = async () => {
    // A few turns: a settled promise can start work whose own promises settle a turn later.
    for (let i = 0; i < 2; i++) await yieldToMicrotasks();
  };

  return {
    now: () => now,
    get fired() {
      return fired;
    },
    settle,
    async runUntil(time) {
      for (;;) {
        await settle();
        let next = heap.peek();
        while (next?.cleared) {
          heap.pop();
          next = heap.peek();
        }
        if (!next || next.at > time) break;
        heap.pop();
        now = Math.max(now, next.at);
        fired += 1;
        if (next.interval !== undefined) {
          const again: Timer = { ...next, at: now + next.interval, seq: seq++ };
          byId.set(next.id, again);
          heap.push(again);
        } else byId.delete(next.id);
        next.callback();
      }
      now = Math.max(now, time);
    },
    uninstall() {
      globalThis.Date = original.Date;
      globalThis.setTimeout = original.setTimeout;
      globalThis.clearTimeout = original.clearTimeout;
      globalThis.setInterval = original.setInterval;
      globalThis.clearInterval = original.clearInterval;
      performance.now = original.performanceNow;
      AbortSignal.timeout = original.abortTimeout;
      Math.random = original.random;
      nodeCrypto.randomUUID = original.randomUUID;
      globalThis.crypto.randomUUID = original.webRandomUUID;
      syncBuiltinESMExports();
    },
  };
}
