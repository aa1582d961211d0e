// The Jira kind end to end: the built relay, delivery-retry and triage bundles against a loopback
// Jira Cloud (test/helpers/jira-server.ts), with the table, queues and secrets in moto_server.
import { GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakeJira, startFakeJira } from '../helpers/jira-server.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { createQueues, type Poller, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const EMAIL = 'finops-bot@acme.example';
const TOKEN = 'ATATT3xJIRA-E2E-TOKEN-51c7';
const WRONG_TOKEN = 'ATATT3xJIRA-E2E-REVOKED-0d2e';
const TRIAGE_KEY = 'jira-e2e-triage-key-abcdefghijklmnopqrstuvwxyz-0123456789';
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
// Each destination is routed by its own account; `default` takes the rest.
const ACCOUNTS = { default: '310000000001', locked: '310000000002' } as const;
type Destination = keyof typeof ACCOUNTS;

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

const message = (title: string, text: string, destination: Destination = 'default'): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-24T09:00:00Z' },
    payload: { title, message: text, account_id: ACCOUNTS[destination], account_name: 'Production payer', cloud_provider_type: 'aws' },
  });

/** The texts of an ADF document, joined; and the links its marks carry. */
const textOf = (doc: unknown): string =>
  JSON.stringify(doc)
    .match(/"text":"[^"]*"/g)
    ?.join('') ?? '';
const linksIn = (doc: unknown): string[] => [...JSON.stringify(doc).matchAll(/"href":"([^"]+)"/g)].map((m) => m[1] as string);

