// Weekly summaries through the built bundles: the relay opens anomalies at summarised loopback
// chats (DynamoDB in moto, the table created from template.yaml's declaration), the triage
// bundle acknowledges and snoozes some, and the summary bundle posts each due destination's week.
import { type AttributeValue, GetItemCommand, PutItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { WEEKDAYS } from '../../lib/notify/options.js';
import { dueWeek } from '../../lib/summary/due.js';
import { weekItemId } from '../../lib/summary/store.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { grantedActions, loadTemplate } from '../helpers/cloudformation.js';
import { emfRecords } from '../helpers/memory-metrics.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const moto = motoUrl();
const TRIAGE_KEY = 'summary-test-key-7d1e-abcdefghijklmnopqrstuvwxyz-0123456789';
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const HOOK_PATH = '/services/T0/B0/SUMMARYHOOKSECRET';
// A zone half an hour off UTC, so that the hourly run meets its hour late, and one with daylight saving time.
const DUE_ZONE = 'Asia/Kolkata';
const LATER_ZONE = 'America/New_York';
const ACCOUNTS = { finops: '310000000001', later: '310000000002' } as const;
const HOSTILE = 'GPU spend <!channel> [x](https://evil.example) *bold*';
const TITLES = ['EC2 spend rose', 'S3 spend rose', 'RDS spend rose', HOSTILE] as const;
const NAMES = { acknowledged: 'Dana', snoozed: 'Lee' };

const scheduledEvent = {
  version: '0',
  id: 'c0ffee00-0000-4000-8000-000000000001',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/cost-alert-relay-SummaryFunctionHourly'],
  detail: {},
};

/** The weekday and hour on a zone's clock now, as a destination's `summary` names them. */
function clockIn(timeZone: string): { weekday: (typeof WEEKDAYS)[number]; hour: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long', hour: 'numeric', hourCycle: 'h23' })
      .formatToParts(new Date())
      .map((p) => [p.type, p.value]),
  );
  return { weekday: String(parts['weekday']).toLowerCase() as (typeof WEEKDAYS)[number], hour: Number(parts['hour']) };
}

const message = (title: string, text: string, destination: keyof typeof ACCOUNTS): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-24T09:00:00Z' },
    payload: { title, message: text, account_id: ACCOUNTS[destination], account_name: 'Production payer', cloud_provider_type: 'aws' },
  });

/** Every text of a Teams card, one string. */
const cardText = (body: unknown): string =>
  (body as { attachments: Array<{ content: { body: Array<{ text?: string }> } }> }).attachments[0]?.content.body
    .map((b) => b.text ?? '')
    .join('\n') ?? '';

interface Answer {
  statusCode: number;
  body: string;
}
type SummaryAnswer = { summaries: Array<{ destination: string; outcome: string; anomalies?: number }>; error?: string };

