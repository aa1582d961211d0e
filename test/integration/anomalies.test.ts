import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, type Poller, receiveAll, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const TOKEN = 'xoxb-4242-4242-AnomalyBotTokenSecret';
const SIGNING_SECRET = 'signing-secret-of-the-anomaly-app';
const CHANNEL = 'C0123ABCD';

interface Answer {
  statusCode: number;
  body: string;
}

const alert = (title: string, message: string, accountId = '123456789012') =>
  JSON.stringify({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
    payload: { title, message, account_id: accountId, cloud_provider_type: 'aws' },
  });

/** Everything a message Slack holds says, as one string to search. */
const shown = (value: unknown) => JSON.stringify(value);

describe.skipIf(!moto)('one living message per anomaly: the bundles against moto_server and a loopback Slack Web API', () => {
  let api: FakeSlackApi;
  let hooks: FakeSlack;
  let teams: FakeChat;
  let gchat: FakeChat;
  let dynamo: DynamoDBClient;
  let table: string;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let poller: Poller | undefined;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const answers: string[] = [];
  const send = async (body: string, fn: RunningBundle = relay) => {
    const answer = await fn.invoke<Answer>(httpApiEvent({ headers: { 'content-type': 'application/json' }, body }), { timeoutMs: 15_000 });
    answers.push(answer.body);
    return answer;
  };
  const webhookUrls = () => [hooks.url('/services/T0/B0/HOOKSECRET'), teams.url(), gchat.url()];

  beforeAll(async () => {
    api = await startFakeSlackApi(TOKEN);
    [hooks, teams, gchat] = await Promise.all([startFakeSlack(), startFakeTeams(), startFakeGoogleChat()]);
    // The table as template.yaml declares it (keys and the summaries index).
    ({ name: table, dynamo } = await createDedupTable(moto as string));
    queues = await createQueues(sqs);
    const secretId = await createSecret(secretsClient(moto as string), {
      auth: { method: 'none' },
      slack: { botToken: TOKEN, signingSecret: SIGNING_SECRET },
      destinations: {
        default: { channel: CHANNEL, mention: '<!here>' },
        hook: { url: hooks.url('/services/T0/B0/HOOKSECRET') },
        teams: { type: 'teams', url: teams.url() },
        gchat: { type: 'googlechat', url: gchat.url() },
      },
      routes: ['hook', 'teams', 'gchat'].map((name) => ({ when: { accountId: [name] }, to: [name] })),
    });
    const env = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: secretId,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      DEDUP_TABLE_NAME: table,
      DEDUP_WINDOW_SECONDS: '3600',
      SLACK_API_URL: api.url,
      POST_TIMEOUT_MS: '2000',
    };
    [relay, retry] = await Promise.all([startBundle('webhook-relay', env), startBundle('delivery-retry', env)]);
  });

  afterAll(async () => {
    await poller?.stop();
    await Promise.all([relay?.stop(), retry?.stop()]);
    await Promise.all([api?.close(), hooks?.close(), teams?.close(), gchat?.close()]);
  });

  it('opening, follow-up (edit and thread reply), identical re-send, whitespace-only title change, another anomaly', async () => {
    expect((await send(alert('EC2 spend rose', 'up 340%'))).statusCode).toBe(200);
    expect(api.messages).toHaveLength(1);
    const [opening] = api.messages;
    expect(opening?.text).toMatch(/^<!here> /);

    expect((await send(alert('EC2 spend rose', 'now up 420%'))).statusCode).toBe(200);
    expect(api.messages).toHaveLength(1);
    expect(opening?.edits).toBe(1);
    expect(shown(opening?.blocks)).toContain('now up 420%');
    expect(shown(opening?.blocks)).toContain('Updated 1 time');
    expect(opening?.replies.map((r) => shown(r.blocks))).toEqual([expect.stringContaining('now up 420%')]);

    const calls = api.calls.length;
    const again = await send(alert('EC2 spend rose', 'now up 420%'));
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: ['default'] });
    expect(api.calls).toHaveLength(calls);

    expect((await send(alert('EC2   spend\trose ', 'now up 500%'))).statusCode).toBe(200);
    expect(api.messages).toHaveLength(1);
    expect(opening?.edits).toBe(2);
    expect(shown(opening?.blocks)).toContain('Updated 2 times');
    expect(opening?.replies).toHaveLength(2);

    expect((await send(alert('S3 spend rose', 'up 90%'))).statusCode).toBe(200);
    expect(api.messages).toHaveLength(2);
    expect(opening?.edits).toBe(2);
  });

  it('throttled (429 with Retry-After): queued, then delivered once by delivery-retry; a follow-up meanwhile waits for it', async () => {
    api.queue('chat.postMessage', { kind: 'rate_limited', retryAfterSeconds: 1 });
    expect((await send(alert('Lambda spend rose', 'up 80%'))).statusCode).toBe(202);
    const waiting = await send(alert('Lambda spend rose', 'up 95%'));
    expect(waiting.statusCode).toBe(503);
    expect(JSON.parse(waiting.body)).toMatchObject({ in_progress: ['default'] });

    poller = startPoller(sqs, queues, retry);
    const posted = () => api.messages.filter((m) => shown(m.blocks).includes('Lambda spend rose'));
    expect(await waitFor(() => posted().length === 1, 20_000)).toBe(true);
    expect(await waitFor(() => poller!.deleted.length >= 1, 10_000)).toBe(true);
    expect(posted()).toHaveLength(1);

    expect((await send(alert('Lambda spend rose', 'up 95%'))).statusCode).toBe(200);
    expect(posted()).toHaveLength(1);
    expect(posted()[0]?.edits).toBe(1);
    expect(posted()[0]?.replies).toHaveLength(1);
  });

  it('refusals are parked with the reason, and the answer names the destination', async () => {
    api.queue('chat.postMessage', { kind: 'error', error: 'channel_not_found' });
    const answer = await send(alert('RDS spend rose', 'up 60%'));
    expect(answer.statusCode).toBe(502);
    expect(answer.body).toContain('channel_not_found');
    const parked = await receiveAll(sqs, queues.deadLetterQueueUrl);
    expect(parked.map((m) => m.MessageAttributes?.['reason']?.StringValue)).toContain('channel_not_found');
    answers.push(...parked.map((m) => m.Body ?? ''));
  });

  it('an opening message that was deleted: the follow-up becomes a new opening, which later follow-ups edit', async () => {
    expect((await send(alert('EBS spend rose', 'up 30%'))).statusCode).toBe(200);
    const first = api.messages.find((m) => shown(m.blocks).includes('EBS spend rose'));
    api.deleteMessage(first!.ts);
    expect((await send(alert('EBS spend rose', 'up 35%'))).statusCode).toBe(200);
    const now = api.messages.filter((m) => shown(m.blocks).includes('EBS spend rose'));
    expect(now).toHaveLength(1);
    expect(now[0]?.text).toMatch(/Update: /);
    expect((await send(alert('EBS spend rose', 'up 40%'))).statusCode).toBe(200);
    expect(now[0]?.edits).toBe(1);
    expect(now[0]?.replies).toHaveLength(1);
  });

  it('a table outage costs no alert: delivered (at least once)', async () => {
    const env = { ...awsEnvironment(moto as string), DEDUP_TABLE_NAME: 'no-such-table', SLACK_API_URL: api.url };
    const secret = await createSecret(secretsClient(moto as string), {
      auth: { method: 'none' },
      slack: { botToken: TOKEN },
      destinations: { default: { channel: CHANNEL } },
    });
    const outage = await startBundle('webhook-relay', { ...env, RELAY_CONFIG_SECRET_ID: secret });
    try {
      expect((await send(alert('NAT spend rose', 'up 10%'), outage)).statusCode).toBe(200);
      expect((await send(alert('NAT spend rose', 'up 12%'), outage)).statusCode).toBe(200);
      expect(api.messages.filter((m) => shown(m.blocks).includes('NAT spend rose'))).toHaveLength(2);
      expect(outage.logRecords()).toContainEqual(expect.objectContaining({ reason: 'dedup_unavailable' }));
      expect(outage.output()).not.toContain(TOKEN);
    } finally {
      await outage.stop();
    }
  });

  it('Google Chat follow-ups reply in the same thread; Teams and Slack webhook follow-ups are marked as updates', async () => {
    for (const [account, message] of [
      ['gchat', 'up 1%'],
      ['gchat', 'up 2%'],
      ['teams', 'up 1%'],
      ['teams', 'up 2%'],
      ['hook', 'up 1%'],
      ['hook', 'up 2%'],
    ] as const) {
      expect((await send(alert('CloudFront spend rose', message, account))).statusCode).toBe(200);
    }
    const [gOpen, gFollow] = gchat.accepted().map((r) => r.body as { thread: { threadKey: string }; text: string });
    expect(gFollow?.thread.threadKey).toBe(gOpen?.thread.threadKey);
    expect(gchat.accepted().every((r) => r.query.includes('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD'))).toBe(true);
    expect(gOpen?.text).not.toMatch(/Update/);
    expect(gFollow?.text).toMatch(/Update: /);

    const [tOpen, tFollow] = teams.accepted().map((r) => shown(r.body));
    expect(tOpen).not.toContain('Update 1 of an anomaly');
    expect(tFollow).toContain('Update 1 of an anomaly first seen {{DATE(');

    const [hOpen, hFollow] = hooks.accepted().map((r) => r.body as { text: string; blocks: unknown[] });
    expect(hOpen?.text).not.toMatch(/^Update/);
    expect(hFollow?.text).toMatch(/^Update: /);
    expect(shown(hFollow?.blocks)).toContain('Update 1 of an anomaly first seen <!date^');
  });

  it('the token, signing secret and webhook URLs are in no log, answer, queue message or table item', async () => {
    const { Items = [] } = await dynamo.send(new ScanCommand({ TableName: table }));
    const everything = [relay.output(), retry.output(), ...answers, ...(poller?.bodies ?? []), JSON.stringify(Items)].join('\n');
    expect(everything.length).toBeGreaterThan(1000);
    for (const secret of [TOKEN, SIGNING_SECRET, 'HOOKSECRET', 'GCHAT-TOKEN-SECRET', ...webhookUrls()]) {
      expect(everything).not.toContain(secret);
    }
    expect(api.calls.every((c) => c.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });
});
