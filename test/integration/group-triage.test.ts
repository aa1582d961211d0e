// A digest can be triaged, through the built bundles: the relay groups a storm in the moto table,
// delivery-retry closes the group and posts one digest whose "Triage" link opens the triage
// bundle's page listing each anomaly with its own actions; an action there cancels that anomaly's
// escalation, the others escalate once each, and a digest at a destination without Triage links
// (a Slack app without buttons) lets none of its anomalies escalate. As in escalation.test.ts, a
// job is made due by moving its anomaly's first-seen time back, on the item and in the job alike.
import { GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeChat, startFakeTeams } from '../helpers/chat-servers.js';
import { grantedActions, loadTemplate } from '../helpers/cloudformation.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, sqsClient, type TestQueues, toEvent } from '../helpers/sqs.js';

const moto = motoUrl();
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const STORM_PATH = '/services/T0/B0/STORMHOOKSECRET';
const TRIAGE_KEY = 'group-triage-test-key-5c2e-abcdefghijklmnopqrstuvwxyz-0123456789';
const BOT_TOKEN = 'xoxb-group-triage-bot-token';
const STORM_ACCOUNT = '320000000001';
const QUIET_ACCOUNT = '320000000002';

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
type Job = { kind: string; from?: string; firstSeen: number; destination?: string; message: WebhookMessage };

const message = (title: string, account: string): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-24T09:00:00Z' },
    payload: { title, message: 'up 40% today', account_id: account, cloud_provider_type: 'aws' },
  });

