// Issue 41's "Done when", through the built bundles: the relay puts the link of the account's
// cost-trend picture in every kind's message (and calls the platform for none of it); the triage
// function draws that picture from the platform's daily cost, once per account and day, in time
// even when the platform hangs; "Expected" becomes one cost event on the platform, whichever link
// or button marked it, a reopen deletes it, and a write the platform refused waits on the retry
// queue for delivery-retry, which writes it once. The platform, the chats, PagerDuty and Jira are
// loopback fakes; the table, queues, secrets and the event bus are moto_server's.
import { createHmac, randomUUID } from 'node:crypto';
import { GetItemCommand, PutItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { type FakeJira, startFakeJira } from '../helpers/jira-server.js';
import { type FakePagerDuty, startFakePagerDuty } from '../helpers/pagerduty-server.js';
import { decodePng, type Image } from '../helpers/png.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, receiveAll, sqsClient, type TestQueues, toEvent, waitFor } from '../helpers/sqs.js';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../helpers/webhook-receiver.js';

const moto = motoUrl();
const DOMAIN = 'cost-alerts.loop.example';
const ORIGIN = `https://${DOMAIN}`;
const TRIAGE_KEY = 'platform-loop-triage-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const BOT_TOKEN = 'xoxb-platform-loop-BOT-SECRET';
const SIGNING_SECRET = 'platform-loop-SIGNING-SECRET-5531';
const CHANNEL = 'C0LOOP1AB';
const HOOK = '/services/T0/B0/LOOP-HOOK-SECRET';
const PD_KEY = 'R0LOOP0SECRET0KEY0123456789abcde';
const JIRA_EMAIL = 'finops-bot@loop.example';
const JIRA_TOKEN = 'ATATT3xLOOP-JIRA-TOKEN-SECRET';
const HOOKS_SECRET = `whsec_${Buffer.from('LOOP-WEBHOOK-SIGNING-SECRET-0123456789').toString('base64')}`;
/** Cloud accounts: two the directory knows under one payer, one under a payer whose platform hangs, one it does not know. */
const ACCOUNTS = { a: '410000000001', b: '410000000002', hung: '410000000003', unknown: '410000000004' } as const;
const PAYERS = { main: 12345, hanging: 67890 } as const;
const ACCOUNT_NAME = 'Production payer';

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The alerts are about yesterday (UTC): the picture shows the 30 days up to it, not up to today. */
const DAY = dayOf(Date.now() - 86_400_000);
const DAYS = Array.from({ length: 30 }, (_, i) => dayOf(Date.parse(`${DAY}T00:00:00Z`) - (29 - i) * 86_400_000));
const CHART_LINK = new RegExp(`^${ORIGIN.replaceAll('.', '\\.')}/chart/[\\w-]+\\.[\\w-]+$`);
const LINKS = (route: 'chart' | 'triage') => new RegExp(`${ORIGIN.replaceAll('.', '\\.')}/${route}/[\\w.%-]+`, 'g');
const DESTINATIONS = ['default', 'app', 'teams', 'gchat', 'pager', 'jira', 'bus', 'hooks'] as const;

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

const alert = (title: string, account: string) => ({
  metadata: { object_type: 'anomaly_alert', timestamp: `${DAY}T09:00:00Z` },
  payload: { title, message: 'Daily cost rose 212%', account_id: account, account_name: ACCOUNT_NAME, cloud_provider_type: 'aws' },
});

/** As API Gateway hands a request to a function, on the stack's own domain. */
const onDomain = (input: EventInput) => {
  const built = httpApiEvent(input);
  return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN } };
};

/** Every object within a JSON value, depth first. */
function objects(value: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(value)) return value.flatMap(objects);
  if (typeof value !== 'object' || value === null) return [];
  return [value as Record<string, unknown>, ...Object.values(value).flatMap(objects)];
}

const linksIn = (value: unknown, route: 'chart' | 'triage') => [...new Set(JSON.stringify(value ?? null).match(LINKS(route)) ?? [])];

