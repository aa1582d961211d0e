import { createHmac } from 'node:crypto';
import { type AttributeValue, DeleteItemCommand, GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type ChatRequest, type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { grantedActions, loadTemplate } from '../helpers/cloudformation.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlackApi, type StoredMessage, startFakeSlackApi } from '../helpers/slack-api-server.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, type Poller, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const BOT_TOKEN = 'xoxb-triage-loop-bot-token-5150';
const SIGNING_SECRET = 'triage-loop-signing-secret-6f2e91';
const TRIAGE_KEY = 'triage-loop-key-4c1d-abcdefghijklmnopqrstuvwxyz-0123456789';
const CHANNEL = 'C0LOOP001';
// An API's custom domain: every link must lead back to the host the alert arrived on.
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const HOOK_PATH = '/services/T0/B0/HOOKSECRET';
const RETRY_PATH = '/workflows/retry/triggers/manual/paths/invoke';
const ACCOUNT_NAME = 'Production payer';
// Each destination is routed by its own account; the Slack app is `default` and takes the rest.
const ACCOUNTS = {
  teams: '210000000001',
  gchat: '210000000002',
  hook: '210000000003',
  'teams-retry': '210000000004',
  default: '210000000009',
} as const;
type Destination = keyof typeof ACCOUNTS;
const HOSTILE_TITLE = 'EC2 spend rose <img src=x onerror=alert(1)>';
// A mention in Slack's and in Google Chat's syntax, and a Markdown link: none may come alive.
const HOSTILE_NAME = '<!channel> <users/all> [pwn](https://evil.example)';

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

const message = (title: string, text: string, destination: Destination): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-24T09:00:00Z' },
    payload: { title, message: text, account_id: ACCOUNTS[destination], account_name: ACCOUNT_NAME, cloud_provider_type: 'aws' },
  });

/** What a message says, as one string to search. */
const shown = (value: unknown) => JSON.stringify(value);

/** The "Triage" link buttons of a post, in each service's own form. */
function triageLinks(destination: Destination, body: unknown): string[] {
  if (destination === 'teams' || destination === 'teams-retry') {
    const card = (body as { attachments: Array<{ content: { actions?: Array<{ type: string; title: string; url: string }> } }> })
      .attachments[0]?.content;
    return (card?.actions ?? []).filter((a) => a.type === 'Action.OpenUrl' && a.title === 'Triage').map((a) => a.url);
  }
  if (destination === 'gchat') {
    type Button = { text: string; onClick: { openLink?: { url: string } } };
    type Widget = { buttonList?: { buttons: Button[] } };
    const cards = (body as { cardsV2: Array<{ card: { sections: Array<{ widgets: Widget[] }> } }> }).cardsV2;
    return cards
      .flatMap((c) => c.card.sections.flatMap((s) => s.widgets))
      .flatMap((w) => w.buttonList?.buttons ?? [])
      .filter((b) => b.text === 'Triage' && b.onClick.openLink)
      .map((b) => b.onClick.openLink?.url as string);
  }
  type Element = { type: string; text: { text: string }; url?: string };
  const blocks = (body as { blocks: Array<{ type: string; elements?: Element[] }> }).blocks;
  return blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? [])
    .filter((e) => e.type === 'button' && e.text.text === 'Triage' && e.url !== undefined)
    .map((e) => e.url as string);
}

/** The name as a triage line shows it: "Acknowledged by <name> at <time>". */
const nameIn = (text: string, done: string): string => {
  const found = new RegExp(`${done} by (.*?) at \\d{4}-`).exec(text);
  expect(found, `"${done} by … at" in ${text}`).not.toBeNull();
  return found?.[1] ?? '';
};

/** No live mention, tag or link of the hostile name survives; it still reads as the name typed. */
function expectInert(name: string): void {
  expect(name).not.toMatch(/[<>]/);
  expect(name).not.toContain('https://evil.example');
  expect(name).toContain('channel');
  expect(name).toContain('pwn');
}