describe.skipIf(!moto)('a digest triaged from its page: relay, delivery-retry and triage bundles against moto_server', () => {
  let slack: FakeSlack;
  let slackApi: FakeSlackApi;
  let teams: FakeChat;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  let proxies: Record<'relay' | 'delivery-retry' | 'triage', AwsProxy>;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const answers: Answer[] = [];
  let fed = 0;

  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: DOMAIN.split('.')[0] as string } };
  };
  const send = async (title: string, account: string) => {
    const answer = await relay.invoke<Answer>(
      event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message(title, account)) }),
      { timeoutMs: 15_000 },
    );
    answers.push(answer);
    return answer;
  };
  /** The jobs of one kind the relay put on the retry queue, in order. */
  const jobsOf = (kind: string) =>
    proxies.relay
      .sent('AmazonSQS.SendMessage')
      .filter((m) => String(m['QueueUrl']).endsWith(new URL(queues.deliveryQueueUrl).pathname))
      .map((m) => JSON.parse(String(m['MessageBody'])) as Job)
      .filter((job) => job.kind === kind);
  /** Hands delivery-retry the jobs as Lambda's event source mapping would, one batch. */
  const feed = async (...jobs: Job[]) => {
    const messages = jobs.map((job) => ({ MessageId: `fed-${++fed}`, ReceiptHandle: `handle-${fed}`, Body: JSON.stringify(job) }));
    return retry.invoke<{ batchItemFailures: unknown[] }>(toEvent(messages, queues.deliveryQueueArn), { timeoutMs: 60_000 });
  };
  const page = async (path: string, form?: string) => {
    const answer = await triage.invoke<Answer>(
      event({
        method: form === undefined ? 'GET' : 'POST',
        path,
        headers: form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' },
        ...(form === undefined ? {} : { body: form }),
      }),
      { timeoutMs: 10_000 },
    );
    answers.push(answer);
    return answer;
  };
  const item = async (id: string) =>
    (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } }, ConsistentRead: true }))).Item ?? {};
  /** The escalation job as if its opening had come two minutes ago: on the anomaly's item and in the job alike. */
  const due = async (job: Job): Promise<Job> => {
    const id = anomalyRecordId(job.message, job.from as string);
    const stored = await item(id);
    const firstSeen = Number(stored['firstSeen']?.N);
    expect(job.firstSeen).toBe(firstSeen);
    // The opening as shown by its digest is that earlier one too.
    const shown = stored['openingShown']?.N === String(firstSeen) ? ', openingShown = :earlier' : '';
    await table.dynamo.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: { id: { S: id } },
        UpdateExpression: `SET firstSeen = :earlier${shown}`,
        ExpressionAttributeValues: { ':earlier': { N: String(firstSeen - 120) } },
      }),
    );
    return { ...job, firstSeen: firstSeen - 120 };
  };
  const escalated = () => teams.accepted().map((r) => (JSON.stringify(r.body).match(/(?:Storm|Quiet) alert [A-Z]/g) ?? [])[0]);

  beforeAll(async () => {
    [slack, slackApi, teams, table, queues] = await Promise.all([
      startFakeSlack(),
      startFakeSlackApi(BOT_TOKEN),
      startFakeTeams(),
      createDedupTable(moto as string),
      createQueues(sqs),
    ]);
    const [relayProxy, retryProxy, triageProxy] = await Promise.all([1, 2, 3].map(() => startAwsProxy(moto as string)));
    proxies = { relay: relayProxy as AwsProxy, 'delivery-retry': retryProxy as AwsProxy, triage: triageProxy as AwsProxy };
    const secrets = secretsClient(moto as string);
    const escalate = { afterMinutes: 1, to: 'oncall' };
    const group = { waitSeconds: 10 };
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        // No signing secret: the app's messages carry no buttons, and it has no Triage links.
        slack: { botToken: BOT_TOKEN },
        destinations: {
          default: { url: slack.url('/services/T0/B0/default') },
          storm: { url: slack.url(STORM_PATH), group, escalate },
          quiet: { channel: 'C0QUIET01', group, escalate },
          oncall: { type: 'teams', url: teams.url() },
        },
        routes: [
          { when: { accountId: [STORM_ACCOUNT] }, to: ['storm'] },
          { when: { accountId: [QUIET_ACCOUNT] }, to: ['quiet'] },
        ],
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
      SLACK_API_URL: slackApi.url,
    };
    const env = (proxy: AwsProxy) => ({
      ...shared,
      AWS_ENDPOINT_URL: proxy.url,
      DELIVERY_QUEUE_URL: `${proxy.url}${new URL(queues.deliveryQueueUrl).pathname}`,
      DEAD_LETTER_QUEUE_URL: `${proxy.url}${new URL(queues.deadLetterQueueUrl).pathname}`,
      POST_TIMEOUT_MS: '2000',
    });
    [relay, retry, triage] = await Promise.all([
      startBundle('webhook-relay', env(proxies.relay)),
      startBundle('delivery-retry', env(proxies['delivery-retry'])),
      startBundle('triage', { ...shared, AWS_ENDPOINT_URL: proxies.triage.url }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop()]);
    await Promise.all([slack?.close(), slackApi?.close(), teams?.close(), ...Object.values(proxies ?? {}).map((p) => p.close())]);
  });

  it('an anomaly acted on from the digest does not escalate; the untouched ones escalate once each; a digest without links escalates none', {
    timeout: 120_000,
  }, async () => {
    for (const [letter, account] of [
      ['A', STORM_ACCOUNT],
      ['B', STORM_ACCOUNT],
      ['C', STORM_ACCOUNT],
      ['A', QUIET_ACCOUNT],
      ['B', QUIET_ACCOUNT],
      ['C', QUIET_ACCOUNT],
    ] as const) {
      const title = `${account === STORM_ACCOUNT ? 'Storm' : 'Quiet'} alert ${letter}`;
      const answer = await send(title, account);
      expect(answer.statusCode, answer.body).toBe(202);
      expect(JSON.parse(answer.body)).toMatchObject({ grouped: [account === STORM_ACCOUNT ? 'storm' : 'quiet'] });
    }
    // Each grouped opening set its escalation waiting, as any opening does.
    expect(jobsOf('escalation')).toHaveLength(6);

    // delivery-retry closes both groups (their closing jobs handed over at once, as if the wait were over).
    expect(await feed(...jobsOf('group_close'))).toEqual({ batchItemFailures: [] });
    const [digest, ...others] = slack.accepted(STORM_PATH);
    expect(others).toEqual([]);
    const text = JSON.stringify(digest?.body);
    for (const letter of ['A', 'B', 'C']) expect(text).toContain(`Storm alert ${letter}`);
    const link = /"url":"(https:\/\/cost-alerts\.example\.org\/triage\/[^"]+)"/.exec(text)?.[1] ?? '';
    expect(link.length).toBeGreaterThan(ORIGIN.length);
    const quiet = slackApi.messages.filter((m) => m.channel === 'C0QUIET01');
    expect(quiet).toHaveLength(1);
    expect(JSON.stringify(quiet[0]?.blocks)).toContain('Quiet alert C');
    expect(JSON.stringify(quiet[0]?.blocks)).not.toContain('/triage/');

    // The page lists each anomaly with its own actions, and names the destination.
    const shown = await page(link.slice(ORIGIN.length));
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('<dd id="destination">storm</dd>');
    const items = shown.body.split('<li>').slice(1);
    expect(items).toHaveLength(3);
    const place = items.findIndex((li) => li.includes('Storm alert B'));
    expect(items[place]).toContain(`value="acknowledge:${place}"`);
    const acted = await page(link.slice(ORIGIN.length), `action=acknowledge%3A${place}&name=Dana`);
    expect(acted.statusCode).toBe(200);
    expect(acted.body).toContain('Acknowledged by Dana');
    // The one short note at the destination names the anomaly.
    expect(JSON.stringify(slack.accepted(STORM_PATH).at(-1)?.body)).toMatch(/Acknowledged by Dana at [^"]*: Storm alert B/);
    const acknowledged = await item(anomalyRecordId(message('Storm alert B', STORM_ACCOUNT), 'storm'));
    expect(acknowledged['triage']?.S).toBe('acknowledged');

    // Every escalation due, each delivered twice: the two untouched storm anomalies escalate once each.
    const jobs = await Promise.all(jobsOf('escalation').map(due));
    expect(await feed(...jobs)).toEqual({ batchItemFailures: [] });
    expect(await feed(...jobs)).toEqual({ batchItemFailures: [] });
    expect(escalated().sort()).toEqual(['Storm alert A', 'Storm alert C']);
    expect(retry.output()).toContain('escalation withdrawn: the digest offered no way to triage its anomalies');
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

  it('no webhook URL, bot token, triage key or link token in any log, answer, queue message or table item', async () => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    const queued = [...proxies.relay.sent('AmazonSQS.SendMessage'), ...proxies['delivery-retry'].sent('AmazonSQS.SendMessage')].map((m) =>
      String(m['MessageBody']),
    );
    const link = /\/triage\/([^"\\]+)/.exec(JSON.stringify(slack.accepted(STORM_PATH)[0]?.body))?.[1] ?? '';
    expect(link.length).toBeGreaterThan(40);
    const everything = [relay.output(), retry.output(), triage.output(), JSON.stringify(answers), ...queued, JSON.stringify(Items)].join(
      '\n',
    );
    for (const secret of ['STORMHOOKSECRET', BOT_TOKEN, TRIAGE_KEY, link, teams.url()]) expect(everything).not.toContain(secret);
  });
});