/** What a picture's link says: its token's body (the MAC is the triage function's to check). */
const chartFields = (link: string) =>
  JSON.parse(Buffer.from(link.slice(`${ORIGIN}/chart/`.length).split('.')[0] as string, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;

/** The rows of a picture between its subtitle and its day labels: the bars and their gridlines, never the account's name. */
function plotRows(image: Image): string {
  const rows: number[] = [];
  for (let y = Math.round(image.height * 0.3); y < Math.round(image.height * 0.84); y += 3)
    for (let x = 0; x < image.width; x += 3) rows.push(...image.pixel(x, y));
  return Buffer.from(rows).toString('base64');
}

const near = ([r, g, b]: number[], [R, G, B]: number[]) => Math.abs(r! - R!) + Math.abs(g! - G!) + Math.abs(b! - B!) < 24;
const countColour = (image: Image, colour: number[]) => {
  let n = 0;
  for (let y = 0; y < image.height; y += 2) for (let x = 0; x < image.width; x += 2) if (near(image.pixel(x, y), colour)) n++;
  return n;
};
const MARKED = [0xd9, 0x48, 0x0f];

describe.skipIf(!moto)('the platform in the loop: relay, triage and delivery-retry bundles with the cost platform', () => {
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const bus = `loop-${randomUUID().slice(0, 8)}`;
  let platform: FakePlatform;
  let slack: FakeSlack;
  let api: FakeSlackApi;
  let teams: FakeChat;
  let gchat: FakeChat;
  let pagerDuty: FakePagerDuty;
  let jira: FakeJira;
  let hooks: FakeWebhookReceiver;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let busQueueUrl: string;
  /** The retry queues' own host: what every function sends to them passes through it, and is seen. */
  let queueHost: AwsProxy;
  let relay: RunningBundle;
  let plain: RunningBundle;
  let triage: RunningBundle;
  let retry: RunningBundle;
  const answers: unknown[] = [];
  const busEvents: Array<{ detail: Record<string, unknown> & { payload?: { title?: string } } }> = [];
  /** The picture links the trend relay posted for account a, by destination. */
  const pictures = new Map<string, string>();

  const send = async (to: RunningBundle, title: string, account: string) => {
    const answer = await to.invoke<Answer>(
      onDomain({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(alert(title, account)) }),
      { timeoutMs: 15_000 },
    );
    answers.push(answer);
    return answer;
  };
  const atTriage = async (input: EventInput) => {
    const answer = await triage.invoke<Answer>(onDomain(input), { timeoutMs: 10_000 });
    answers.push(answer);
    return answer;
  };
  const picture = (link: string) => atTriage({ method: 'GET', path: link.slice(ORIGIN.length) });
  const form = (link: string, body: string) =>
    atTriage({
      method: 'POST',
      path: link.slice(ORIGIN.length),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
  const busEventsAbout = async (title: string) => {
    for (const m of await receiveAll(sqs, busQueueUrl)) busEvents.push(JSON.parse(m.Body ?? '{}') as (typeof busEvents)[number]);
    return busEvents.filter((e) => e.detail.payload?.title === title);
  };
  /**
   * What every chat, PagerDuty, Jira, the bus and the webhook receiver were sent, in one list, each
   * body the same object on every call (a test tells new posts from earlier ones by identity): a
   * webhook's as its receiver verified it, or as it came where verification refused it.
   */
  const everythingPosted = () => [
    ...slack.requests.map((r) => r.body),
    ...api.calls.map((c) => c.body),
    ...teams.requests.map((r) => r.body),
    ...gchat.requests.map((r) => r.body),
    ...pagerDuty.requests.map((r) => r.body),
    ...jira.requests.map((r) => r.body),
    ...busEvents,
    ...hooks.received('loop').map((r) => r.event ?? r.body),
  ];
  const costAndUsage = () => platform.requests.filter((r) => r.path === '/api/v2/invoices/cost-and-usage');
  const eventWrites = () => platform.requests.filter((r) => r.path === '/api/v1/users/events' && r.method === 'POST');
  /** The events the platform holds (about one alert's title, when given). */
  const liveEvents = (title?: string) =>
    [...platform.events.values()].filter((e) => !e.deleted && (title === undefined || e.body['title'] === `Expected: ${title}`));
  /** The cost-event jobs any function put on the retry queue, about one alert's title. */
  const queuedEvents = (title: string) =>
    queueHost
      .sent('AmazonSQS.SendMessage')
      .filter((m) => JSON.stringify(m).includes('cost_event'))
      .filter((m) => (JSON.parse(String(m['MessageBody'])) as { subject?: { title?: string } }).subject?.title === title);

  beforeAll(async () => {
    const aws = { endpoint: moto, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
    const eventBridge = new EventBridgeClient(aws);
    let busQueue: { QueueUrl?: string };
    // Queues made through it have it in their URL, and the SDK sends each call on a queue to its URL's host.
    queueHost = await startAwsProxy(moto as string);
    [platform, slack, api, teams, gchat, pagerDuty, jira, hooks, table, queues, busQueue] = await Promise.all([
      startFakePlatform(),
      startFakeSlack(),
      startFakeSlackApi(BOT_TOKEN),
      startFakeTeams(),
      startFakeGoogleChat(),
      startFakePagerDuty(),
      startFakeJira({ [JIRA_EMAIL]: JIRA_TOKEN }),
      startWebhookReceiver({ loop: HOOKS_SECRET }),
      createDedupTable(moto as string),
      createQueues(sqsClient(queueHost.url), 30),
      sqs.send(new CreateQueueCommand({ QueueName: `loop-bus-${randomUUID().slice(0, 8)}` })),
      eventBridge.send(new CreateEventBusCommand({ Name: bus })),
    ]);
    busQueueUrl = busQueue.QueueUrl as string;
    const busQueueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: busQueueUrl, AttributeNames: ['QueueArn'] })))
      .Attributes?.['QueueArn'];
    await eventBridge.send(
      new PutRuleCommand({ Name: 'cost-alerts', EventBusName: bus, EventPattern: JSON.stringify({ source: ['cost-alert-relay'] }) }),
    );
    await eventBridge.send(new PutTargetsCommand({ Rule: 'cost-alerts', EventBusName: bus, Targets: [{ Id: 'queue', Arn: busQueueArn }] }));

    // Account a's cost is flat with a spike on the alert's day; b's climbs; the hung account's is never read.
    platform.dailyCosts.set(ACCOUNTS.a, new Map(DAYS.map((d, i) => [d, d === DAY ? 480 : 100 + (i % 3) * 4])));
    platform.dailyCosts.set(ACCOUNTS.b, new Map(DAYS.map((d, i) => [d, String(20 + i * 7.5)])));
    platform.dailyCosts.set(ACCOUNTS.hung, new Map(DAYS.map((d) => [d, 10])));
    // The owner directory as directory-sync writes it: each account's cost centers, per payer.
    const readAt = Math.floor(Date.now() / 1000);
    const owner = (account: string, payer: number) => {
      const costCenters = { L: [{ M: { id: { S: 'cc-100' }, name: { S: 'Data platform' } } }] };
      return table.dynamo.send(
        new PutItemCommand({
          TableName: table.name,
          Item: {
            id: { S: `owner#${account}` },
            costCenters,
            readAt: { N: String(readAt) },
            expiresAt: { N: String(readAt + 3 * 86_400) },
            payers: { M: { [String(payer)]: { M: { costCenters, readAt: { N: String(readAt) } } } } },
          },
        }),
      );
    };
    const secrets = secretsClient(moto as string);
    const destinations = {
      default: { url: slack.url(HOOK) },
      app: { channel: CHANNEL },
      teams: { type: 'teams', url: teams.url() },
      gchat: { type: 'googlechat', url: gchat.url() },
      pager: { type: 'pagerduty', routingKey: PD_KEY },
      jira: { type: 'jira', site: jira.url, project: 'FIN', email: JIRA_EMAIL, apiToken: JIRA_TOKEN },
      bus: { type: 'eventbridge', eventBus: bus },
      hooks: { type: 'webhook', url: hooks.url('loop'), secret: HOOKS_SECRET },
    };
    const config = {
      auth: { method: 'none' },
      slack: { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET },
      destinations,
      routes: [
        { when: { accountId: [ACCOUNTS.a] }, to: [...DESTINATIONS] },
        { when: { accountId: [ACCOUNTS.b] }, to: ['default', 'gchat'] },
      ],
    };
    const [withPlatform, withoutPlatform, keyId, loginId] = await Promise.all([
      createSecret(secrets, { ...config, platform: { trend: true, costEvents: true } }),
      createSecret(secrets, config),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
      createSecret(secrets, { username: platform.username, password: platform.password }, 'platform-login'),
      owner(ACCOUNTS.a, PAYERS.main),
      owner(ACCOUNTS.b, PAYERS.main),
      owner(ACCOUNTS.hung, PAYERS.hanging),
    ]);
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: withPlatform,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      SLACK_API_URL: api.url,
      PAGERDUTY_EVENTS_URL: pagerDuty.url,
      // The relay is given the platform's login too (the stack does not): whether it calls the platform is its code's choice.
      COST_API_BASE_URL: platform.url,
      COST_API_CREDENTIALS_SECRET_ID: loginId,
    };
    const posting = { ...shared, DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl, POST_TIMEOUT_MS: '3000' };
    [relay, plain, triage, retry] = await Promise.all([
      startBundle('webhook-relay', posting),
      startBundle('webhook-relay', { ...posting, RELAY_CONFIG_SECRET_ID: withoutPlatform }),
      startBundle('triage', shared),
      startBundle('delivery-retry', posting),
    ]);
  });

  afterAll(async () => {
    await Promise.all([relay?.stop(), plain?.stop(), triage?.stop(), retry?.stop()]);
    await Promise.all([
      queueHost?.close(),
      platform?.close(),
      slack?.close(),
      api?.close(),
      teams?.close(),
      gchat?.close(),
      pagerDuty?.close(),
      jira?.close(),
      hooks?.close(),
    ]);
  });

  it('every kind’s message carries the picture’s link on the delivery’s origin; the relay calls the platform for none', async () => {
    const title = 'EC2 spend rose 212%';
    const answer = await send(relay, title, ACCOUNTS.a);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ delivered: [...DESTINATIONS] });
    expect(await waitFor(async () => (await busEventsAbout(title)).length === 1, 10_000)).toBe(true);

    const [webhook] = slack.accepted(HOOK);
    pictures.set('default', String(objects(webhook?.body).find((b) => b['type'] === 'image')?.['image_url']));
    const appMessage = api.messages.find((m) => m.channel === CHANNEL);
    pictures.set('app', String(objects(appMessage?.blocks).find((b) => b['type'] === 'image')?.['image_url']));
    const [card] = teams.accepted();
    pictures.set('teams', String(objects(card?.body).find((e) => e['type'] === 'Image')?.['url']));
    const [chatMessage] = gchat.accepted();
    pictures.set('gchat', String((objects(chatMessage?.body).find((w) => 'image' in w)?.['image'] as { imageUrl?: string })?.imageUrl));
    const [page] = pagerDuty.accepted(PD_KEY);
    const images = page?.body['images'] as Array<{ src: string; alt: string }> | undefined;
    expect(images).toEqual([{ src: expect.any(String), alt: expect.stringMatching(/\S/) }]);
    pictures.set('pager', String(images?.[0]?.src));
    const [issue] = [...jira.issues.values()];
    const trendLink = objects(issue?.fields['description']).find((n) => n['type'] === 'text' && n['text'] === 'Cost trend');
    pictures.set('jira', String((trendLink?.['marks'] as Array<{ attrs?: { href?: string } }> | undefined)?.[0]?.attrs?.href));
    pictures.set('bus', String((await busEventsAbout(title))[0]?.detail['chartUrl']));
    const [hooked] = hooks.received('loop');
    expect(hooked?.refusal).toBeUndefined();
    pictures.set('hooks', String(hooked?.event?.data['chartUrl']));

    expect([...pictures.keys()].sort()).toEqual([...DESTINATIONS].sort());
    for (const [destination, link] of pictures) {
      expect(link, destination).toMatch(CHART_LINK);
      expect(chartFields(link), destination).toMatchObject({ a: ACCOUNTS.a, d: DAY, n: ACCOUNT_NAME });
    }
    // Each message has the one picture, where its kind shows it, and no other.
    for (const body of [webhook?.body, appMessage?.blocks, card?.body, chatMessage?.body, page?.body, issue?.fields, hooked?.event])
      expect(linksIn(body, 'chart')).toHaveLength(1);
    expect(platform.requests).toEqual([]);
  });

  it('no picture for an account the directory does not know, nor from a configuration without `platform`', async () => {
    const before = new Set(everythingPosted());
    expect((await send(relay, 'NAT gateway spend rose', ACCOUNTS.unknown)).statusCode).toBe(200);
    const title = 'EC2 spend rose, told without a picture';
    const answer = await send(plain, title, ACCOUNTS.a);
    expect(JSON.parse(answer.body)).toMatchObject({ delivered: [...DESTINATIONS] });
    expect(await waitFor(async () => (await busEventsAbout(title)).length === 1, 10_000)).toBe(true);
    const posted = everythingPosted().filter((body) => !before.has(body));
    // Both were posted, with their triage links: only the picture is missing.
    expect(posted.length).toBeGreaterThanOrEqual(1 + DESTINATIONS.length);
    expect(linksIn(posted, 'triage').length).toBeGreaterThanOrEqual(2);
    expect(linksIn(posted, 'chart')).toEqual([]);
    expect(JSON.stringify(posted)).not.toContain('/chart/');
    expect(platform.requests).toEqual([]);
  });

  it('GET /chart/<token>: a PNG of the account’s 30 days from the platform’s documented query, read once per account and day', async () => {
    const link = pictures.get('default') as string;
    const first = await picture(link);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('image/png');
    expect(first.isBase64Encoded).toBe(true);
    const png = Buffer.from(first.body, 'base64');
    expect(png.length).toBeLessThan(200 * 1024);
    const image = decodePng(png);
    expect(image.width).toBeGreaterThanOrEqual(600);
    expect(image.height).toBeGreaterThanOrEqual(200);
    // The anomaly's day is drawn in its own colour.
    expect(countColour(image, MARKED)).toBeGreaterThan(50);

    const [call, ...more] = costAndUsage();
    expect(more).toEqual([]);
    expect(call).toMatchObject({
      method: 'GET',
      status: 200,
      query: {
        groupBy: 'linkedaccid',
        periodGranLevel: 'day',
        costType: 'cost',
        isAmortized: 'true',
        startDate: DAYS[0],
        endDate: DAY,
        'filters[linkedaccid]': ACCOUNTS.a,
      },
    });
    expect(call?.headers['apikey']).toBe(`${platform.userKey}:${PAYERS.main}:`);
    expect(platform.issuedTokens).toContain(call?.headers['authorization']);

    // The series is kept in the table beside the answer; once it is there, the same picture asks the platform no more.
    const kept = async () =>
      (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: `trend#${ACCOUNTS.a}#${DAY}` } } }))).Item !==
      undefined;
    expect(await waitFor(kept, 5_000, 50)).toBe(true);
    const again = await picture(link);
    expect(again.statusCode).toBe(200);
    expect(Buffer.from(again.body, 'base64').equals(png)).toBe(true);
    // Another kind's link to the same account and day: the same series, still no second call.
    expect((await picture(pictures.get('teams') as string)).statusCode).toBe(200);
    expect(costAndUsage()).toHaveLength(1);
  });

  it('another account’s series gives another picture; a tampered token gets 403', async () => {
    expect((await send(relay, 'S3 spend rose', ACCOUNTS.b)).statusCode).toBe(200);
    const link = linksIn(slack.accepted(HOOK).at(-1)?.body, 'chart')[0] as string;
    expect(chartFields(link)).toMatchObject({ a: ACCOUNTS.b, d: DAY });
    const [a, b] = await Promise.all([picture(pictures.get('default') as string), picture(link)]);
    expect(b.statusCode).toBe(200);
    expect(b.headers['content-type']).toBe('image/png');
    const [imageA, imageB] = [a, b].map((answer) => decodePng(Buffer.from(answer.body, 'base64')));
    expect(Buffer.from(b.body, 'base64').equals(Buffer.from(a.body, 'base64'))).toBe(false);
    // Not only the title: the bars differ.
    expect(plotRows(imageB as Image)).not.toBe(plotRows(imageA as Image));
    expect(costAndUsage().map((r) => r.query['filters[linkedaccid]'])).toEqual([ACCOUNTS.a, ACCOUNTS.b]);

    const token = link.slice(`${ORIGIN}/chart/`.length);
    // The first character is all data (`{"a":…`); the MAC no longer fits.
    const tampered = `${token[0] === 'e' ? 'f' : 'e'}${token.slice(1)}`;
    const refused = await atTriage({ method: 'GET', path: `/chart/${tampered}` });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).not.toBe('image/png');
    expect(costAndUsage()).toHaveLength(2);
  });

  it('a platform that hangs: still a 200 PNG, within 3 seconds, and the call it hung on given up', async () => {
    expect((await send(relay, 'Lambda spend rose', ACCOUNTS.hung)).statusCode).toBe(200);
    const link = linksIn(slack.accepted(HOOK).at(-1)?.body, 'chart')[0] as string;
    expect(chartFields(link)).toMatchObject({ a: ACCOUNTS.hung });
    platform.setBehaviour('costAndUsage', { kind: 'hang' }, PAYERS.hanging);
    try {
      const started = performance.now();
      const answer = await picture(link);
      const elapsed = performance.now() - started;
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe('image/png');
      const image = decodePng(Buffer.from(answer.body, 'base64'));
      expect(image.width).toBeGreaterThanOrEqual(600);
      // The contract's promise: a chat waits about three seconds for a picture.
      expect(elapsed).toBeLessThan(3_500);
      const hung = costAndUsage().filter((r) => r.query['filters[linkedaccid]'] === ACCOUNTS.hung);
      expect(hung).toHaveLength(1);
      expect(await waitFor(() => hung[0]?.closed === true, 5_000, 50)).toBe(true);
    } finally {
      platform.setBehaviour('costAndUsage', { kind: 'normal' }, PAYERS.hanging);
    }
  });

  // Fails while lib/cost-events/dynamodb.ts names the attribute `uuid`, a DynamoDB reserved word, in its expressions
  // (ValidationException: no event is ever written), and while its isConditionFailure is an instanceof check on a class
  // the lazy-cost-events bundle has a copy of (an event found written is an error, and its job waits on the queue).
  it('Expected writes one cost event, whichever link or button marked the anomaly; Reopen deletes it', async () => {
    const title = 'EC2 spend rose 212%';
    const [chatLink] = linksIn(gchat.accepted()[0]?.body, 'triage');
    const [teamsLink] = linksIn(teams.accepted()[0]?.body, 'triage');
    expect(chatLink).toBeDefined();
    expect(teamsLink).toBeDefined();
    // The anomaly was first seen three days before it is marked: the event's day is that one, not today's.
    const firstSeen = Math.floor(Date.now() / 1000) - 3 * 86_400;
    const chatAnomaly = anomalyRecordId(webhookMessageSchema.parse(alert(title, ACCOUNTS.a)), 'gchat');
    await table.dynamo.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: { id: { S: chatAnomaly } },
        UpdateExpression: 'SET firstSeen = :t',
        ConditionExpression: 'attribute_exists(firstSeen)',
        ExpressionAttributeValues: { ':t': { N: String(firstSeen) } },
      }),
    );

    const note = 'Quarter-end batch, agreed with finance';
    const marked = await form(chatLink as string, `action=expected&name=Dana&note=${encodeURIComponent(note)}`);
    expect(marked.statusCode).toBe(200);
    expect(liveEvents(title)).toHaveLength(1);
    const [event] = liveEvents(title);
    expect(event?.accountKey).toBe(PAYERS.main);
    expect(event?.body).toMatchObject({ title: `Expected: ${title}`, date: dayOf(firstSeen * 1000), createdBy: 'Dana' });
    for (const said of ['Dana', note, 'gchat', 'Cost Alert Relay']) expect(String(event?.body['description'])).toContain(said);
    const [write] = eventWrites();
    expect(write?.headers['apikey']).toBe(`${platform.userKey}:${PAYERS.main}:`);

    // Again at the same link, at another destination's link, and with the Slack app's button: still the one event.
    expect((await form(chatLink as string, 'action=expected&name=Dana')).statusCode).toBe(200);
    expect((await form(teamsLink as string, 'action=expected&name=Lee')).statusCode).toBe(200);
    const opening = api.messages.find((m) => m.channel === CHANNEL);
    const button = objects(opening?.blocks).find((b) => b['action_id'] === 'triage_expected');
    expect(button).toBeDefined();
    const payload = {
      type: 'block_actions',
      user: { id: 'U0KIM', username: 'kim' },
      actions: [{ action_id: 'triage_expected', value: button?.['value'] }],
      container: { channel_id: CHANNEL, message_ts: opening?.ts },
      message: { text: opening?.text, blocks: opening?.blocks },
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    const click = await atTriage({
      method: 'POST',
      path: '/slack/interactions',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      },
      body,
    });
    expect(click.statusCode).toBe(200);
    expect(JSON.stringify(api.messages.find((m) => m.ts === opening?.ts)?.blocks)).toContain('Marked expected');
    expect(eventWrites()).toHaveLength(1);
    expect(liveEvents(title)).toHaveLength(1);
    // Found written, nothing left to do: no job waits on the retry queue to try it again and again.
    expect(queuedEvents(title)).toEqual([]);

    const reopened = await form(chatLink as string, 'action=reopen&name=Dana');
    expect(reopened.statusCode).toBe(200);
    expect(liveEvents(title)).toEqual([]);
    const uuid = [...platform.events].find(([, e]) => e.body['title'] === `Expected: ${title}`)?.[0];
    expect(platform.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([`/api/v1/users/events/${uuid}`]);
  });

  // Fails for the same two defects as the test above: the claim's ValidationException first; once that is fixed,
  // the duplicate delivery finds the event written, takes that for an error and stays on the queue (until parked).
  it('an events endpoint that fails: the POST still answers, the event waits on the retry queue, delivery-retry writes it once', async () => {
    const title = 'S3 spend rose';
    const anomaly = anomalyRecordId(webhookMessageSchema.parse(alert(title, ACCOUNTS.b)), 'gchat');
    const item = await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: anomaly } } }));
    const firstSeenDay = dayOf(Number(item.Item?.['firstSeen']?.N) * 1000);
    // Account b's alert went to Google Chat too: its message there, with its picture and its Triage link.
    const opening = gchat.accepted().find((r) => linksIn(r.body, 'chart').some((l) => chartFields(l)['a'] === ACCOUNTS.b));
    const [link] = linksIn(opening?.body, 'triage');
    expect(link).toBeDefined();
    const writesBefore = eventWrites().length;
    platform.setBehaviour('events', { kind: 'error', status: 503 });
    let job: Record<string, unknown> | undefined;
    try {
      const marked = await form(link as string, 'action=expected&name=Dana&note=Migration%20week');
      expect(marked.statusCode).toBe(200);
      expect(marked.body).toContain('Marked expected');
      expect(
        eventWrites()
          .slice(writesBefore)
          .map((r) => r.status),
      ).toEqual([503]);
      // On the queue, held back a little (the platform was just down): what the triage function sent there.
      const sent = queuedEvents(title);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({
        QueueUrl: queues.deliveryQueueUrl,
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'cost_event' } },
      });
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queues.deliveryQueueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
      );
      expect(Number(Attributes['ApproximateNumberOfMessagesDelayed'])).toBeGreaterThanOrEqual(1);
      job = JSON.parse(String(sent[0]?.['MessageBody'])) as Record<string, unknown>;
      expect(job).toMatchObject({
        kind: 'cost_event',
        change: 'write',
        subject: { title, destination: 'gchat', by: 'Dana', note: 'Migration week', day: firstSeenDay },
      });
    } finally {
      platform.setBehaviour('events', { kind: 'normal' });
    }
    expect(liveEvents(title)).toEqual([]);

    // The platform is back. The message as the event source mapping hands it over (its delay is SQS's to keep), then once more.
    const message = {
      MessageId: randomUUID(),
      ReceiptHandle: `loop-${randomUUID()}`,
      Body: JSON.stringify(job),
      Attributes: { ApproximateReceiveCount: '1' },
    };
    const first = await retry.invoke<{ batchItemFailures: unknown[] }>(toEvent([message], queues.deliveryQueueArn), { timeoutMs: 120_000 });
    expect(first).toEqual({ batchItemFailures: [] });
    expect(liveEvents(title)).toHaveLength(1);
    expect(liveEvents(title)[0]?.body).toMatchObject({ title: `Expected: ${title}`, date: firstSeenDay, createdBy: 'Dana' });
    const duplicate = { ...message, Attributes: { ApproximateReceiveCount: '2' } };
    const second = await retry.invoke<{ batchItemFailures: unknown[] }>(toEvent([duplicate], queues.deliveryQueueArn), {
      timeoutMs: 120_000,
    });
    expect(second).toEqual({ batchItemFailures: [] });
    expect(liveEvents(title)).toHaveLength(1);
    expect(
      eventWrites()
        .slice(writesBefore)
        .map((r) => r.status),
    ).toEqual([503, 201]);
  });

  // Fails while errorReason (lib/shared/errors.ts) checks instanceof ReasonedError: the platform client's error comes from
  // the lazy-cost-events bundle's own copy of the class, so the reason logged is its minified class name ("F").
  it('the log says why a cost event waits on the queue: the platform client’s reason, not a class name', () => {
    const waiting = triage.logRecords().filter((r) => r['message'] === 'cost event not done in time; it waits on the retry queue');
    expect(waiting.at(-1)).toMatchObject({ change: 'write', reason: 'platform_unavailable' });
  });

  it('no secret in any answer, log line, queue message, table item or post', async () => {
    const queued = [...(await receiveAll(sqs, queues.deliveryQueueUrl)), ...(await receiveAll(sqs, queues.deadLetterQueueUrl))].map(
      (m) => m.Body,
    );
    const sentToQueues = queueHost.sent('AmazonSQS.SendMessage');
    const items = (await table.dynamo.send(new ScanCommand({ TableName: table.name }))).Items;
    const pngs = answers
      .filter((a): a is Answer => (a as Answer).isBase64Encoded === true)
      .map((a) => Buffer.from(a.body, 'base64').toString('latin1'));
    const seen = [
      JSON.stringify(answers),
      ...pngs,
      relay.output(),
      plain.output(),
      triage.output(),
      retry.output(),
      JSON.stringify(queued),
      JSON.stringify(sentToQueues),
      JSON.stringify(items),
    ].join('\n');
    expect(triage.output()).toContain('cost event');
    const tokens = platform.issuedTokens.flatMap((t) => [t, t.split('.')[2] as string]);
    expect(tokens.length).toBeGreaterThan(0);
    // The platform's login and the triage key reach no one, not even the chats; a destination's own
    // credentials reach only it (a PagerDuty event carries its routing key by design).
    const platformSecrets = [platform.password, platform.userKey, ...tokens, TRIAGE_KEY];
    const destinationSecrets = [
      BOT_TOKEN,
      SIGNING_SECRET,
      'LOOP-HOOK-SECRET',
      'TEAMS-SIG-SECRET',
      'GCHAT-KEY-SECRET',
      'GCHAT-TOKEN-SECRET',
      PD_KEY,
      JIRA_TOKEN,
      HOOKS_SECRET.slice('whsec_'.length),
    ];
    for (const secret of platformSecrets)
      expect(`${seen}\n${JSON.stringify(everythingPosted())}`, secret.slice(0, 6)).not.toContain(secret);
    for (const secret of destinationSecrets) expect(seen, secret.slice(0, 6)).not.toContain(secret);
  });
});
