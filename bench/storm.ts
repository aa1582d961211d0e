// The storm figures: 120 alerts in 3 seconds to one Slack webhook that takes one message a
// second (429 above it), through the relay and delivery-retry bundles, moto_server and a
// loopback Slack; grouped (`group.waitSeconds`) and not; and a grouped storm to one webhook while
// delivery-retry works through a backlog of paced retries for another. Run by bench/run.ts, or
// alone: `npm run build && tsx bench/storm.ts`.

import { fileURLToPath } from 'node:url';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { newJob } from '../lib/delivery/job.js';
import { webhookMessageSchema } from '../lib/message/schema.js';
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

/**
 * A grouped storm while another webhook has a backlog: paced retries already queued for it, and
 * a storm small enough for one digest to a second, grouped webhook. The contract's figure: the
 * digest within the wait plus 5 s, however long the other webhook's backlog takes.
 */
export const BACKLOG_STORM = { backlog: 27, alerts: 30, seconds: 1 } as const;
export const BACKLOG_STORM_BUDGET = { lastPostAfterWaitSeconds: 5 } as const;

export interface BacklogStormRun {
  /** Posts the grouped webhook accepted, and the storm's alerts they name. */
  posts: number;
  named: number;
  /** From the storm's first alert to the grouped webhook's last post. */
  lastPostMs: number;
  /** Backlog alerts posted by then, and when the backlog was through (from the storm's first alert). */
  backlogPostedByThen: number;
  backlogDoneMs: number;
  /** 429s the backlog's webhook answered. */
  backlogThrottled: number;
}

export interface StormFigures {
  grouped: StormRun;
  ungrouped: StormRun;
  withBacklog: BacklogStormRun;
  waitSeconds: number;
  pass: { posts: boolean; lastPost: boolean; everyAlert: boolean; backlogLastPost: boolean };
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

async function stormWithBacklog(moto: string): Promise<BacklogStormRun> {
  const table = await createDedupTable(moto);
  const stack = await startRelayStack(
    moto,
    ['grouped'],
    { DEDUP_TABLE_NAME: table.name },
    { grouped: { group: { waitSeconds: STORM_WAIT_SECONDS } } },
  );
  try {
    const backlogPath = stack.paths['default']!;
    const groupedPath = stack.paths['grouped']!;
    for (const path of [backlogPath, groupedPath]) stack.slack.setBehaviour(path, { kind: 'one_per_second' });
    // The backlog: alerts its webhook could not take yet, as the relay queues them.
    const alert = (title: string) => webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title } });
    for (let i = 0; i < BACKLOG_STORM.backlog; i += 10) {
      const entries = Array.from({ length: Math.min(10, BACKLOG_STORM.backlog - i) }, (_, j) => ({
        Id: String(j),
        MessageBody: JSON.stringify(newJob(`backlog-${i + j}`, 'default', alert(`Backlog alert #${i + j}`), 'rate_limited', Date.now())),
      }));
      await stack.sqs.send(new SendMessageBatchCommand({ QueueUrl: stack.queues.deliveryQueueUrl, Entries: entries }));
    }
    stack.startRetrying();
    await waitFor(() => stack.slack.accepted(backlogPath).length > 0, 30_000, 50);

    const started = Date.now();
    const answers: Array<Promise<unknown>> = [];
    const gap = (BACKLOG_STORM.seconds * 1000) / BACKLOG_STORM.alerts;
    for (let i = 0; i < BACKLOG_STORM.alerts; i++) {
      answers.push(stack.send(title(i), 'grouped'));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + (i + 1) * gap - Date.now())));
    }
    await Promise.all(answers);
    const namedCount = () => {
      const text = stack.slack
        .accepted(groupedPath)
        .map((r) => JSON.stringify(r.body))
        .join('\n');
      const headers = new Set(stack.slack.accepted(groupedPath).map((r) => titleOf(r.body)));
      return Array.from({ length: BACKLOG_STORM.alerts }, (_, i) => i).filter(
        (i) => headers.has(`:rotating_light: ${title(i)}`) || text.includes(`${title(i)} ·`),
      ).length;
    };
    await waitFor(() => namedCount() === BACKLOG_STORM.alerts, 120_000, 100);
    const posts = stack.slack.accepted(groupedPath);
    const lastPost = Math.max(...posts.map((r) => r.receivedAt));
    const backlogPostedByThen = stack.slack.accepted(backlogPath).filter((r) => r.receivedAt <= lastPost).length;
    await waitFor(() => stack.slack.accepted(backlogPath).length >= BACKLOG_STORM.backlog, 120_000, 200);
    return {
      posts: posts.length,
      named: namedCount(),
      lastPostMs: lastPost - started,
      backlogPostedByThen,
      backlogDoneMs: Math.max(...stack.slack.accepted(backlogPath).map((r) => r.receivedAt)) - started,
      backlogThrottled: stack.slack.requests.filter((r) => r.path === backlogPath && r.answeredStatus === 429).length,
    };
  } finally {
    await stack.stop();
  }
}

export async function measureStorm(moto: string): Promise<StormFigures> {
  const grouped = await storm(moto, true);
  const ungrouped = await storm(moto, false);
  const withBacklog = await stormWithBacklog(moto);
  return {
    grouped,
    ungrouped,
    withBacklog,
    waitSeconds: STORM_WAIT_SECONDS,
    pass: {
      posts: grouped.posts <= STORM_BUDGET.posts,
      lastPost: grouped.lastPostMs <= (STORM_WAIT_SECONDS + STORM_BUDGET.lastPostAfterWaitSeconds) * 1000,
      everyAlert: grouped.named === STORM.alerts,
      backlogLastPost:
        withBacklog.named === BACKLOG_STORM.alerts &&
        withBacklog.lastPostMs <= (STORM_WAIT_SECONDS + BACKLOG_STORM_BUDGET.lastPostAfterWaitSeconds) * 1000,
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

export function backlogStormRows(figures: StormFigures): string[][] {
  const run = figures.withBacklog;
  return [
    [
      `grouped, wait ${figures.waitSeconds} s`,
      String(run.posts),
      `${run.named}/${BACKLOG_STORM.alerts}`,
      (run.lastPostMs / 1000).toFixed(1),
      `${run.backlogPostedByThen}/${BACKLOG_STORM.backlog}`,
      (run.backlogDoneMs / 1000).toFixed(1),
      String(run.backlogThrottled),
    ],
  ];
}

export const BACKLOG_STORM_HEADER = [
  'run',
  'posts',
  'named',
  'last post, s',
  'backlog posted by then',
  'backlog through, s',
  "backlog's 429s",
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!motoAvailable()) throw new Error('moto_server is not installed');
  const moto = await startMoto();
  try {
    const figures = await measureStorm(moto.url);
    const { printTable } = await import('./table.js');
    printTable(['storm: 120 alerts in 3 s, Slack 1/s', 'posts', '429s', 'named', 'last post, s'], stormRows(figures));
    console.log(
      `A grouped storm of ${BACKLOG_STORM.alerts} alerts in ${BACKLOG_STORM.seconds} s, another webhook ${BACKLOG_STORM.backlog} paced retries behind`,
    );
    printTable(BACKLOG_STORM_HEADER, backlogStormRows(figures));
    console.log(JSON.stringify(figures.pass));
  } finally {
    await moto.stop();
  }
}
