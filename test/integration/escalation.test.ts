// Escalation through the built bundles: the relay sets the wait on the retry queue in moto_server,
// delivery-retry processes the job against the anomaly's item in the moto table and posts to a
// loopback Teams workflow, and the triage bundle's acknowledgement cancels it. The bundles cannot
// wait a minute: a job is made due by moving its anomaly's first-seen time back, on the item and
// in the job alike, as if the opening had come two minutes earlier.

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AwsJsonCall, awsJsonClient, DYNAMODB } from '../../lib/aws/json-client.js';
import { DYNAMODB_LIMITS } from '../../lib/aws/limits.js';
import { dynamoLedger } from '../../lib/dedup/dynamodb.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeChat, startFakeTeams } from '../helpers/chat-servers.js';
import { grantedActions, loadTemplate } from '../helpers/cloudformation.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, sqsClient, type TestQueues, toEvent } from '../helpers/sqs.js';
import { UNPOSTED_ESCALATION_ANSWERS, unpostedEscalationClaims } from '../helpers/unposted-escalation-claims.js';

const moto = motoUrl();
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const FINOPS_PATH = '/services/T0/B0/FINOPSHOOKSECRET';
const TRIAGE_KEY = 'escalation-test-key-7d1e-abcdefghijklmnopqrstuvwxyz-0123456789';
const ACCOUNT = '310000000001';

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
type Job = { kind: string; from: string; firstSeen: number; updates: number; message: WebhookMessage; deferred?: true };

const message = (title: string, text: string): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-24T09:00:00Z' },
    payload: { title, message: text, account_id: ACCOUNT, cloud_provider_type: 'aws' },
  });