describe.skipIf(!moto)('Jira destinations: the relay, delivery-retry and triage bundles against a loopback Jira Cloud', () => {
  let jira: FakeJira;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  let poller: Poller;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const answers: Answer[] = [];

  /** An API Gateway event as it arrives on the API's own domain, so that messages link back to it. */
  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: 'cost-alerts' } };
  };
  const send = async (title: string, text: string, destination: Destination = 'default') => {
    const answer = await relay.invoke<Answer>(
      event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message(title, text, destination)) }),
      { timeoutMs: 15_000 },
    );
    answers.push(answer);
    return answer;
  };
  const issueTitled = (title: string) => [...jira.issues.values()].filter((issue) => issue.fields['summary'] === title);
  const commentsPostedOn = (key: string) => jira.requests.filter((r) => r.path === `/rest/api/3/issue/${key}/comment`);
  const stored = async (title: string) =>
    (
      await table.dynamo.send(
        new GetItemCommand({
          TableName: table.name,
          Key: { id: { S: anomalyRecordId(message(title, ''), 'default') } },
          ConsistentRead: true,
        }),
      )
    ).Item ?? {};

  beforeAll(async () => {
    [jira, table, queues] = await Promise.all([startFakeJira({ [EMAIL]: TOKEN }), createDedupTable(moto as string), createQueues(sqs)]);
    const secrets = secretsClient(moto as string);
    const site = { type: 'jira', site: jira.url, project: 'FIN', email: EMAIL, labels: ['cost-anomaly'] };
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations: { default: { ...site, apiToken: TOKEN }, locked: { ...site, apiToken: WRONG_TOKEN } },
        routes: [{ when: { accountId: [ACCOUNTS.locked] }, to: ['locked'] }],
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
    };
    const env = {
      ...shared,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      POST_TIMEOUT_MS: '2000',
    };
    [relay, retry, triage] = await Promise.all([
      startBundle('webhook-relay', env),
      startBundle('delivery-retry', env),
      startBundle('triage', shared),
    ]);
    poller = startPoller(sqs, queues, retry);
  });

  afterAll(async () => {
    await poller?.stop();
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop()]);
    await jira?.close();
  });

  it('an opening creates an issue with a Triage link; a follow-up comments on it; acknowledging through the link comments "Acknowledged by …"', async () => {
    const title = 'EC2 spend rose';
    expect((await send(title, 'up 20%')).statusCode).toBe(200);
    const [issue] = issueTitled(title);
    expect(issue?.fields).toMatchObject({ project: { key: 'FIN' }, issuetype: { name: 'Task' }, labels: ['cost-anomaly'] });
    expect(textOf(issue?.fields['description'])).toContain('up 20%');
    const key = issue?.key as string;
    // The anomaly's state keeps where its issue is.
    expect(await stored(title)).toMatchObject({ channel: { S: 'FIN' }, ts: { S: key } });

    expect((await send(title, 'up 45%')).statusCode).toBe(200);
    expect(issueTitled(title)).toHaveLength(1);
    expect(issue?.comments).toHaveLength(1);
    expect(textOf(issue?.comments[0])).toMatch(/Update 1 of an anomaly first seen 2026-/);
    expect(textOf(issue?.comments[0])).toContain('up 45%');

    const [link] = linksIn(issue?.fields['description']);
    expect(link?.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const path = (link as string).slice(ORIGIN.length);
    const page = await triage.invoke<Answer>(
      event({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=acknowledge&name=Dana%20%3C!here%3E',
      }),
      { timeoutMs: 10_000 },
    );
    answers.push(page);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Acknowledged by');
    expect(page.body).not.toContain('could not be told');
    expect(issue?.comments).toHaveLength(2);
    expect(issue?.comments[1]).toEqual({
      type: 'doc',
      version: 1,
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: expect.stringMatching(/^Acknowledged by Dana ＜!here＞ at \d{4}-/) }] },
      ],
    });
  });

  it('throttled (429, Retry-After) and unavailable (503): queued, then posted once by delivery-retry, the follow-up still on the same issue', {
    timeout: 60_000,
  }, async () => {
    const title = 'RDS spend rose';
    jira.queue({ status: 429, retryAfterSeconds: 2 });
    const opening = await send(title, 'up 60%');
    expect(opening.statusCode).toBe(202);
    expect(JSON.parse(opening.body)).toMatchObject({ queued: ['default'] });
    expect(await waitFor(() => issueTitled(title).length === 1, 30_000)).toBe(true);
    const [issue] = issueTitled(title);
    const created = jira.requests.filter((r) => r.path === '/rest/api/3/issue' && JSON.stringify(r.body).includes(title));
    expect(created.map((r) => r.answeredStatus)).toEqual([429, 201]);
    expect((created[1]?.receivedAt ?? 0) - (created[0]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1_900);
    // delivery-retry kept the issue's key as the relay does.
    expect(await waitFor(async () => (await stored(title))['ts']?.S === issue?.key, 10_000)).toBe(true);

    jira.queue({ status: 503, retryAfterSeconds: 1 });
    const followUp = await send(title, 'up 75%');
    expect(followUp.statusCode).toBe(202);
    expect(await waitFor(() => (issue?.comments.length ?? 0) === 1, 30_000)).toBe(true);
    expect(textOf(issue?.comments[0])).toContain('up 75%');
    expect(issueTitled(title)).toHaveLength(1);
    expect(commentsPostedOn(issue?.key as string).map((r) => r.answeredStatus)).toEqual([503, 201]);
  });

  it('bad credentials (401): parked in the dead-letter queue with the reason, answered 502 naming the destination', async () => {
    const answer = await send('S3 spend rose', 'up 10%', 'locked');
    expect(answer.statusCode).toBe(502);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'chat_refused', destinations: [{ name: 'locked', reason: 'http_401' }] });
    const parked = await receiveParked();
    expect(parked.map((m) => [m.MessageAttributes?.['destination']?.StringValue, m.MessageAttributes?.['reason']?.StringValue])).toEqual([
      ['locked', 'http_401'],
    ]);
    expect(parked[0]?.Body).toContain('S3 spend rose');
  });

  it('no API token, Basic credentials or site address in any log, answer, queue message or table item', async () => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    const everything = [
      relay.output(),
      retry.output(),
      triage.output(),
      JSON.stringify(answers),
      ...poller.bodies,
      JSON.stringify(Items),
    ].join('\n');
    expect(poller.bodies.length).toBeGreaterThan(0);
    expect(Items.length).toBeGreaterThan(0);
    for (const secret of [TOKEN, WRONG_TOKEN, Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64'), jira.url]) {
      expect(everything).not.toContain(secret);
    }
  });

  async function receiveParked(): Promise<Message[]> {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
        }),
      );
      if (Messages.length > 0) return Messages;
    }
    return [];
  }
});
