import { createHmac, randomUUID } from 'node:crypto';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { triageButtons } from '../../lib/notify/slack/triage-blocks.js';
import { signTriageToken } from '../../lib/triage-link/sign.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeChat, startFakeGoogleChat } from '../helpers/chat-servers.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';

const moto = motoUrl();
const BOT_TOKEN = 'xoxb-triage-bundle-bot-token';
const SIGNING_SECRET = 'triage-bundle-signing-secret-4471';
const TRIAGE_KEY = 'triage-bundle-key-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ';
const CHANNEL = 'C0TRIAGE1';
const ANOMALY = `anomaly#${randomUUID()}#finops`;

type Answer = { statusCode: number; headers: Record<string, string>; body: string };

describe.skipIf(!moto)('the triage bundle against moto_server, a loopback Slack Web API and Google Chat', () => {
  let api: FakeSlackApi;
  let gchat: FakeChat;
  let triage: RunningBundle;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  const answers: Answer[] = [];
  const invoke = async (input: Parameters<typeof httpApiEvent>[0]) => {
    const answer = await triage.invoke<Answer>(httpApiEvent(input), { timeoutMs: 10_000 });
    answers.push(answer);
    return answer;
  };
  const item = async () => (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: ANOMALY } } }))).Item;

  beforeAll(async () => {
    [api, gchat, table] = await Promise.all([startFakeSlackApi(BOT_TOKEN), startFakeGoogleChat(), createDedupTable(moto as string)]);
    const secrets = secretsClient(moto as string);
    const configId = await createSecret(secrets, {
      auth: { method: 'none' },
      slack: { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET },
      destinations: { default: { channel: CHANNEL }, gchat: { type: 'googlechat', url: gchat.url() } },
    });
    const keyId = await createSecret(secrets, TRIAGE_KEY, 'triage-key');
    triage = await startBundle('triage', {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
      SLACK_API_URL: api.url,
    });
  });

  afterAll(async () => {
    await triage?.stop();
    await Promise.all([api?.close(), gchat?.close()]);
  });

  it('a signed click records the action on the anomaly item and edits the opening message to say who and when', async () => {
    const posted = await fetch(`${api.url.replace(/\/?$/, '/')}chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BOT_TOKEN}` },
      body: JSON.stringify({ channel: CHANNEL, text: 'EC2 spend rose', blocks: [triageButtons(ANOMALY, true)] }),
    });
    const { ts } = (await posted.json()) as { ts: string };
    await table.dynamo.send(
      new PutItemCommand({
        TableName: table.name,
        Item: { id: { S: ANOMALY }, channel: { S: CHANNEL }, ts: { S: ts }, followUps: { N: '0' } },
      }),
    );
    const payload = {
      type: 'block_actions',
      user: { id: 'U0DANA', username: 'dana' },
      actions: [{ action_id: 'triage_acknowledge', value: ANOMALY }],
      container: { channel_id: CHANNEL, message_ts: ts },
      message: { text: 'EC2 spend rose', blocks: [triageButtons(ANOMALY, true)] },
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    };

    const answer = await invoke({ method: 'POST', path: '/slack/interactions', headers, body });
    expect(answer.statusCode).toBe(200);
    const message = api.messages.find((m) => m.ts === ts);
    expect(JSON.stringify(message?.blocks)).toContain('Acknowledged by <@U0DANA>');
    expect(JSON.stringify(message?.blocks)).toContain('Reopen');
    expect((await item())?.['triage']).toEqual({ S: 'acknowledged' });

    expect((await invoke({ method: 'POST', path: '/slack/interactions', headers, body })).statusCode).toBe(401);
    const wrong = { ...headers, 'x-slack-signature': `v0=${'0'.repeat(64)}` };
    expect((await invoke({ method: 'POST', path: '/slack/interactions', headers: wrong, body })).statusCode).toBe(401);
  });

  it('the page: GET changes nothing, POST applies and posts the follow-up in the Google Chat thread, a tampered token gets 403', async () => {
    const id = `anomaly#${randomUUID()}#gchat`;
    const token = signTriageToken(
      TRIAGE_KEY,
      { a: id, d: 'gchat', t: 'RDS <b>spend</b>', c: '123456789012', k: 'cost-alert-thread' },
      Date.now(),
    );
    const get = await invoke({ method: 'GET', path: `/triage/${token}` });
    expect(get.statusCode).toBe(200);
    expect(get.body).toContain('RDS &lt;b&gt;spend&lt;/b&gt;');
    expect(get.headers['referrer-policy']).toBe('no-referrer');
    expect((await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } } }))).Item).toBeUndefined();
    expect(gchat.requests).toEqual([]);

    const post = await invoke({
      method: 'POST',
      path: `/triage/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=expected&name=%3Cscript%3EDana',
    });
    expect(post.statusCode).toBe(200);
    expect(post.body).toContain('&lt;script&gt;Dana');
    const followUp = gchat.accepted()[0];
    expect(followUp?.body).toMatchObject({
      text: expect.stringContaining('Marked expected by ‹script›Dana'),
      thread: { threadKey: 'cost-alert-thread' },
    });
    expect(followUp?.query).toContain('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    const stored = (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } } }))).Item;
    expect(stored?.['triage']).toEqual({ S: 'expected' });
    expect(stored?.['audit']?.L).toHaveLength(1);

    // The first character is all data; the last ones may carry only padding bits.
    const tampered = `${token[0] === 'e' ? 'f' : 'e'}${token.slice(1)}`;
    expect((await invoke({ method: 'POST', path: `/triage/${tampered}`, body: 'action=reopen' })).statusCode).toBe(403);
    expect(gchat.accepted()).toHaveLength(1);
  });

  it('no secret in any answer, log line or table item', async () => {
    const items = JSON.stringify(await item());
    const seen = `${triage.output()}${JSON.stringify(answers)}${items}`;
    for (const secret of [BOT_TOKEN, SIGNING_SECRET, TRIAGE_KEY]) expect(seen).not.toContain(secret);
  });
});