const signedClick = (payload: Record<string, unknown>) => {
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return {
    body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    },
  };
};

describe.skipIf(!moto)('the triage loop: relay, delivery-retry and triage bundles against moto_server and loopback chats', () => {
  let api: FakeSlackApi;
  let hooks: FakeSlack;
  let teams: FakeChat;
  let gchat: FakeChat;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  /** A second container of the triage function, as Lambda runs several. */
  let secondTriage: RunningBundle;
  let poller: Poller;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const answers: Answer[] = [];
  const links: string[] = [];
  let proxies: Record<'relay' | 'delivery-retry' | 'triage', AwsProxy>;

  /** An API Gateway event as it arrives on the API's own domain. */
  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: DOMAIN.split('.')[0] as string } };
  };
  const send = async (title: string, text: string, destination: Destination) => {
    const answer = await relay.invoke<Answer>(
      event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message(title, text, destination)) }),
      { timeoutMs: 15_000 },
    );
    answers.push(answer);
    return answer;
  };
  /** Follows a link as a browser would: the triage function gets its path on the API's domain. */
  const follow = async (link: string, method: 'GET' | 'POST' = 'GET', form?: string) => {
    expect(link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const path = link.slice(ORIGIN.length);
    const input: EventInput =
      form === undefined
        ? { method, path }
        : { method, path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form };
    const answer = await triage.invoke<Answer>(event(input), { timeoutMs: 10_000 });
    answers.push(answer);
    return answer;
  };
  const postsTo = (destination: Destination): ChatRequest[] | FakeSlack['requests'] => {
    if (destination === 'teams') return teams.accepted(new URL(teams.url()).pathname);
    if (destination === 'teams-retry') return teams.accepted(RETRY_PATH);
    if (destination === 'gchat') return gchat.accepted();
    return hooks.accepted(HOOK_PATH);
  };
  /** The one Triage link of the latest post to a webhook destination. */
  const linkOfLatest = (destination: Destination) => {
    const found = triageLinks(destination, postsTo(destination).at(-1)?.body);
    expect(found).toHaveLength(1);
    links.push(...found);
    return found[0] as string;
  };
  const item = async (id: string) =>
    (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } }, ConsistentRead: true }))).Item ?? {};
  const scan = async () => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    return Items.sort((a, b) => String(a['id']?.S).localeCompare(String(b['id']?.S)));
  };
  const numberOf = (value: AttributeValue | undefined) => Number(value?.N);

  beforeAll(async () => {
    [api, hooks, teams, gchat, table, queues] = await Promise.all([
      startFakeSlackApi(BOT_TOKEN),
      startFakeSlack(),
      startFakeTeams(),
      startFakeGoogleChat(),
      createDedupTable(moto as string),
      createQueues(sqs),
    ]);
    // Each function reaches AWS through its own recording proxy: what it calls must be what its role grants.
    const [relayProxy, retryProxy, triageProxy] = await Promise.all([1, 2, 3].map(() => startAwsProxy(moto as string)));
    proxies = { relay: relayProxy as AwsProxy, 'delivery-retry': retryProxy as AwsProxy, triage: triageProxy as AwsProxy };
    const secrets = secretsClient(moto as string);
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        slack: { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET },
        destinations: {
          default: { channel: CHANNEL },
          teams: { type: 'teams', url: teams.url() },
          gchat: { type: 'googlechat', url: gchat.url() },
          hook: { url: hooks.url(HOOK_PATH) },
          'teams-retry': { type: 'teams', url: teams.url(RETRY_PATH) },
        },
        routes: (['teams', 'gchat', 'hook', 'teams-retry'] as const).map((name) => ({ when: { accountId: [ACCOUNTS[name]] }, to: [name] })),
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    // What all three functions are given, as the template sets it; the relay and delivery-retry also post and queue.
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
      SLACK_API_URL: api.url,
    };
    const env = {
      ...shared,
      AWS_ENDPOINT_URL: proxies.relay.url,
      // The shortest window the relay takes: a snooze must outlive it.
      DEDUP_WINDOW_SECONDS: '60',
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      POST_TIMEOUT_MS: '2000',
    };
    [relay, retry, triage, secondTriage] = await Promise.all([
      startBundle('webhook-relay', env),
      startBundle('delivery-retry', { ...env, AWS_ENDPOINT_URL: proxies['delivery-retry'].url }),
      startBundle('triage', { ...shared, AWS_ENDPOINT_URL: proxies.triage.url }),
      startBundle('triage', { ...shared, AWS_ENDPOINT_URL: proxies.triage.url }),
    ]);
    poller = startPoller(sqs, queues, retry);
  });

  afterAll(async () => {
    await poller?.stop();
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop(), secondTriage?.stop()]);
    await Promise.all([
      api?.close(),
      hooks?.close(),
      teams?.close(),
      gchat?.close(),
      ...Object.values(proxies ?? {}).map((p) => p.close()),
    ]);
  });

  it('Teams, Google Chat and a Slack webhook each get one Triage link to the origin; its page shows the alert escaped and changes nothing', async () => {
    for (const destination of ['teams', 'gchat', 'hook'] as const) {
      expect((await send(HOSTILE_TITLE, 'up 340%', destination)).statusCode).toBe(200);
      expect(postsTo(destination)).toHaveLength(1);
    }
    const pages = (['teams', 'gchat', 'hook'] as const).map(linkOfLatest);
    expect(new Set(pages).size).toBe(3);

    const before = await scan();
    expect(before.filter((i) => i['id']?.S?.startsWith('anomaly#'))).toHaveLength(3);
    const chatPosts = teams.requests.length + gchat.requests.length + hooks.requests.length;
    for (const [i, destination] of (['teams', 'gchat', 'hook'] as const).entries()) {
      const page = await follow(pages[i] as string);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('EC2 spend rose &lt;img src=x onerror=alert(1)&gt;');
      expect(page.body).not.toContain('<img');
      expect(page.body).toContain(`${ACCOUNT_NAME} (${ACCOUNTS[destination]})`);
      expect(page.body).toMatch(/<dd id="state">Open<\/dd>/);
    }
    expect(await scan()).toEqual(before);
    expect(teams.requests.length + gchat.requests.length + hooks.requests.length).toBe(chatPosts);
  });

  it('a snooze through the page holds the anomaly back at Google Chat until it ends, then follow-ups are posted again', async () => {
    const title = 'RDS spend rose';
    const id = anomalyRecordId(message(title, '', 'gchat'), 'gchat');
    expect((await send(title, 'up 60%', 'gchat')).statusCode).toBe(200);
    const opening = gchat.accepted().at(-1) as ChatRequest;
    const threadKey = (opening.body as { thread: { threadKey: string } }).thread.threadKey;
    const link = linkOfLatest('gchat');

    const answer = await follow(link, 'POST', `action=snooze&name=${encodeURIComponent(HOSTILE_NAME)}`);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('Snoozed for 24 h by');
    expect(answer.body).not.toContain('<!channel>');

    const snoozed = await item(id);
    expect(snoozed['triage']).toEqual({ S: 'snoozed' });
    expect(numberOf(snoozed['triageUntil']) - numberOf(snoozed['triageAt'])).toBe(24 * 3600);
    expect(snoozed['audit']?.L).toEqual([
      { M: { who: { S: snoozed['triageBy']?.S }, action: { S: 'snooze' }, at: { N: snoozed['triageAt']?.N } } },
    ]);
    // The window is a minute; the item, and with it the snooze, must last to the snooze's end.
    expect(numberOf(snoozed['expiresAt'])).toBeGreaterThanOrEqual(numberOf(snoozed['triageUntil']));

    const followUp = gchat.accepted().at(-1) as ChatRequest;
    expect(followUp).not.toBe(opening);
    expect(followUp.query).toContain('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    expect(followUp.body).toMatchObject({ thread: { threadKey } });
    expectInert(nameIn((followUp.body as { text: string }).text, 'Snoozed for 24 h'));

    const posts = gchat.requests.length;
    const held = await send(title, 'up 75%', 'gchat');
    expect(held.statusCode).toBe(200);
    expect(JSON.parse(held.body)).toMatchObject({ snoozed: ['gchat'] });
    expect(gchat.requests).toHaveLength(posts);

    const past = String(Math.floor(Date.now() / 1000) - 60);
    await table.dynamo.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: { id: { S: id } },
        UpdateExpression: 'SET triageUntil = :past',
        ExpressionAttributeValues: { ':past': { N: past } },
      }),
    );
    const after = await send(title, 'up 90%', 'gchat');
    expect(after.statusCode).toBe(200);
    expect(JSON.parse(after.body)).not.toHaveProperty('snoozed');
    expect(gchat.requests).toHaveLength(posts + 1);
    const resumed = gchat.accepted().at(-1)?.body as { text: string; thread: { threadKey: string } };
    expect(resumed.text).toMatch(/^Update: /);
    expect(resumed.thread.threadKey).toBe(threadKey);
    expect(shown(resumed)).toContain('up 90%');
  });

  it('acknowledged through the page: the short follow-up and the next update at Teams and a Slack webhook say so, the name inert', async () => {
    const title = 'S3 spend rose';
    for (const destination of ['teams', 'hook'] as const) {
      expect((await send(title, 'up 20%', destination)).statusCode).toBe(200);
      const answer = await follow(linkOfLatest(destination), 'POST', `action=acknowledge&name=${encodeURIComponent(HOSTILE_NAME)}`);
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('Acknowledged by');
      expect((await item(anomalyRecordId(message(title, '', destination), destination)))['triage']).toEqual({ S: 'acknowledged' });
    }

    const teamsPosts = postsTo('teams');
    const short = teamsPosts.at(-1)?.body;
    expectInert(nameIn(shown(short), 'Acknowledged'));
    expect(shown(short)).not.toMatch(/\[pwn\]\(/);
    const hookShort = hooks.accepted(HOOK_PATH).at(-1)?.body as { text: string };
    expect(hookShort.text).toMatch(/^Acknowledged by /);
    expectInert(nameIn(hookShort.text, 'Acknowledged'));

    expect((await send(title, 'up 45%', 'teams')).statusCode).toBe(200);
    const card = postsTo('teams').at(-1)?.body as { attachments: Array<{ content: { body: Array<{ text?: string }> } }> };
    const updateLine = card.attachments[0]?.content.body.find((b) => b.text?.startsWith('🔁 Update 1 of an anomaly'))?.text ?? '';
    expectInert(nameIn(updateLine, 'Acknowledged'));
    expect(updateLine).not.toMatch(/\[pwn\]\(/);
    expect(shown(card)).toContain('up 45%');
    expect(triageLinks('teams', card)).toHaveLength(1);

    expect((await send(title, 'up 45%', 'hook')).statusCode).toBe(200);
    const update = hooks.accepted(HOOK_PATH).at(-1)?.body as { text: string; blocks: unknown[] };
    expect(update.text).toMatch(/^Update \(acknowledged\): /);
    expect(shown(update)).not.toContain('<!channel>');
    expect(shown(update)).not.toContain('<users/all>');
    expectInert(nameIn(shown(update.blocks), 'Acknowledged'));
    expect(triageLinks('hook', update)).toHaveLength(1);
  });

  it('a Slack app opening carries the three buttons; a signed click acknowledges, and the next alert keeps the mark and "Reopen"', async () => {
    const title = 'Lambda spend rose';
    const id = anomalyRecordId(message(title, '', 'default'), 'default');
    expect((await send(title, 'up 80%', 'default')).statusCode).toBe(200);
    const opening = api.messages.find((m) => shown(m.blocks).includes(title)) as StoredMessage;
    expect(opening.channel).toBe(CHANNEL);
    type Button = { text: { text: string }; action_id: string; value: string };
    const buttons = (m: StoredMessage) =>
      (m.blocks as Array<{ type: string; elements?: Button[] }>).filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);
    // Each button's value names the anomaly (and what a cost event needs); Slack sends it back as is.
    expect(buttons(opening).map((b) => [b.text.text, b.action_id, (JSON.parse(b.value) as { a: string }).a])).toEqual([
      ['Acknowledge', 'triage_acknowledge', id],
      ['Expected', 'triage_expected', id],
      ['Snooze 24 h', 'triage_snooze', id],
    ]);
    const acknowledgeValue = buttons(opening)[0]?.value;

    const click = signedClick({
      type: 'block_actions',
      user: { id: 'U0DANA', username: 'dana' },
      container: { channel_id: opening.channel, message_ts: opening.ts },
      message: { text: opening.text, blocks: opening.blocks },
      actions: [{ action_id: 'triage_acknowledge', value: acknowledgeValue }],
    });
    const answer = await triage.invoke<Answer>(event({ method: 'POST', path: '/slack/interactions', ...click }), { timeoutMs: 10_000 });
    answers.push(answer);
    expect(answer.statusCode).toBe(200);
    expect(opening.edits).toBe(1);
    expect(shown(opening.blocks)).toMatch(/Acknowledged by <@U0DANA> at \d{4}-/);
    expect(buttons(opening).map((b) => b.text.text)).toEqual(['Reopen']);
    expect(await item(id)).toMatchObject({ triage: { S: 'acknowledged' }, triageBy: { S: 'dana' } });
    // The same signed click, captured and replayed into another container, is refused there too.
    const edits = opening.edits;
    const replayed = await secondTriage.invoke<Answer>(event({ method: 'POST', path: '/slack/interactions', ...click }), {
      timeoutMs: 10_000,
    });
    answers.push(replayed);
    expect(replayed.statusCode).toBe(401);
    expect(opening.edits).toBe(edits);
    expect((await item(id))['audit']?.L).toHaveLength(1);

    expect((await send(title, 'up 120%', 'default')).statusCode).toBe(200);
    expect(api.messages.filter((m) => shown(m.blocks).includes(title))).toHaveLength(1);
    expect(opening.edits).toBe(2);
    expect(shown(opening.blocks)).toContain('up 120%');
    expect(shown(opening.blocks)).toMatch(/Acknowledged by dana at \d{4}-/);
    expect(buttons(opening).map((b) => b.text.text)).toEqual(['Reopen']);
    expect(opening.replies).toHaveLength(1);
    expect(opening.replies[0]?.text).toMatch(/^Update \(acknowledged\): /);
    expect(shown(opening.replies[0]?.blocks)).toContain('up 120%');
  });

  it('a late click on an anomaly whose record expired holds none of its later alerts back: the next one opens it, marked after', async () => {
    const title = 'Fargate spend rose';
    const id = anomalyRecordId(message(title, '', 'default'), 'default');
    expect((await send(title, 'up 30%', 'default')).statusCode).toBe(200);
    const old = api.messages.find((m) => shown(m.blocks).includes(title)) as StoredMessage;
    // The dedup window passed and TTL removed the record; the old message still has its buttons.
    await table.dynamo.send(new DeleteItemCommand({ TableName: table.name, Key: { id: { S: id } } }));
    const clickOn = (action: string) =>
      signedClick({
        type: 'block_actions',
        user: { id: 'U0LATE', username: 'lee' },
        container: { channel_id: old.channel, message_ts: old.ts },
        message: { text: old.text, blocks: old.blocks },
        actions: [{ action_id: `triage_${action}`, value: id }],
      });
    const late = await triage.invoke<Answer>(event({ method: 'POST', path: '/slack/interactions', ...clickOn('acknowledge') }), {
      timeoutMs: 10_000,
    });
    expect(late.statusCode).toBe(200);
    expect(await item(id)).toMatchObject({ triage: { S: 'acknowledged' } });

    const next = await send(title, 'up 45%', 'default');
    expect(next.statusCode).toBe(200);
    const openings = api.messages.filter((m) => shown(m.blocks).includes(title));
    expect(openings).toHaveLength(2);
    expect(shown(openings[1]?.blocks)).toContain('up 45%');
    expect(await item(id)).toMatchObject({ triage: { S: 'acknowledged' }, ts: { S: openings[1]?.ts } });
    const then = await send(title, 'up 50%', 'default');
    expect(then.statusCode).toBe(200);
    expect(shown(openings[1]?.blocks)).toMatch(/Acknowledged by lee at \d{4}-/);
  });

  it('a Teams post that fails first is queued with its origin only, and delivery-retry posts it with the same Triage link origin', async () => {
    const title = 'NAT gateway spend rose';
    teams.queue(RETRY_PATH, { kind: 'error', status: 503, code: 'ServiceUnavailable' });
    const answer = await send(title, 'up 30%', 'teams-retry');
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ queued: ['teams-retry'] });

    expect(await waitFor(() => teams.accepted(RETRY_PATH).length === 1, 20_000)).toBe(true);
    expect(teams.requests.filter((r) => r.path === RETRY_PATH).map((r) => r.answeredStatus)).toEqual([503, 202]);
    const link = linkOfLatest('teams-retry');
    const page = await follow(link);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(title);

    const jobs = poller.bodies.filter((body) => body.includes(title));
    expect(jobs).toHaveLength(1);
    const job = JSON.parse(jobs[0] as string) as Record<string, unknown>;
    expect(job).toMatchObject({ destination: 'teams-retry', origin: ORIGIN });
    for (const absent of [
      link.slice(ORIGIN.length + '/triage/'.length),
      '/triage/',
      'http://',
      teams.url(RETRY_PATH),
      'sig=',
      TRIAGE_KEY,
    ]) {
      expect(jobs[0]).not.toContain(absent);
    }
  });

  it('every AWS call each function made is one its role in template.yaml grants', () => {
    const template = loadTemplate('template.yaml');
    const made = { relay: 'webhook-relay', 'delivery-retry': 'delivery-retry', triage: 'triage' } as const;
    for (const [key, name] of Object.entries(made) as Array<[keyof typeof made, string]>) {
      const actions = proxies[key].actions();
      expect(actions.length, name).toBeGreaterThan(0);
      const granted = grantedActions(template, name);
      expect(
        actions.filter((action) => !granted.has(action)),
        `${name} calls what its role does not grant`,
      ).toEqual([]);
    }
  });

  it('no bot token, signing secret, triage key, webhook URL or link token in any log, answer, queue message or table item', async () => {
    const items = await scan();
    const everything = [
      relay.output(),
      retry.output(),
      triage.output(),
      secondTriage.output(),
      shown(answers),
      ...poller.bodies,
      shown(items),
    ].join('\n');
    expect(triage.output()).toContain('triage action');
    expect(poller.bodies.length).toBeGreaterThan(0);
    expect(items.length).toBeGreaterThan(0);
    const urls = [teams.url(), teams.url(RETRY_PATH), gchat.url(), hooks.url(HOOK_PATH)];
    const fragments = ['TEAMS-SIG-SECRET', 'GCHAT-KEY-SECRET', 'GCHAT-TOKEN-SECRET', 'HOOKSECRET'];
    const tokens = links.map((link) => link.slice(`${ORIGIN}/triage/`.length));
    expect(tokens.length).toBeGreaterThan(0);
    for (const secret of [BOT_TOKEN, SIGNING_SECRET, TRIAGE_KEY, ...urls, ...fragments, ...tokens]) {
      expect(everything).not.toContain(secret);
    }
  });
});
