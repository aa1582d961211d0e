import { readFileSync } from 'node:fs';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJob } from '../../lib/delivery/job.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { motoUrl } from '../helpers/aws.js';
import { createDedupTable, type RelayStack, startRelayStack, titleOf } from '../helpers/relay-stack.js';
import { waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
/** Paced retries waiting for one Slack webhook: about 30 s of its pace. */
const BACKLOG = 27;
const STORM = 20;
// The shortest wait the option takes.
const WAIT_SECONDS = 10;

const anomaly = JSON.parse(readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8')) as {
  metadata: Record<string, string>;
  payload: Record<string, string>;
};

describe.skipIf(!moto)('no destination waits on another, through the relay and delivery-retry bundles', () => {
  let stack: RelayStack;
  beforeAll(async () => {
    const table = await createDedupTable(moto!);
    stack = await startRelayStack(
      moto!,
      ['grouped'],
      { DEDUP_TABLE_NAME: table.name },
      { grouped: { group: { waitSeconds: WAIT_SECONDS } } },
    );
    // Slack's own limit on both webhooks: one message a second, 429 above it.
    for (const path of Object.values(stack.paths)) stack.slack.setBehaviour(path, { kind: 'one_per_second' });
  });
  afterAll(() => stack?.stop());

  it(`a grouped storm's digest goes out after its wait, before another webhook's ${BACKLOG} paced retries are through`, {
    timeout: 120_000,
  }, async () => {
    const backlogPath = stack.paths['default']!;
    const groupedPath = stack.paths['grouped']!;
    // The backlog: alerts for `default` that its webhook could not take yet, as the relay queues them.
    const backlogTitle = (i: number) => `Backlog alert #${i}`;
    for (let i = 0; i < BACKLOG; i += 10) {
      const entries = Array.from({ length: Math.min(10, BACKLOG - i) }, (_, j) => {
        const message = webhookMessageSchema.parse({ ...anomaly, payload: { ...anomaly.payload, title: backlogTitle(i + j) } });
        return { Id: String(j), MessageBody: JSON.stringify(newJob(`backlog-${i + j}`, 'default', message, 'rate_limited', Date.now())) };
      });
      await stack.sqs.send(new SendMessageBatchCommand({ QueueUrl: stack.queues.deliveryQueueUrl, Entries: entries }));
    }
    stack.startRetrying();
    // The storm arrives once the worker is busy with the backlog.
    expect(await waitFor(() => stack.slack.accepted(backlogPath).length >= 1, 20_000, 50)).toBe(true);

    const stormTitle = (i: number) => `Grouped storm alert #${i}`;
    const stormStarted = Date.now();
    const answers = await Promise.all(Array.from({ length: STORM }, (_, i) => stack.send(stormTitle(i), 'grouped')));
    for (const answer of answers) expect([200, 202]).toContain(answer.statusCode);
    expect(answers.some((a) => a.statusCode === 202)).toBe(true);

    const named = (path: string, titles: string[]) => {
      const accepted = stack.slack.accepted(path);
      const headers = new Set(accepted.map((r) => titleOf(r.body)));
      const text = accepted.map((r) => JSON.stringify(r.body)).join('\n');
      return titles.every((t) => headers.has(`:rotating_light: ${t}`) || text.includes(`${t} ·`));
    };
    const stormTitles = Array.from({ length: STORM }, (_, i) => stormTitle(i));
    expect(await waitFor(() => named(groupedPath, stormTitles), 60_000, 100)).toBe(true);
    const lastDigest = Math.max(...stack.slack.accepted(groupedPath).map((r) => r.receivedAt));
    // The digest did not wait for the backlog: it went out while the backlog was still being
    // worked through. How soon after the wait it went out is a figure of `npm run bench` (its
    // budget: wait + 5 s), measured on a quiet machine rather than beside this suite's other files.
    expect(lastDigest - stormStarted).toBeGreaterThanOrEqual(WAIT_SECONDS * 1000 - 1000);
    const backlogBefore = stack.slack.accepted(backlogPath).filter((r) => r.receivedAt < lastDigest).length;
    expect(backlogBefore).toBeLessThan(BACKLOG);

    // Meanwhile the backlog kept its webhook's pace, and every alert in it arrives once.
    const backlogTitles = Array.from({ length: BACKLOG }, (_, i) => backlogTitle(i));
    expect(await waitFor(() => named(backlogPath, backlogTitles), 90_000, 200)).toBe(true);
    const accepted = stack.slack.accepted(backlogPath).map((r) => titleOf(r.body));
    expect(accepted.toSorted()).toEqual(backlogTitles.map((t) => `:rotating_light: ${t}`).toSorted());
    // Without a pace, each batch of ten would meet nine 429s. With it, a 429 is only a post that
    // arrived late on this busy loopback server and landed within a second of the next one.
    const throttled = stack.slack.requests.filter((r) => r.path === backlogPath && r.answeredStatus === 429);
    expect(throttled.length).toBeLessThanOrEqual(2);
    expect(stack.retry.output()).not.toContain('/services/');
  });
});
