import type { ChatService, PostOutcome } from '../../lib/chat/service.js';
import type { DeliveryJob } from '../../lib/delivery/job.js';
import type { DeadLetters, RetryQueue } from '../../lib/delivery/queues.js';
import { createLogger, type Logger } from '../../lib/log/logger.js';
import { type ChatServices, createChatServices } from '../../lib/notify/kinds.js';

export interface Posted {
  url: string;
  payload: { title: string; mention?: string; costCenters?: string[] };
  timeoutMs: number;
}

/** A chat service in memory: answers from a script (then `delivered`), records every post; while `hang`, a post never settles. */
export function fakeChatService(
  script: PostOutcome[] = [],
  minIntervalMs = 1_000,
): ChatService & { posts: Posted[]; hang: boolean; answer(...next: PostOutcome[]): void } {
  const answers = [...script];
  const posts: Posted[] = [];
  const fake: ChatService & { posts: Posted[]; hang: boolean; answer(...next: PostOutcome[]): void } = {
    posts,
    hang: false,
    minIntervalMs,
    paceKey: (url) => url,
    answer: (...next) => answers.push(...next),
    format: (message, destination, _anomaly, _triage, context) => ({
      title: message.payload.title ?? '',
      ...(destination.mention ? { mention: destination.mention } : {}),
      ...(context?.costCenters ? { costCenters: context.costCenters.map((c) => c.name) } : {}),
    }),
    async post(url, payload, options) {
      posts.push({ url, payload: payload as Posted['payload'], timeoutMs: options.timeoutMs });
      if (fake.hang) return new Promise<never>(() => {});
      return answers.shift() ?? { kind: 'delivered' };
    },
  };
  return fake;
}

/** The services a test names; a destination of any other kind's service fails loudly. */
export function chatServices(given: Partial<Record<keyof ChatServices, ChatService>>): ChatServices {
  const missing = (key: string): ChatService => {
    const fail = () => {
      throw new Error(`this test has no ${key} service`);
    };
    return { format: fail, post: fail, minIntervalMs: 0, paceKey: fail };
  };
  // Every service key the registered kinds have, so a kind added later needs no change here.
  const keys = Object.keys(createChatServices()) as Array<keyof ChatServices>;
  return Object.fromEntries(keys.map((key) => [key, given[key] ?? missing(key)])) as ChatServices;
}

export function memoryRetryQueue(failWith?: Error): RetryQueue & { jobs: Array<{ job: DeliveryJob; delaySeconds: number }> } {
  const jobs: Array<{ job: DeliveryJob; delaySeconds: number }> = [];
  return {
    jobs,
    async enqueue(job, delaySeconds) {
      if (failWith) throw failWith;
      jobs.push({ job, delaySeconds });
    },
  };
}

export function memoryDeadLetters(
  failWith?: Error,
): DeadLetters & { parked: Array<{ body: string; reason: string; destination?: string }> } {
  const parked: Array<{ body: string; reason: string; destination?: string }> = [];
  return {
    parked,
    async park(body, reason, destination) {
      if (failWith) throw failWith;
      parked.push({ body, reason, ...(destination !== undefined ? { destination } : {}) });
    },
  };
}

/** A logger whose lines the test reads back. */
export function capturedLogger(): { logger: Logger; lines: string[]; records: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  return {
    logger: createLogger({ sink: (line) => lines.push(line), level: 'debug' }),
    lines,
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** A clock the test moves; `sleep` moves it instead of waiting. */
export function manualClock(start = Date.parse('2026-11-22T12:00:00Z')): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  advance(ms: number): void;
  slept: number[];
} {
  let t = start;
  const slept: number[] = [];
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    slept,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}
