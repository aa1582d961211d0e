import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { motoUrl } from '../helpers/aws.js';
import { type MotoServer, startMoto } from '../helpers/moto.js';
import { type Answer, createDedupTable, type RelayStack, startRelayStack } from '../helpers/relay-stack.js';
import { type ReceivedMessage, slackLimitViolations } from '../helpers/slack-limits.js';
import { receiveAll, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const COUNT = 120;
// The shortest wait the option takes: the group closes ten seconds after the first alert.
const WAIT_SECONDS = 10;

const anomaly = JSON.parse(readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8')) as {
  metadata: Record<string, string>;
  payload: Record<string, string>;
};

// Each test has its own grouped destination (routed by account id), so they run side by side.
describe.skipIf(!moto)('an alert storm to a grouped Slack destination, through the relay and delivery-retry bundles', () => {
  let stack: RelayStack;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  const group = { group: { waitSeconds: WAIT_SECONDS } };
  // A moto_server of its own: a storm's hundreds of table writes must not queue behind the other
  // files' calls, or a join outlasts its deadline and the alert rightly goes alone.
  let own: MotoServer;
  // Each storm is sent on its own, and delivery-retry, which closes the groups, starts once every
  // storm is in. Sent side by side, the storms' table writes queue behind one another in moto
  // (one DynamoDB request at a time, the large alerts' slowest of all), so that on a busy machine
  // a join outlasts its deadline and the alert rightly goes alone; and a storm that a busy
  // machine sends slower than the group's wait would rightly end up in two groups, were the
  // group closed on time. Neither is what these tests are about; a group takes alerts until its
  // closer takes it.
  const sent = () => {
    let resolve = () => {};
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };
  const stormIn = { default: sent(), big: sent(), refusing: sent() };
  let stormsBefore: Promise<unknown> = Promise.resolve();
  /** Sends a storm after the storms before it; whether or not it goes well, the next one and the closings may go. */
  const storm = async <T>(destination: keyof typeof stormIn, send: () => Promise<T>): Promise<T> => {
    const turn = stormsBefore.then(send);
    stormsBefore = turn.catch(() => undefined);
    try {
      return await turn;
    } finally {
      stormIn[destination].resolve();
    }
  };
  beforeAll(async () => {
    own = await startMoto();
    table = await createDedupTable(own.url);
    stack = await startRelayStack(
      own.url,
      ['big', 'refusing'],
      { DEDUP_TABLE_NAME: table.name },
      { default: group, big: group, refusing: group },
    );
    // Slack's own limit: one message a second per webhook, 429 above it.
    stack.slack.setBehaviour(stack.paths['default']!, { kind: 'one_per_second' });
    void Promise.all(Object.values(stormIn).map((storm) => storm.promise)).then(() => stack.startRetrying());
  });
  afterAll(async () => {
    await stack?.stop();
    await own?.stop();
  });

  const groupItem = async (destination: string) => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name }));
    return Items.find((item) => item['id']?.S === `group#${createHash('sha256').update(destination).digest('hex')}`);
  };
  const sendAlert = (payload: Record<string, string>) =>
    stack.relay.invoke<Answer>(
      httpApiEvent({
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...anomaly, payload: { ...anomaly.payload, ...payload } }),
      }),
    );
  const postedText = (path: string) =>
    stack.slack
      .accepted(path)
      .map((r) => JSON.stringify(r.body))
      .join('\n');

  it.concurrent(`folds ${COUNT} alerts into at most 3 posts naming every alert, and forgets their text`, { timeout: 90_000 }, async () => {
    const path = stack.paths['default']!;
    // Ten at a time, as a storm arrives over a few seconds rather than in one instant.
    const answers = await storm('default', async () => {
      const sent = [];
      for (let i = 0; i < COUNT; i += 10) {
        sent.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => stack.send(`Storm alert #${i + j}`)))));
      }
      return sent;
    });
    for (const answer of answers) {
      expect(answer.statusCode).toBe(202);
      expect(JSON.parse(answer.body)).toMatchObject({ grouped: ['default'] });
    }
    expect(stack.slack.requests.filter((r) => r.path === path)).toHaveLength(0);

    const named = () => {
      const text = postedText(path);
      return Array.from({ length: COUNT }, (_, i) => i).every((i) => text.includes(`Storm alert #${i} ·`));
    };
    expect(await waitFor(named, 60_000, 200)).toBe(true);
    const posts = stack.slack.accepted(path);
    expect(posts.length).toBeLessThanOrEqual(3);
    for (const post of posts) expect(slackLimitViolations(post.body as ReceivedMessage)).toEqual([]);

    // Flushed: the group's item keeps no alert text once it is posted.
    const flushed = async () => {
      const item = await groupItem('default');
      return item?.['state']?.S === 'flushed' && item['alerts'] === undefined;
    };
    expect(await waitFor(flushed, 10_000, 200)).toBe(true);
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name }));
    expect(JSON.stringify(Items)).not.toContain(path);
    expect(stack.retry.output()).not.toContain('/services/');
    expect(stack.relay.output()).not.toContain('/services/');
  });

  it.concurrent('keeps a group of large alerts within what the table can write: the rest go alone, every alert posted', {
    timeout: 90_000,
  }, async () => {
    const path = stack.paths['big']!;
    const big = 24;
    const answers = await storm('big', async () => {
      const sent: Answer[] = [];
      for (let i = 0; i < big; i += 6) {
        sent.push(
          ...(await Promise.all(
            Array.from({ length: 6 }, (_, j) =>
              sendAlert({ title: `Big alert #${i + j}`, message: `${i + j} ${'m'.repeat(20_000)}`, account_id: 'big' }),
            ),
          )),
        );
      }
      return sent;
    });
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(1);
    // Those the group could not hold are posted on their own at once.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    const named = () => {
      const text = postedText(path);
      return Array.from({ length: big }, (_, i) => i).every((i) => new RegExp(`Big alert #${i}(?!\\d)`).test(text));
    };
    expect(await waitFor(named, 60_000, 200)).toBe(true);
    expect(stack.slack.requests.filter((r) => r.path === path && r.answeredStatus !== 200)).toEqual([]);
  });

  it.concurrent('parks each alert of a closing the chat refuses, and a redrive posts each one', { timeout: 90_000 }, async () => {
    const path = stack.paths['refusing']!;
    stack.slack.setBehaviour(path, { kind: 'error', status: 404, body: 'no_service' });
    const titles = ['Refused alert A', 'Refused alert B', 'Refused alert C'];
    await storm('refusing', async () => {
      for (const title of titles) expect((await sendAlert({ title, account_id: 'refusing' })).statusCode).toBe(202);
    });

    // Each alert waits in the dead-letter queue as its own delivery, named by destination, never by URL.
    // By message id: on a slow machine a message received early is received again once it is visible again.
    const parked = new Map<string, Awaited<ReturnType<typeof receiveAll>>[number]>();
    const allParked = async () => {
      for (const m of await receiveAll(stack.sqs, stack.queues.deadLetterQueueUrl)) parked.set(m.MessageId!, m);
      return titles.every((t) => [...parked.values()].some((m) => m.Body?.includes(t)));
    };
    expect(await waitFor(allParked, 40_000, 500)).toBe(true);
    const ours = [...parked.values()].filter((m) => titles.some((t) => m.Body?.includes(t)));
    expect(ours).toHaveLength(titles.length);
    for (const m of ours) {
      expect(JSON.parse(m.Body!)).toMatchObject({ version: 2, destination: 'refusing', lastReason: 'no_service' });
      expect(m.MessageAttributes?.['reason']?.StringValue).toBe('no_service');
      expect(m.Body).not.toContain(path);
    }

    // The webhook is fixed and the operator redrives the dead letters: each alert is posted on its own.
    stack.slack.setBehaviour(path, { kind: 'ok' });
    for (const m of ours) {
      await stack.sqs.send(new SendMessageCommand({ QueueUrl: stack.queues.deliveryQueueUrl, MessageBody: m.Body! }));
      await stack.sqs.send(new DeleteMessageCommand({ QueueUrl: stack.queues.deadLetterQueueUrl, ReceiptHandle: m.ReceiptHandle! }));
    }
    const posted = () => titles.every((t) => stack.slack.accepted(path).some((r) => JSON.stringify(r.body).includes(t)));
    expect(await waitFor(posted, 30_000, 200)).toBe(true);
    expect(stack.slack.accepted(path)).toHaveLength(titles.length);
  });
});