describe.skipIf(!moto)('escalation: relay, delivery-retry and triage bundles against moto_server and loopback chats', () => {
  let slack: FakeSlack;
  let teams: FakeChat;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  let proxies: Record<'relay' | 'delivery-retry' | 'triage', AwsProxy>;
  let relayEnvironment: Record<string, string>;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const answers: Answer[] = [];
  const tokens: string[] = [];
  let fed = 0;

  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: DOMAIN.split('.')[0] as string } };
  };
  const send = async (title: string, text: string) => {
    const answer = await relay.invoke<Answer>(
      event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message(title, text)) }),
      { timeoutMs: 15_000 },
    );
    answers.push(answer);
    return answer;
  };
  /** The escalation jobs a function put on the retry queue, with their delays, in order. */
  const jobsSentBy = (fn: keyof typeof proxies) =>
    proxies[fn]
      .sent('AmazonSQS.SendMessage')
      .filter((m) => String(m['QueueUrl']).endsWith(new URL(queues.deliveryQueueUrl).pathname))
      .map((m) => ({
        body: String(m['MessageBody']),
        delaySeconds: m['DelaySeconds'] as number,
        job: JSON.parse(String(m['MessageBody'])) as Job,
      }))
      .filter((m) => m.job.kind === 'escalation');
  /** Hands delivery-retry the jobs as Lambda's event source mapping would, one batch. */
  const feed = async (...jobs: Job[]) => {
    const messages = jobs.map((job) => ({ MessageId: `fed-${++fed}`, ReceiptHandle: `handle-${fed}`, Body: JSON.stringify(job) }));
    return retry.invoke<{ batchItemFailures: unknown[] }>(toEvent(messages, queues.deliveryQueueArn), { timeoutMs: 60_000 });
  };
  const item = async (id: string) =>
    (await table.dynamo.send(new GetItemCommand({ TableName: table.name, Key: { id: { S: id } }, ConsistentRead: true }))).Item ?? {};
  /** The opening as if it had come two minutes ago: on the anomaly's item and in its jobs alike. */
  const twoMinutesEarlier = async (title: string, ...jobs: Job[]): Promise<Job[]> => {
    const id = anomalyRecordId(message(title, ''), 'finops');
    const firstSeen = Number((await item(id))['firstSeen']?.N);
    expect(jobs.every((job) => job.firstSeen === firstSeen)).toBe(true);
    const earlier = firstSeen - 120;
    await table.dynamo.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: { id: { S: id } },
        UpdateExpression: 'SET firstSeen = :earlier',
        ExpressionAttributeValues: { ':earlier': { N: String(earlier) } },
      }),
    );
    return jobs.map((job) => ({ ...job, firstSeen: earlier }));
  };
  /** What the on-call workflow received about one alert title. */
  const escalationsOf = (title: string) => teams.accepted().filter((r) => JSON.stringify(r.body).includes(title));

  beforeAll(async () => {
    [slack, teams, table, queues] = await Promise.all([
      startFakeSlack(),
      startFakeTeams(),
      createDedupTable(moto as string),
      createQueues(sqs),
    ]);
    const [relayProxy, retryProxy, triageProxy] = await Promise.all([1, 2, 3].map(() => startAwsProxy(moto as string)));
    proxies = { relay: relayProxy as AwsProxy, 'delivery-retry': retryProxy as AwsProxy, triage: triageProxy as AwsProxy };
    const secrets = secretsClient(moto as string);
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations: {
          default: { url: slack.url('/services/T0/B0/default') },
          finops: { url: slack.url(FINOPS_PATH), escalate: { afterMinutes: 1, to: 'oncall' } },
          oncall: { type: 'teams', url: teams.url() },
        },
        routes: [{ when: { accountId: [ACCOUNT] }, to: ['finops'] }],
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
    const env = (proxy: AwsProxy) => ({
      ...shared,
      AWS_ENDPOINT_URL: proxy.url,
      DELIVERY_QUEUE_URL: `${proxy.url}${new URL(queues.deliveryQueueUrl).pathname}`,
      DEAD_LETTER_QUEUE_URL: `${proxy.url}${new URL(queues.deadLetterQueueUrl).pathname}`,
      POST_TIMEOUT_MS: '2000',
    });
    relayEnvironment = env(proxies.relay);
    [relay, retry, triage] = await Promise.all([
      startBundle('webhook-relay', relayEnvironment),
      // Long enough that a post held open by the test is still under way while another invocation runs.
      startBundle('delivery-retry', { ...env(proxies['delivery-retry']), POST_TIMEOUT_MS: '20000' }),
      startBundle('triage', { ...shared, AWS_ENDPOINT_URL: proxies.triage.url }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop()]);
    await Promise.all([slack?.close(), teams?.close(), ...Object.values(proxies ?? {}).map((p) => p.close())]);
  });

  it('an untouched anomaly escalates once after the wait, saying where it waited and for how long; not before', async () => {
    const title = 'EC2 spend rose';
    expect((await send(title, 'up 340%')).statusCode).toBe(200);
    expect(slack.accepted(FINOPS_PATH)).toHaveLength(1);
    const [sent, ...others] = jobsSentBy('relay');
    expect(others).toEqual([]);
    // The wait is on the moto queue as a delayed message: what is left of the minute (a busy
    // machine may have spent a second since the opening), under SQS's 15.
    expect(sent?.delaySeconds).toBeGreaterThan(50);
    expect(sent?.delaySeconds).toBeLessThanOrEqual(60);
    expect(sent?.job).toMatchObject({ from: 'finops', updates: 0, message: message(title, 'up 340%') });
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queues.deliveryQueueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
    );
    expect(Number(attributes.Attributes?.['ApproximateNumberOfMessagesDelayed'])).toBeGreaterThanOrEqual(1);
    const job = sent?.job as Job;

    // Not due yet: back on the queue with the time left, nothing posted.
    expect(await feed(job)).toEqual({ batchItemFailures: [] });
    const back = jobsSentBy('delivery-retry');
    expect(back).toHaveLength(1);
    expect(back[0]?.job).toEqual(job);
    expect(back[0]?.delaySeconds).toBeGreaterThan(50);
    expect(back[0]?.delaySeconds).toBeLessThanOrEqual(60);
    expect(teams.requests).toHaveLength(0);

    const [due] = await twoMinutesEarlier(title, job);
    // Delivered twice in one batch, and once more later: one escalation (the mark stops the later
    // copies; the dedup record at `to` would too, so the lease is shown with two jobs below).
    expect(await feed(due as Job, due as Job)).toEqual({ batchItemFailures: [] });
    expect(await feed(due as Job)).toEqual({ batchItemFailures: [] });
    const posted = escalationsOf(title);
    expect(posted).toHaveLength(1);
    expect(JSON.stringify(posted[0]?.body)).toContain('Not acknowledged at finops within 1 min');
    expect(JSON.stringify(posted[0]?.body)).toContain('up 340%');
    expect(Number((await item(anomalyRecordId(message(title, ''), 'finops')))['escalatedAt']?.N)).toBeGreaterThan(0);
    expect(jobsSentBy('delivery-retry')).toHaveLength(1);
  });

  it('an anomaly acknowledged through its Triage link before the wait is not escalated', async () => {
    const title = 'RDS spend rose';
    expect((await send(title, 'up 60%')).statusCode).toBe(200);
    const opening = slack.accepted(FINOPS_PATH).at(-1)?.body as { blocks: Array<{ type: string; elements?: Array<{ url?: string }> }> };
    const link = opening.blocks.flatMap((b) => (b.type === 'actions' ? (b.elements ?? []) : [])).find((e) => e.url)?.url ?? '';
    expect(link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    tokens.push(link.slice(`${ORIGIN}/triage/`.length));
    const acknowledged = await triage.invoke<Answer>(
      event({
        method: 'POST',
        path: link.slice(ORIGIN.length),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=acknowledge&name=Dana',
      }),
      { timeoutMs: 10_000 },
    );
    answers.push(acknowledged);
    expect(acknowledged.statusCode).toBe(200);

    const job = jobsSentBy('relay').find((j) => j.job.message.payload.title === title)?.job as Job;
    const [due] = await twoMinutesEarlier(title, job);
    expect(await feed(due as Job)).toEqual({ batchItemFailures: [] });
    expect(escalationsOf(title)).toHaveLength(0);
    expect((await item(anomalyRecordId(message(title, ''), 'finops')))['escalatedAt']).toBeUndefined();
  });

  it('a follow-up before the wait replaces the job: still one escalation, with the follow-up’s content', async () => {
    const title = 'S3 spend rose';
    expect((await send(title, 'up 10%')).statusCode).toBe(200);
    expect((await send(title, 'up 90%')).statusCode).toBe(200);
    const jobs = jobsSentBy('relay').filter((j) => j.job.message.payload.title === title);
    expect(jobs.map((j) => [j.job.updates, j.job.message.payload.message])).toEqual([
      [0, 'up 10%'],
      [1, 'up 90%'],
    ]);
    const [opening, followUp] = await twoMinutesEarlier(title, ...jobs.map((j) => j.job));
    // Both are due together; the one with the older content lets the other go first.
    const sentBefore = jobsSentBy('delivery-retry').length;
    expect(await feed(opening as Job, followUp as Job)).toEqual({ batchItemFailures: [] });
    const deferred = jobsSentBy('delivery-retry').slice(sentBefore);
    expect(deferred.map((j) => [j.job.updates, j.job.deferred])).toEqual([[0, true]]);
    expect(await feed(deferred[0]?.job as Job)).toEqual({ batchItemFailures: [] });
    const posted = escalationsOf(title);
    expect(posted).toHaveLength(1);
    expect(JSON.stringify(posted[0]?.body)).toContain('up 90%');
    expect(JSON.stringify(posted[0]?.body)).not.toContain('up 10%');
  });

  it('two jobs of one opening due together, in two invocations at once: the lease lets one post, the other waits its turn and then finds it escalated', async () => {
    const title = 'EBS spend rose';
    expect((await send(title, 'up 15%')).statusCode).toBe(200);
    expect((await send(title, 'up 75%')).statusCode).toBe(200);
    const jobs = jobsSentBy('relay')
      .filter((j) => j.job.message.payload.title === title)
      .map((j) => j.job);
    const [stale, latest] = await twoMinutesEarlier(title, ...jobs);
    // The older job as it comes back after letting the later one go first: it waits for no later one any more.
    const deferred = { ...(stale as Job), deferred: true as const };
    const requested = () => teams.requests.filter((r) => JSON.stringify(r.body).includes(title));
    teams.queue(new URL(teams.url()).pathname, { kind: 'hold' });
    const sentBefore = jobsSentBy('delivery-retry').length;
    const first = feed(latest as Job);
    // The later job holds the lease and its post is under way at Teams while the older one runs.
    await vi.waitFor(() => expect(requested()).toHaveLength(1), { timeout: 30_000, interval: 50 });
    expect(await feed(deferred)).toEqual({ batchItemFailures: [] });
    teams.release();
    expect(await first).toEqual({ batchItemFailures: [] });
    expect(requested()).toHaveLength(1);
    const back = jobsSentBy('delivery-retry').slice(sentBefore);
    expect(back.map((j) => [j.job.updates, j.job.deferred])).toEqual([[0, true]]);
    expect(await feed(back[0]?.job as Job)).toEqual({ batchItemFailures: [] });
    expect(requested()).toHaveLength(1);
    expect(JSON.stringify(requested()[0]?.body)).toContain('up 75%');
    expect(retry.output()).toContain('"reason":"escalated_already"');
  });

  it('a job that a later one replaced ends at its next hop, while the later one waits on', async () => {
    const title = 'Redshift spend rose';
    expect((await send(title, 'up 5%')).statusCode).toBe(200);
    expect((await send(title, 'up 50%')).statusCode).toBe(200);
    const [opening, followUp] = jobsSentBy('relay')
      .filter((j) => j.job.message.payload.title === title)
      .map((j) => j.job);
    const sentBefore = jobsSentBy('delivery-retry').length;
    // Neither is due: the later one goes back and says so on the item; the older one then ends.
    expect(await feed(followUp as Job)).toEqual({ batchItemFailures: [] });
    expect(await feed(opening as Job)).toEqual({ batchItemFailures: [] });
    const back = jobsSentBy('delivery-retry').slice(sentBefore);
    expect(back.map((j) => [j.job.updates, j.job.message.payload.message])).toEqual([[1, 'up 50%']]);
    expect((await item(anomalyRecordId(message(title, ''), 'finops')))['escalationUpdates']).toEqual({ N: '1' });
    expect(retry.output()).toContain('"reason":"replaced"');
  });

  it("a relay whose escalation code cannot load posts the alert and answers 503; the platform's re-send sets the wait and posts nothing again", async () => {
    const copy = join(mkdtempSync(join(tmpdir(), 'escalation-relay-')), 'webhook-relay');
    cpSync(fileURLToPath(new URL('../../dist/webhook-relay', import.meta.url)), copy, { recursive: true });
    const chunk = join(copy, 'lazy-escalation-relay.mjs');
    const code = readFileSync(chunk);
    rmSync(chunk);
    const broken = await startBundle(copy, relayEnvironment);
    const post = (title: string) =>
      broken.invoke<Answer>(event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message(title, 'up 25%')) }), {
        timeoutMs: 15_000,
      });
    const title = 'Lambda spend rose';
    const waiting = () => jobsSentBy('relay').filter((j) => j.job.message.payload.title === title);
    try {
      const posted = slack.accepted(FINOPS_PATH).length;
      const first = await post(title);
      expect([first.statusCode, first.headers['retry-after']]).toEqual([503, '30']);
      expect(JSON.parse(first.body)).toMatchObject({
        error: 'escalation_unscheduled',
        destinations: ['finops'],
        failed: [{ name: 'finops', class: 'retryable', reason: 'escalation_unscheduled' }],
        delivered: ['finops'],
      });
      expect(slack.accepted(FINOPS_PATH)).toHaveLength(posted + 1);
      expect(broken.output()).toContain('escalation could not be scheduled');
      expect(broken.output()).toMatch(/"outcome":"unscheduled"[^\n]*"Escalations":1/);
      expect(waiting()).toEqual([]);
      const id = anomalyRecordId(message(title, ''), 'finops');
      const firstSeen = Number((await item(id))['firstSeen']?.N);
      expect((await item(id))['escalationUnscheduled']).toEqual({ N: String(firstSeen) });

      writeFileSync(chunk, code);
      const again = await post(title);
      expect(again.statusCode).toBe(200);
      expect(JSON.parse(again.body)).toMatchObject({ duplicate: ['finops'] });
      expect(slack.accepted(FINOPS_PATH)).toHaveLength(posted + 1);
      expect(waiting().map((j) => j.job)).toEqual([expect.objectContaining({ from: 'finops', firstSeen, updates: 0 })]);
      expect((await item(id))['escalationUnscheduled']).toBeUndefined();
      // Set once: a further re-send is a plain duplicate.
      expect((await post(title)).statusCode).toBe(200);
      expect(waiting()).toHaveLength(1);
    } finally {
      await broken.stop();
      rmSync(copy, { recursive: true, force: true });
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
    expect(proxies['delivery-retry'].actions()).toEqual(expect.arrayContaining(['sqs:SendMessage', 'dynamodb:UpdateItem']));
  });

  it('no webhook URL, triage key or link token in any log, answer, queue message or table item', async () => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    const queued = [...jobsSentBy('relay'), ...jobsSentBy('delivery-retry')].map((j) => j.body);
    expect(queued.length).toBeGreaterThan(0);
    const everything = [relay.output(), retry.output(), triage.output(), JSON.stringify(answers), ...queued, JSON.stringify(Items)].join(
      '\n',
    );
    expect(retry.output()).toContain('anomaly escalated');
    expect(tokens).toHaveLength(1);
    for (const secret of [slack.url(FINOPS_PATH), 'FINOPSHOOKSECRET', teams.url(), 'TEAMS-SIG-SECRET', TRIAGE_KEY, ...tokens]) {
      expect(everything).not.toContain(secret);
    }
  });
});

