// The storm figure: 120 alerts in 3 seconds to one Slack webhook that takes one message a
// second (429 above it), through the relay and delivery-retry bundles, moto_server and a
// loopback Slack; grouped (`group.waitSeconds`) and not. Run by bench/run.ts, or alone:
// `npm run build && tsx bench/storm.ts`.

import { fileURLToPath } from 'node:url';
import { motoAvailable, startMoto } from '../test/helpers/moto.js';
import { createDedupTable, startRelayStack, titleOf } from '../test/helpers/relay-stack.js';
import { waitFor } from '../test/helpers/sqs.js';

export const STORM = { alerts: 120, seconds: 3 } as const;
/**
 * The shortest wait the option takes, so that the figure takes seconds rather than minutes. A
 * longer wait only moves the digest later by the difference: the budget is measured from it.
 */
export const STORM_WAIT_SECONDS = 10;
/** The budget: at most 3 posts, the last within the wait plus 10 seconds. */
export const STORM_BUDGET = { posts: 3, lastPostAfterWaitSeconds: 10 } as const;

export interface StormRun {
  /** Posts Slack accepted. */
  posts: number;
  /** Posts Slack answered 429. */
  throttled: number;
  /** Alerts named in what Slack accepted. */
  named: number;
  /** From the first alert sent to the last post Slack accepted. */
  lastPostMs: number;
}

export interface StormFigures {
  grouped: StormRun;
  ungrouped: StormRun;
  waitSeconds: number;
  pass: { posts: boolean; lastPost: boolean; everyAlert: boolean };
}

const title = (i: number) => `Cost anomaly detected: Amazon EC2 in us-east-1 #${i}`;

async function storm(moto: string, grouped: boolean): Promise<StormRun> {
  const table = await createDedupTable(moto);
  const stack = await startRelayStack(
    moto,
    [],
    { DEDUP_TABLE_NAME: table.name },
    grouped ? { default: { group: { waitSeconds: STORM_WAIT_SECONDS } } } : {},
  );
  try {
    const path = stack.paths['default']!;
    stack.slack.setBehaviour(path, { kind: 'one_per_second' });
    stack.startRetrying();
    const started = Date.now();
    const answers: Array<Promise<unknown>> = [];
    const gap = (STORM.seconds * 1000) / STORM.alerts;
    for (let i = 0; i < STORM.alerts; i++) {
      answers.push(stack.send(title(i)));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + (i + 1) * gap - Date.now())));
    }
    await Promise.all(answers);
    const namedCount = () => {
      const accepted = stack.slack.accepted(path);
      const headers = new Set(accepted.map((r) => titleOf(r.body)));
      const text = accepted.map((r) => JSON.stringify(r.body)).join('\n');
      return Array.from({ length: STORM.alerts }, (_, i) => i).filter(
        (i) => headers.has(`:rotating_light: ${title(i)}`) || text.includes(`${title(i)} ·`),
      ).length;
    };
    await waitFor(() => namedCount() === STORM.alerts, 400_000, 250);
    const accepted = stack.slack.accepted(path);
    return {
      posts: accepted.length,
      throttled: stack.slack.requests.filter((r) => r.path === path && r.answeredStatus === 429).length,
      named: namedCount(),
      lastPostMs: Math.max(...accepted.map((r) => r.receivedAt)) - started,
    };
  } finally {
    await stack.stop();
  }
}

export async function measureStorm(moto: string): Promise<StormFigures> {
  const grouped = await storm(moto, true);
  const ungrouped = await storm(moto, false);
  return {
    grouped,
    ungrouped,
    waitSeconds: STORM_WAIT_SECONDS,
    pass: {
      posts: grouped.posts <= STORM_BUDGET.posts,
      lastPost: grouped.lastPostMs <= (STORM_WAIT_SECONDS + STORM_BUDGET.lastPostAfterWaitSeconds) * 1000,
      everyAlert: grouped.named === STORM.alerts,
    },
  };
}

export function stormRows(figures: StormFigures): string[][] {
  const row = (name: string, run: StormRun) => [
    name,
    String(run.posts),
    String(run.throttled),
    `${run.named}/${STORM.alerts}`,
    (run.lastPostMs / 1000).toFixed(1),
  ];
  return [row(`grouped, wait ${figures.waitSeconds} s`, figures.grouped), row('not grouped', figures.ungrouped)];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!motoAvailable()) throw new Error('moto_server is not installed');
  const moto = await startMoto();
  try {
    const figures = await measureStorm(moto.url);
    const { printTable } = await import('./table.js');
    printTable(['storm: 120 alerts in 3 s, Slack 1/s', 'posts', '429s', 'named', 'last post, s'], stormRows(figures));
    console.log(JSON.stringify(figures.pass));
  } finally {
    await moto.stop();
  }
}
