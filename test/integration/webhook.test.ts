// Webhook destinations through the built bundles: the relay, delivery-retry, triage and summary
// bundles against moto_server and loopback receivers that verify every request with the
// `standardwebhooks` reference library, as a receiver's code does. The escalation is made due as
// in escalation.test.ts: its anomaly's first-seen time moved back, on the item and in the job.
import { randomBytes } from 'node:crypto';
import { GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { createQueues, sqsClient, type TestQueues, toEvent, waitFor } from '../helpers/sqs.js';
import {
  type DocumentedReceiver,
  type FakeWebhookReceiver,
  startDocumentedReceiver,
  startWebhookReceiver,
} from '../helpers/webhook-receiver.js';

const moto = motoUrl();
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const TRIAGE_KEY = 'webhook-test-key-5b2c-abcdefghijklmnopqrstuvwxyz-0123456789';
const RECEIVERS = ['finops', 'oncall', 'refused', 'moved', 'flaky'] as const;
type ReceiverName = (typeof RECEIVERS)[number];
const SECRETS = Object.fromEntries(RECEIVERS.map((name) => [name, `whsec_${randomBytes(32).toString('base64')}`])) as Record<
  ReceiverName,
  string
>;
/** The secret of the receiver docs/webhook.md shows, which runs apart from the fake receivers. */
const DOCUMENTED_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const ACCOUNTS = { refused: '310000000002', moved: '310000000003', flaky: '310000000004', documented: '310000000005' } as const;
const DEFAULT_ACCOUNT = '310000000001';

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
type Job = { kind?: string; destination?: string; from?: string; firstSeen?: number; message: { payload: { title?: string } } };

/** An alert as the platform sends it: with a member the relay does not know and an account id as a number. */
const alert = (title: string, text: string, account: string = DEFAULT_ACCOUNT) => ({
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z', platform_event_id: `evt-${title}` },
  payload: { title, message: text, account_id: Number(account), account_name: 'Production payer', cloud_provider_type: 'aws' },
});

/** The anomaly an alert of this title at `default` belongs to, as the relay names it. */
const anomalyIdOf = (title: string) => anomalyRecordId(webhookMessageSchema.parse(alert(title, '')), 'default');

describe.skipIf(!moto)('webhook destinations: relay, delivery-retry, triage and summary bundles against verifying receivers', () => {
  let receiver: FakeWebhookReceiver;
  let documented: DocumentedReceiver;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let proxies: Record<'relay' | 'retry', AwsProxy>;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  let summary: RunningBundle;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const answers: unknown[] = [];
  const parked: Message[] = [];
  let fed = 0;

  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: 'cost-alerts' } };
  };
  const send = async (body: unknown) => {
    const answer = await relay.invoke<Answer>(event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }), {
      timeoutMs: 15_000,
    });
    answers.push(answer);
    return { status: answer.statusCode, body: JSON.parse(answer.body) as Record<string, unknown> };
  };
  const events = (name: ReceiverName) => receiver.received(name).map((request) => request.event);
  /** The jobs a function put on the retry queue, in order. */
  const jobsSentBy = (fn: keyof typeof proxies) =>
    proxies[fn]
      .sent('AmazonSQS.SendMessage')
      .filter((m) => String(m['QueueUrl']).endsWith(new URL(queues.deliveryQueueUrl).pathname))
      .map((m) => JSON.parse(String(m['MessageBody'])) as Job);
  /** Hands delivery-retry one job as Lambda's event source mapping would, received `receives` times. */
  const feed = async (job: Job, receives: number) => {
    const message = { MessageId: `fed-${++fed}`, ReceiptHandle: `handle-${fed}`, Body: JSON.stringify(job) };
    const records = toEvent([{ ...message, Attributes: { ApproximateReceiveCount: String(receives) } }], queues.deliveryQueueArn);
    return retry.invoke<{ batchItemFailures: unknown[] }>(records, { timeoutMs: 60_000 });
  };
  const item = async (id: string) =>
    (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } }, ConsistentRead: true }))).Item ?? {};
  const follow = async (link: string, form?: string) => {
    expect(link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const path = link.slice(ORIGIN.length);
    const input: EventInput =
      form === undefined
        ? { method: 'GET', path }
        : { method: 'POST', path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form };
    const answer = await triage.invoke<Answer>(event(input), { timeoutMs: 10_000 });
    answers.push(answer);
    return answer;
  };
  const waitForParked = async (reason: string): Promise<Message> => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const found = parked.find((m) => m.MessageAttributes?.['reason']?.StringValue === reason);
      if (found) return found;
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 600,
        }),
      );
      parked.push(...Messages);
    }
    throw new Error(`nothing was parked with ${reason} in time`);
  };

  beforeAll(async () => {
    [receiver, documented, table, queues] = await Promise.all([
      startWebhookReceiver(SECRETS),
      startDocumentedReceiver(DOCUMENTED_SECRET),
      createDedupTable(moto as string),
      createQueues(sqs),
    ]);
    const [relayProxy, retryProxy] = await Promise.all([startAwsProxy(moto as string), startAwsProxy(moto as string)]);
    proxies = { relay: relayProxy as AwsProxy, retry: retryProxy as AwsProxy };
    const hook = (name: ReceiverName) => ({ type: 'webhook', url: receiver.url(name), secret: SECRETS[name] });
    const secrets = secretsClient(moto as string);
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations: {
          // Escalates to another webhook, and takes a weekly summary.
          default: { ...hook('finops'), escalate: { afterMinutes: 1, to: 'oncall' }, summary: { weekday: 'monday', hour: 9 } },
          oncall: hook('oncall'),
          refused: hook('refused'),
          moved: hook('moved'),
          flaky: hook('flaky'),
          documented: { type: 'webhook', url: documented.url, secret: DOCUMENTED_SECRET },
        },
        routes: (['refused', 'moved', 'flaky', 'documented'] as const).map((name) => ({
          when: { accountId: [ACCOUNTS[name]] },
          to: [name],
        })),
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
    };
    // The SQS client sends to the queue URL's host: each function's queues are named on its own proxy, so that it sees those calls too.
    const posting = (proxy: AwsProxy) => ({
      ...shared,
      AWS_ENDPOINT_URL: proxy.url,
      DELIVERY_QUEUE_URL: `${proxy.url}${new URL(queues.deliveryQueueUrl).pathname}`,
      DEAD_LETTER_QUEUE_URL: `${proxy.url}${new URL(queues.deadLetterQueueUrl).pathname}`,
      POST_TIMEOUT_MS: '2000',
    });
    [relay, retry, triage, summary] = await Promise.all([
      startBundle('webhook-relay', posting(proxies.relay)),
      startBundle('delivery-retry', posting(proxies.retry)),
      startBundle('triage', shared),
      startBundle('summary', shared),
    ]);
  });

  afterAll(async () => {
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop(), summary?.stop()]);
    await Promise.all([receiver?.close(), documented?.stop(), ...Object.values(proxies ?? {}).map((proxy) => proxy.close())]);
  });

  it('an opening and its follow-up arrive verified as cost_alert.opened and .updated, the alert exactly as sent, each its own id', async () => {
    const opening = alert('EC2 spend rose', 'up 212%');
    expect((await send(opening)).status).toBe(200);
    expect((await send(alert('EC2 spend rose', 'up 340%'))).status).toBe(200);
    const [opened, updated] = events('finops');
    const id = anomalyIdOf('EC2 spend rose');
    expect(opened).toMatchObject({
      type: 'cost_alert.opened',
      data: {
        destination: 'default',
        anomaly: { id, update: 0 },
        metadata: opening.metadata,
        payload: opening.payload,
        triageUrl: expect.stringMatching(`^${ORIGIN}/triage/`),
      },
    });
    expect(updated).toMatchObject({ type: 'cost_alert.updated', data: { anomaly: { id, update: 1 }, payload: { message: 'up 340%' } } });
    const ids = receiver.received('finops').map((request) => request.headers['webhook-id']);
    expect(new Set(ids).size).toBe(2);
  });

  it('a 5xx is retried from the queue and a 429 waits its Retry-After; every attempt carries the first one’s webhook-id', async () => {
    receiver.script('flaky', { status: 503 }, { status: 500 }, { status: 429, headers: { 'retry-after': '2' } });
    const first = await send(alert('S3 spend rose', 'up 80%', ACCOUNTS.flaky));
    expect(first).toMatchObject({ status: 202, body: { queued: ['flaky'] } });
    const job = jobsSentBy('relay').find((j) => j.destination === 'flaky') as Job;
    expect(job).toBeDefined();

    expect((await feed(job, 1)).batchItemFailures).toHaveLength(1);
    expect((await feed(job, 2)).batchItemFailures).toHaveLength(1);
    const visibility = proxies.retry.sent('AmazonSQS.ChangeMessageVisibility').map((call) => call['VisibilityTimeout']);
    // After the 500, the core's backoff; after the 429, the seconds its Retry-After asked for.
    expect(visibility.at(-1)).toBe(2);
    expect((await feed(job, 3)).batchItemFailures).toEqual([]);

    const requests = receiver.received('flaky');
    expect(requests).toHaveLength(4);
    expect(requests.map((request) => request.refusal)).toEqual([undefined, undefined, undefined, undefined]);
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
    expect(requests.at(-1)?.event).toMatchObject({
      type: 'cost_alert.opened',
      data: { destination: 'flaky', payload: { title: 'S3 spend rose' } },
    });
  });

  it('a 4xx and a redirect are refused for good (502) and parked with their reason', async () => {
    receiver.script('refused', { status: 400 });
    receiver.script('moved', { status: 302, headers: { location: 'https://elsewhere.example/hooks' } });
    expect(await send(alert('RDS spend rose', 'up 10%', ACCOUNTS.refused))).toMatchObject({
      status: 502,
      body: { destinations: [{ name: 'refused', reason: 'http_400' }] },
    });
    expect(await send(alert('RDS spend rose', 'up 10%', ACCOUNTS.moved))).toMatchObject({
      status: 502,
      body: { destinations: [{ name: 'moved', reason: 'redirect_refused' }] },
    });
    expect((await waitForParked('http_400')).MessageAttributes?.['destination']?.StringValue).toBe('refused');
    expect((await waitForParked('redirect_refused')).MessageAttributes?.['destination']?.StringValue).toBe('moved');
    expect(receiver.received('moved')).toHaveLength(1);
  });

  it('an action through the Triage link arrives as cost_alert.triaged: the anomaly, the action, who and when', async () => {
    const link = events('finops')[0]?.data['triageUrl'] as string;
    const page = await follow(link);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('EC2 spend rose');
    const before = receiver.received('finops').length;
    const acknowledged = await follow(link, 'action=acknowledge&name=Dana');
    expect(acknowledged.statusCode).toBe(200);
    expect(acknowledged.body).not.toContain('could not be told');
    const [triaged, ...more] = receiver.received('finops').slice(before);
    expect(more).toEqual([]);
    expect(triaged?.refusal).toBeUndefined();
    expect(triaged?.event).toMatchObject({
      type: 'cost_alert.triaged',
      data: {
        destination: 'default',
        anomaly: { id: anomalyIdOf('EC2 spend rose') },
        action: 'acknowledge',
        by: 'Dana',
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        triageUrl: link,
      },
    });
  });

  it('an anomaly left open past its wait arrives at the other webhook as cost_alert.escalated, where it waited and how long', async () => {
    const opening = alert('Lambda spend rose', 'up 55%');
    expect((await send(opening)).status).toBe(200);
    const job = jobsSentBy('relay').find((j) => j.kind === 'escalation' && j.message.payload.title === 'Lambda spend rose') as Job;
    expect(job).toMatchObject({ from: 'default' });
    // As if the opening had come two minutes ago: on the anomaly's item and in its job alike.
    const id = anomalyIdOf('Lambda spend rose');
    const earlier = Number((await item(id))['firstSeen']?.N) - 120;
    await table.dynamo.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: { id: { S: id } },
        UpdateExpression: 'SET firstSeen = :earlier',
        ExpressionAttributeValues: { ':earlier': { N: String(earlier) } },
      }),
    );
    expect(await feed({ ...job, firstSeen: earlier }, 1)).toEqual({ batchItemFailures: [] });
    const [escalated, ...more] = receiver.received('oncall');
    expect(more).toEqual([]);
    expect(escalated?.refusal).toBeUndefined();
    expect(escalated?.event).toMatchObject({
      type: 'cost_alert.escalated',
      data: { destination: 'oncall', escalatedFrom: 'default', afterMinutes: 1, metadata: opening.metadata, payload: opening.payload },
    });
  });

  it('the weekly summary arrives as cost_alert.summary: the week, and a record per anomaly with its state and who triaged it', async () => {
    const before = receiver.received('finops').length;
    const answer = await summary.invoke<Record<string, unknown>>({ summaryFor: ['default'] }, { timeoutMs: 30_000 });
    answers.push(answer);
    const [posted, ...more] = receiver.received('finops').slice(before);
    expect(more).toEqual([]);
    expect(posted?.refusal).toBeUndefined();
    const data = posted?.event?.data ?? {};
    expect(posted?.event?.type).toBe('cost_alert.summary');
    expect(data).toMatchObject({ destination: 'default', from: expect.any(String), to: expect.any(String) });
    const records = data['anomalies'] as Array<Record<string, unknown>>;
    expect(records.find((r) => r['title'] === 'EC2 spend rose')).toEqual({
      id: expect.stringMatching(/^anomaly#/),
      title: 'EC2 spend rose',
      accountId: DEFAULT_ACCOUNT,
      accountName: 'Production payer',
      state: 'acknowledged',
      firstSeen: expect.stringMatching(/Z$/),
      updates: 1,
      triagedBy: 'Dana',
      triagedAt: expect.stringMatching(/Z$/),
    });
    expect(records.find((r) => r['title'] === 'Lambda spend rose')).toMatchObject({
      state: 'open',
      triagedBy: null,
      triageUrl: expect.stringMatching(`^${ORIGIN}/triage/`),
    });
  });

  it('the receiver docs/webhook.md shows, run as written, verifies an event, drops a retry of it and refuses a forgery', async () => {
    expect(await send(alert('NAT gateway spend rose', 'up 64%', ACCOUNTS.documented))).toMatchObject({
      status: 200,
      body: { delivered: ['documented'] },
    });
    const id = anomalyRecordId(webhookMessageSchema.parse(alert('NAT gateway spend rose', '', ACCOUNTS.documented)), 'documented');
    const opened = `cost_alert.opened documented ${id}`;
    expect(await waitFor(() => documented.output().includes('\n'), 10_000)).toBe(true);
    expect(documented.output()).toBe(`${opened}\n`);

    // A retry of one message, as the relay sends it: the same webhook-id, signed anew.
    const body = JSON.stringify({ type: 'cost_alert.updated', timestamp: new Date().toISOString(), data: { destination: 'documented' } });
    const post = (secret: string) => {
      const at = new Date();
      return fetch(documented.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'msg_retried',
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(secret).sign('msg_retried', at, body),
        },
        body,
      });
    };
    expect((await post(DOCUMENTED_SECRET)).status).toBe(204);
    expect((await post(DOCUMENTED_SECRET)).status).toBe(204);
    expect((await post(`whsec_${randomBytes(32).toString('base64')}`)).status).toBe(401);
    expect(documented.output()).toBe(`${opened}\ncost_alert.updated documented \n`);
  });

  it('every request verifies, and the secrets are nowhere but in the signatures: no log, answer, queue message or table item', async () => {
    const all = RECEIVERS.flatMap((name) => receiver.received(name));
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((request) => request.refusal !== undefined)).toEqual([]);
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    const queued = [...proxies.relay.sent('AmazonSQS.SendMessage'), ...proxies.retry.sent('AmazonSQS.SendMessage')];
    expect(queued.length).toBeGreaterThan(0);
    const everything = [
      relay.output(),
      retry.output(),
      triage.output(),
      summary.output(),
      JSON.stringify(answers),
      JSON.stringify(queued),
      JSON.stringify(parked),
      JSON.stringify(Items),
      ...all.map((request) => `${request.body}\n${JSON.stringify(request.headers)}`),
    ].join('\n');
    for (const secret of Object.values(SECRETS)) {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      for (const form of [secret.slice('whsec_'.length), key.toString('hex'), key.toString('base64url')])
        expect(everything).not.toContain(form);
    }
  });
});