describe.skipIf(!moto)('weekly summaries: relay, triage and summary bundles against moto_server and loopback chats', () => {
  let teams: FakeChat;
  let gchat: FakeChat;
  let hooks: FakeSlack;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let relay: RunningBundle;
  let triage: RunningBundle;
  let summary: RunningBundle;
  let proxy: AwsProxy;
  let dueClock: ReturnType<typeof clockIn>;
  const answers: unknown[] = [];

  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: 'cost-alerts' } };
  };
  const send = async (title: string, text: string, destination: keyof typeof ACCOUNTS) => {
    const answer = await relay.invoke<Answer>(
      event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message(title, text, destination)) }),
      { timeoutMs: 15_000 },
    );
    answers.push(answer);
    expect(answer.statusCode).toBe(200);
  };
  /** The Triage link of the latest Teams post, followed with a form as a browser would post it. */
  const triageLatest = async (action: string, name: string) => {
    const card = teams.accepted().at(-1)?.body as { attachments: Array<{ content: { actions: Array<{ url: string }> } }> };
    const link = card.attachments[0]?.content.actions[0]?.url as string;
    expect(link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const path = link.slice(ORIGIN.length);
    const answer = await triage.invoke<Answer>(
      event({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `action=${action}&name=${name}`,
      }),
      { timeoutMs: 10_000 },
    );
    answers.push(answer);
    expect(answer.statusCode).toBe(200);
  };
  const run = async (input: unknown) => {
    const answer = await summary.invoke<SummaryAnswer>(input, { timeoutMs: 30_000 });
    answers.push(answer);
    return answer;
  };
  const item = async (id: string) =>
    (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } }, ConsistentRead: true }))).Item ?? {};
  const numberOf = (value: AttributeValue | undefined) => Number(value?.N);

  beforeAll(async () => {
    [teams, gchat, hooks, table, proxy] = await Promise.all([
      startFakeTeams(),
      startFakeGoogleChat(),
      startFakeSlack(),
      createDedupTable(moto as string),
      startAwsProxy(moto as string),
    ]);
    const due = clockIn(DUE_ZONE);
    dueClock = due;
    const later = clockIn(LATER_ZONE);
    const notDue = WEEKDAYS[(WEEKDAYS.indexOf(later.weekday) + 3) % 7] as string;
    const secrets = secretsClient(moto as string);
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations: {
          default: { url: hooks.url('/services/T0/B0/default') },
          finops: { type: 'teams', url: teams.url(), summary: { ...due, timeZone: DUE_ZONE } },
          later: { url: hooks.url(HOOK_PATH), summary: { weekday: notDue, hour: later.hour, timeZone: LATER_ZONE } },
          quiet: { type: 'googlechat', url: gchat.url(), summary: { ...clockIn('UTC') } },
        },
        routes: (['finops', 'later'] as const).map((name) => ({ when: { accountId: [ACCOUNTS[name]] }, to: [name] })),
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
    };
    [relay, triage, summary] = await Promise.all([
      // The shortest window the relay takes: a summarised anomaly must outlive it.
      startBundle('webhook-relay', { ...shared, DEDUP_WINDOW_SECONDS: '60', POST_TIMEOUT_MS: '2000' }),
      startBundle('triage', shared),
      // The summary function reaches AWS through a recording proxy: what it calls must be what its role grants.
      startBundle('summary', { ...shared, AWS_ENDPOINT_URL: proxy.url }),
    ]);

    // Four anomalies at finops (one updated once), one at later; then one acknowledged, one snoozed.
    for (const title of TITLES) await send(title, 'up 40%', 'finops');
    await send(TITLES[0], 'up 80%', 'finops');
    await triageLatest('acknowledge', NAMES.acknowledged);
    await send(TITLES[2], 'up 55%', 'finops');
    await triageLatest('snooze', NAMES.snoozed);
    await send('Lambda spend rose', 'up 10%', 'later');
  });

  afterAll(async () => {
    await Promise.all([relay?.stop(), triage?.stop(), summary?.stop()]);
    await Promise.all([teams?.close(), gchat?.close(), hooks?.close(), proxy?.close()]);
  });

  it('keeps what the summary shows on a summarised anomaly, and the item at least 8 days, whatever the window', async () => {
    const id = anomalyRecordId(message(TITLES[0], '', 'finops'), 'finops');
    const stored = await item(id);
    expect(stored).toMatchObject({ summaryOf: { S: 'finops' }, title: { S: TITLES[0] }, accountId: { S: ACCOUNTS.finops } });
    expect(stored['accountName']).toEqual({ S: 'Production payer' });
    expect(stored['origin']).toEqual({ S: ORIGIN });
    expect(numberOf(stored['followUps'])).toBe(1);
    expect(numberOf(stored['expiresAt']) - numberOf(stored['firstSeen'])).toBeGreaterThanOrEqual(8 * 86_400);
    // Nothing of the message is kept.
    expect(JSON.stringify(stored)).not.toContain('up 40%');
    expect(JSON.stringify(stored)).not.toContain('up 80%');
  });

  it('posts the due destination one message naming every anomaly of the week with its state and who triaged it; nothing where not due', async () => {
    // The anomalies were sent just now, within finops' hour, before this run: its summary names them.
    // Its week starts where last week's summary ended, recorded on last week's item: one first seen
    // before that, which last week's summary named, is not named again.
    const ids = TITLES.map((title) => anomalyRecordId(message(title, '', 'finops'), 'finops'));
    // Seen five minutes ago rather than just now: a scheduled week ends a couple of minutes
    // before its run, as the summaries index may not show the latest items yet.
    for (const id of ids) {
      await table.dynamo.send(
        new UpdateItemCommand({
          TableName: table.name,
          Key: { id: { S: id } },
          UpdateExpression: 'SET firstSeen = firstSeen - :earlier',
          ExpressionAttributeValues: { ':earlier': { N: String(5 * 60) } },
        }),
      );
    }
    const firstSeen = await Promise.all(ids.map(async (id) => numberOf((await item(id))['firstSeen'])));
    const lastEnded = Math.min(...firstSeen) - 1;
    const due = dueWeek(Date.now(), { ...dueClock, timeZone: DUE_ZONE });
    if (!due.due) throw new Error('finops is not due now');
    const kept = { N: String(lastEnded + 8 * 86_400) };
    await table.dynamo.send(
      new PutItemCommand({
        TableName: table.name,
        Item: {
          id: { S: weekItemId('finops', due.previousWeek) },
          state: { S: 'posted' },
          coveredTo: { N: String(lastEnded) },
          expiresAt: kept,
        },
      }),
    );
    await table.dynamo.send(
      new PutItemCommand({
        TableName: table.name,
        Item: {
          id: { S: 'anomaly#named-last-week' },
          summaryOf: { S: 'finops' },
          firstSeen: { N: String(lastEnded - 60) },
          title: { S: 'Named last week' },
          accountId: { S: ACCOUNTS.finops },
          accountName: { S: 'Production payer' },
          followUps: { N: '0' },
          expiresAt: kept,
        },
      }),
    );
    const before = { teams: teams.accepted().length, hooks: hooks.accepted(HOOK_PATH).length };
    const answer = await run(scheduledEvent);
    expect(answer.summaries).toEqual(
      expect.arrayContaining([
        { destination: 'finops', outcome: 'posted', anomalies: 4 },
        { destination: 'later', outcome: 'not_due' },
        { destination: 'quiet', outcome: 'quiet', anomalies: 0 },
      ]),
    );
    const posted = teams.accepted().slice(before.teams);
    expect(posted).toHaveLength(1);
    const text = cardText(posted[0]?.body);
    expect(text).toContain('4 anomalies first seen');
    expect(text).toContain('2 open, 1 acknowledged, 0 expected, 1 snoozed');
    for (const title of ['EC2 spend rose', 'S3 spend rose', 'RDS spend rose', 'GPU spend']) expect(text).toContain(title);
    expect(text).not.toContain('Named last week');
    // This week's item records where its summary ended, the run's time, for next week's to start there.
    const week = await item(weekItemId('finops', due.week));
    expect(week['state']).toEqual({ S: 'posted' });
    expect(numberOf(week['coveredTo'])).toBeGreaterThanOrEqual(Math.max(...firstSeen));
    expect(numberOf(week['coveredTo'])).toBeLessThanOrEqual(Date.now() / 1000);
    expect(text).toMatch(/EC2 spend rose · Production payer \(310000000001\) · Acknowledged by Dana, /);
    expect(text).toMatch(/RDS spend rose · Production payer \(310000000001\) · Snoozed for 24 h by Lee, .* \(until /);
    expect(text).toMatch(
      /S3 spend rose · Production payer \(310000000001\) · open \d+ min · no updates · \[Triage\]\(https:\/\/cost-alerts\.example\.org\/triage\/[^)]+\)/,
    );
    // The open ones first.
    expect(text.indexOf('S3 spend rose')).toBeLessThan(text.indexOf('EC2 spend rose'));
    // The hostile title reads as written, and nothing in it links or pings.
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('[x](https://evil');
    expect(hooks.accepted(HOOK_PATH)).toHaveLength(before.hooks);
    const quiet = gchat.accepted();
    expect(quiet).toHaveLength(1);
    expect(quiet[0]?.body).toEqual({ text: expect.stringMatching(/^Weekly summary · quiet: no anomalies in the 7 days to [^\n]+\.$/) });
  });

  it('a second run in the same hour posts nothing again', async () => {
    const posts = teams.requests.length + gchat.requests.length + hooks.requests.length;
    const answer = await run(scheduledEvent);
    expect(answer.summaries).toEqual(
      expect.arrayContaining([
        { destination: 'finops', outcome: 'already_posted' },
        { destination: 'quiet', outcome: 'already_posted' },
      ]),
    );
    expect(teams.requests.length + gchat.requests.length + hooks.requests.length).toBe(posts);
  });

  it('{"summaryFor": [...]} posts those destinations now; a destination without a summary is an error and posts nothing', async () => {
    const before = hooks.accepted(HOOK_PATH).length;
    const now = await run({ summaryFor: ['later'] });
    expect(now).toEqual({ summaries: [{ destination: 'later', outcome: 'posted', anomalies: 1 }] });
    const posted = hooks.accepted(HOOK_PATH).slice(before);
    expect(posted).toHaveLength(1);
    expect(JSON.stringify(posted[0]?.body)).toContain('Lambda spend rose · Production payer (310000000002) · open');
    const posts = teams.requests.length + gchat.requests.length + hooks.requests.length;
    const refused = await run({ summaryFor: ['later', 'default', 'nope'] });
    expect(refused.summaries).toEqual([]);
    expect(refused.error).toContain('"default" has no "summary" option');
    expect(refused.error).toContain('"nope" is not a destination');
    expect(teams.requests.length + gchat.requests.length + hooks.requests.length).toBe(posts);
  });

  it('counts the summaries posted by outcome and destination type', () => {
    const points = emfRecords(summary.output().split('\n')).filter((r) => 'Summaries' in r);
    expect(points.map((p) => [p['outcome'], p['destinationType']])).toEqual([
      ['posted', 'teams'],
      ['quiet', 'googlechat'],
      ['posted', 'slack'],
    ]);
  });

  it('every AWS call the summary function made is one its role in template.yaml grants: a query of the index, never a scan', () => {
    const actions = proxy.actions();
    expect(actions).toContain('dynamodb:Query');
    expect(actions).not.toContain('dynamodb:Scan');
    const granted = grantedActions(loadTemplate('template.yaml'), 'summary');
    expect(actions.filter((action) => !granted.has(action))).toEqual([]);
  });

  it('no webhook URL, triage key or link token in any log, answer or table item', async () => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    const everything = [relay.output(), triage.output(), summary.output(), JSON.stringify(answers), JSON.stringify(Items)].join('\n');
    expect(summary.output()).toContain('weekly summary posted');
    for (const secret of [
      TRIAGE_KEY,
      teams.url(),
      gchat.url(),
      hooks.url(HOOK_PATH),
      'TEAMS-SIG-SECRET',
      'GCHAT-TOKEN-SECRET',
      'SUMMARYHOOKSECRET',
    ]) {
      expect(everything).not.toContain(secret);
    }
    const tokens = teams
      .accepted()
      .flatMap((r) => [...JSON.stringify(r.body).matchAll(/\/triage\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/g)].map((m) => m[1] as string));
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(everything).not.toContain(token);
  });
});