describe.skipIf(!moto)('an anomaly kept for its escalation, in the moto table', () => {
  it('lives at least until its escalation is due; once the usual window reaches past that, each follow-up is one write', async () => {
    const { name: tableName, dynamo } = await createDedupTable(moto as string);
    const client = awsJsonClient(DYNAMODB, { limits: DYNAMODB_LIMITS, env: awsEnvironment(moto as string) });
    const writes: string[] = [];
    const counted: AwsJsonCall = (operation, input, signal) => {
      writes.push(operation);
      return client(operation, input, signal);
    };
    const start = Math.floor(Date.now() / 1000);
    let clock = start;
    const ledger = dynamoLedger(counted, { tableName, windowSeconds: 3_600, now: () => clock * 1000 });
    const id = anomalyRecordId(message('Kept spend rose', ''), 'finops');
    const stored = async () =>
      (await dynamo.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: id } }, ConsistentRead: true }))).Item ?? {};
    /** One follow-up at `at`: the writes it took, and when its item expires after it. */
    const followUpAt = async (at: number) => {
      clock = at;
      writes.length = 0;
      await ledger.anomalyFollowedUp(id);
      return { writes: writes.length, expiresAt: Number((await stored())['expiresAt']?.N) };
    };

    expect(await ledger.startAnomaly(id)).toEqual({ kind: 'opened', firstSeen: start });
    const due = start + 7_200;
    await (await ledger.escalations()).keepAnomaly(id, start, due);
    // Within the wait the window would end sooner: the item lives until the escalation is due.
    expect(await followUpAt(start + 600)).toEqual({ writes: 1, expiresAt: due });
    // The window now reaches past it: the window it is, once in two writes, then in one each.
    expect(await followUpAt(start + 5_000)).toEqual({ writes: 2, expiresAt: start + 8_600 });
    expect(await followUpAt(start + 5_100)).toEqual({ writes: 1, expiresAt: start + 8_700 });
    expect(await followUpAt(start + 5_200)).toEqual({ writes: 1, expiresAt: start + 8_800 });
    expect((await stored())['followUps']).toEqual({ N: '4' });
  });
});

describe.skipIf(!moto)('the escalation of an opening that waited (grouped, queued), in the moto table', () => {
  it('is claimed only once the opening was shown, as the in-memory ledger answers; a mark on no item creates none', async () => {
    const { name: tableName, dynamo } = await createDedupTable(moto as string);
    const client = awsJsonClient(DYNAMODB, { limits: DYNAMODB_LIMITS, env: awsEnvironment(moto as string) });
    const ledger = dynamoLedger(client, { tableName, windowSeconds: 3_600 });
    const id = anomalyRecordId(message('Grouped spend rose', ''), 'finops');
    expect(await unpostedEscalationClaims(ledger, id)).toEqual(UNPOSTED_ESCALATION_ANSWERS);
    const gone = anomalyRecordId(message('Never opened', ''), 'finops');
    await (await ledger.escalations()).openingShown(gone, 1);
    expect(
      (await dynamo.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: gone } }, ConsistentRead: true }))).Item,
    ).toBeUndefined();
  });
});
