import { GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryRecordId } from '../../lib/dedup/fingerprint.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { type FakePagerDuty, startFakePagerDuty } from '../helpers/pagerduty-server.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { createQueues, type Poller, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

// PagerDuty destinations end to end: the relay, delivery-retry and triage bundles against
// moto_server and a loopback Events API, as the stack wires them.
const moto = motoUrl();
const ONCALL_KEY = 'R0ONCALL0E2E0KEY0123456789abcdef';
const REFUSED_KEY = 'R0REFUSED0E2E0KEY0123456789abcde';
const TRIAGE_KEY = 'pagerduty-loop-key-9a7c-abcdefghijklmnopqrstuvwxyz-0123456789';
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const ACCOUNT_REFUSED = '310000000002';

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

interface Event {
  routing_key: string;
  event_action: string;
  dedup_key?: string;
  payload?: { summary: string; severity: string; custom_details?: Record<string, unknown> } & Record<string, unknown>;
  links?: Array<{ href: string; text: string }>;
}

const alert = (title: string, text: string, account = '310000000001'): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z' },
    payload: { title, message: text, account_id: account, account_name: 'Production payer', cloud_provider_type: 'aws' },
  });

describe.skipIf(!moto)('PagerDuty destinations: the relay, delivery-retry and triage bundles against a loopback Events API', () => {
  let pagerDuty: FakePagerDuty;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  let poller: Poller;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');

  /** An API Gateway event as it arrives on the API's own domain, where the Triage links lead. */
  const event = (input: EventInput) => {
    const built = httpApiEvent(input);
    return { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN, domainPrefix: 'cost-alerts' } };
  };
  const send = (message: WebhookMessage) =>
    relay.invoke<Answer>(event({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) }), { timeoutMs: 15_000 });
  const follow = (link: string, form?: string) => {
    expect(link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const path = link.slice(ORIGIN.length);
    const input: EventInput =
      form === undefined
        ? { method: 'GET', path }
        : { method: 'POST', path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form };
    return triage.invoke<Answer>(event(input), { timeoutMs: 10_000 });
  };
  const events = (routingKey = ONCALL_KEY) => pagerDuty.accepted(routingKey).map((r) => r.body as unknown as Event);

  beforeAll(async () => {
    [pagerDuty, table, queues] = await Promise.all([
      startFakePagerDuty(),
      createDedupTable(moto as string),
      createQueues(sqsClient(moto as string), 30),
    ]);
    const secrets = secretsClient(moto as string);
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations: {
          default: { type: 'pagerduty', routingKey: ONCALL_KEY, severity: 'error' },
          refused: { type: 'pagerduty', routingKey: REFUSED_KEY },
        },
        routes: [{ when: { accountId: [ACCOUNT_REFUSED] }, to: ['refused'] }],
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
      PAGERDUTY_EVENTS_URL: pagerDuty.url,
    };
    const posting = {
      ...shared,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      POST_TIMEOUT_MS: '2000',
    };
    [relay, retry, triage] = await Promise.all([
      startBundle('webhook-relay', posting),
      startBundle('delivery-retry', posting),
      startBundle('triage', shared),
    ]);
    poller = startPoller(sqs, queues, retry);
  });

  afterAll(async () => {
    await poller?.stop();
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop()]);
    await pagerDuty?.close();
  });

  it('an opening and its follow-up are triggers of one PagerDuty alert, under the anomaly’s dedup key, with a Triage link', async () => {
    const opening = alert('EC2 spend rose <!channel>', 'up 212%');
    const answer = await send(opening);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ delivered: ['default'] });
    const dedupKey = anomalyRecordId(opening, 'default');
    const [first] = events();
    expect(first).toMatchObject({
      routing_key: ONCALL_KEY,
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload: {
        summary: 'EC2 spend rose ＜!channel＞',
        source: 'cost-alert-relay',
        severity: 'error',
        component: '310000000001',
        group: 'aws',
        class: 'anomaly_alert',
        custom_details: { message: 'up 212%', 'account name': 'Production payer' },
      },
    });
    expect(first?.links).toEqual([{ href: expect.stringMatching(`^${ORIGIN}/triage/`), text: 'Triage' }]);

    const followUp = await send(alert('EC2 spend rose <!channel>', 'up 340%'));
    expect(followUp.statusCode).toBe(200);
    const second = events()[1];
    expect(second).toMatchObject({
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload: { custom_details: { message: 'up 340%', update: 1 } },
    });
    expect(second?.payload?.custom_details?.['first seen']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(pagerDuty.alerts.get(dedupKey)).toMatchObject({ status: 'triggered', triggers: 2 });
  });

  it('Acknowledge through the Triage link acknowledges that alert; Expected resolves it', async () => {
    const opening = alert('RDS spend rose', 'up 60%');
    expect((await send(opening)).statusCode).toBe(200);
    const dedupKey = anomalyRecordId(opening, 'default');
    const link = events().at(-1)?.links?.[0]?.href as string;

    // The page shows the anomaly and changes nothing.
    const before = pagerDuty.requests.length;
    const page = await follow(link);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('RDS spend rose');
    expect(pagerDuty.requests).toHaveLength(before);

    const acknowledged = await follow(link, 'action=acknowledge&name=Dana');
    expect(acknowledged.statusCode).toBe(200);
    expect(acknowledged.body).toContain('Acknowledged by Dana');
    expect(acknowledged.body).not.toContain('could not be told');
    expect(events().at(-1)).toEqual({ routing_key: ONCALL_KEY, event_action: 'acknowledge', dedup_key: dedupKey });
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('acknowledged');

    expect((await follow(link, 'action=expected&name=Dana')).statusCode).toBe(200);
    expect(events().at(-1)).toEqual({ routing_key: ONCALL_KEY, event_action: 'resolve', dedup_key: dedupKey });
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('resolved');
  });

  it('Reopen through the Triage link triggers the alert again with its title, account and link, and who reopened it', async () => {
    const opening = alert('S3 spend rose <!here>', 'up 80%');
    expect((await send(opening)).statusCode).toBe(200);
    const dedupKey = anomalyRecordId(opening, 'default');
    const link = events().at(-1)?.links?.[0]?.href as string;
    expect((await follow(link, 'action=expected&name=Dana')).statusCode).toBe(200);
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('resolved');

    const reopened = await follow(link, 'action=reopen&name=Dana');
    expect(reopened.statusCode).toBe(200);
    expect(reopened.body).not.toContain('could not be told');
    const trigger = events().at(-1);
    // A resolved alert is opened anew from this trigger: it reads as the alert, not as the note.
    expect(trigger).toMatchObject({
      routing_key: ONCALL_KEY,
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload: {
        summary: 'S3 spend rose ＜!here＞',
        source: 'cost-alert-relay',
        severity: 'error',
        custom_details: { account: 'Production payer (310000000001)', triage: expect.stringMatching(/^Reopened by Dana at /) },
      },
      links: [{ href: link, text: 'Triage' }],
    });
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('triggered');
  });

  it('after Expected, follow-ups reach PagerDuty as nothing: no trigger opens a new incident, nobody is paged again', async () => {
    const opening = alert('EKS spend rose', 'up 70%');
    expect((await send(opening)).statusCode).toBe(200);
    const dedupKey = anomalyRecordId(opening, 'default');
    const link = events().at(-1)?.links?.[0]?.href as string;
    expect((await follow(link, 'action=expected&name=Dana')).statusCode).toBe(200);

    for (const text of ['up 140%', 'up 210%']) {
      const answer = await send(alert('EKS spend rose', text));
      expect(answer.statusCode).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ delivered: ['default'] });
    }
    expect(
      events()
        .filter((e) => e.dedup_key === dedupKey)
        .map((e) => e.event_action),
    ).toEqual(['trigger', 'resolve']);
    expect(pagerDuty.pages(dedupKey)).toBe(1);
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('resolved');
  });

  it('Reopen after Acknowledge resolves the acknowledged incident and triggers: on-call is paged again', async () => {
    const opening = alert('ECS spend rose', 'up 75%');
    expect((await send(opening)).statusCode).toBe(200);
    const dedupKey = anomalyRecordId(opening, 'default');
    const link = events().at(-1)?.links?.[0]?.href as string;
    expect((await follow(link, 'action=acknowledge&name=Dana')).statusCode).toBe(200);
    const reopened = await follow(link, 'action=reopen&name=Dana');
    expect(reopened.body).not.toContain('could not be told');
    expect(
      events()
        .filter((e) => e.dedup_key === dedupKey)
        .map((e) => e.event_action),
    ).toEqual(['trigger', 'acknowledge', 'resolve', 'trigger']);
    expect(pagerDuty.pages(dedupKey)).toBe(2);
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('triggered');
  });

  it('when a snooze has ended, the next follow-up pages again; the one after merges into that incident', async () => {
    const opening = alert('EFS spend rose', 'up 80%');
    expect((await send(opening)).statusCode).toBe(200);
    const dedupKey = anomalyRecordId(opening, 'default');
    const link = events().at(-1)?.links?.[0]?.href as string;
    expect((await follow(link, 'action=snooze&name=Dana')).statusCode).toBe(200);
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('acknowledged');
    expect(JSON.parse((await send(alert('EFS spend rose', 'up 90%'))).body)).toMatchObject({ snoozed: ['default'] });

    // A day goes by: the anomaly's item as it would be, its opening and the snooze a day earlier and ended.
    const now = Math.floor(Date.now() / 1000);
    await table.dynamo.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: { id: { S: dedupKey } },
        UpdateExpression: 'SET firstSeen = :opened, triageAt = :snoozed, triageUntil = :ended',
        ExpressionAttributeValues: {
          ':opened': { N: String(now - 86_500) },
          ':snoozed': { N: String(now - 86_450) },
          ':ended': { N: String(now - 50) },
        },
      }),
    );
    expect((await send(alert('EFS spend rose', 'up 120%'))).statusCode).toBe(200);
    expect(pagerDuty.pages(dedupKey)).toBe(2);
    expect(pagerDuty.alerts.get(dedupKey)?.status).toBe('triggered');
    expect((await send(alert('EFS spend rose', 'up 150%'))).statusCode).toBe(200);
    expect(pagerDuty.pages(dedupKey)).toBe(2);
    expect(pagerDuty.alerts.get(dedupKey)?.triggers).toBe(2);
    expect(
      events()
        .filter((e) => e.dedup_key === dedupKey)
        .map((e) => e.event_action),
    ).toEqual(['trigger', 'acknowledge', 'resolve', 'trigger', 'trigger']);
  });

  it('a follow-up waiting on the retry queue when the anomaly is marked expected is not triggered by delivery-retry', {
    timeout: 60_000,
  }, async () => {
    const opening = alert('Redshift spend rose', 'up 50%');
    expect((await send(opening)).statusCode).toBe(200);
    const dedupKey = anomalyRecordId(opening, 'default');
    const link = events().at(-1)?.links?.[0]?.href as string;
    // Triggers are throttled until Expected is recorded: the follow-up cannot get through before.
    pagerDuty.setBehaviour(ONCALL_KEY, { kind: 'throttled', retryAfterSeconds: 1 }, 'trigger');
    const followUp = alert('Redshift spend rose', 'up 95%');
    try {
      expect((await send(followUp)).statusCode).toBe(202);
      expect((await follow(link, 'action=expected&name=Dana')).statusCode).toBe(200);
    } finally {
      pagerDuty.setBehaviour(ONCALL_KEY, { kind: 'ok' }, 'trigger');
    }
    const record = async () =>
      (
        await table.dynamo.send(
          new GetItemCommand({ TableName: table.name, Key: { id: { S: deliveryRecordId(followUp, 'default') } }, ConsistentRead: true }),
        )
      ).Item?.['state']?.S;
    expect(await waitFor(async () => (await record()) === 'delivered', 40_000)).toBe(true);
    expect(
      events()
        .filter((e) => e.dedup_key === dedupKey)
        .map((e) => e.event_action),
    ).toEqual(['trigger', 'resolve']);
    expect(pagerDuty.pages(dedupKey)).toBe(1);
  });

  it('PagerDuty throttled (429 + Retry-After): queued (202), then sent once by delivery-retry with the same key and link', {
    timeout: 60_000,
  }, async () => {
    pagerDuty.queue(ONCALL_KEY, { kind: 'throttled', retryAfterSeconds: 1 });
    const message = alert('S3 spend rose', 'up 20%');
    const answer = await send(message);
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ queued: ['default'] });
    const dedupKey = anomalyRecordId(message, 'default');
    expect(await waitFor(() => events().some((e) => e.dedup_key === dedupKey), 40_000)).toBe(true);
    const tries = pagerDuty.requests.filter((r) => r.body['dedup_key'] === dedupKey);
    expect(tries.map((r) => r.answeredStatus)).toEqual([429, 202]);
    expect(tries[1]!.receivedAt - tries[0]!.receivedAt).toBeGreaterThanOrEqual(900);
    // The origin travelled with the job: the retried event still links to the triage page.
    expect((tries[1]!.body as unknown as Event).links?.[0]?.href.startsWith(`${ORIGIN}/triage/`)).toBe(true);
  });

  it('a refused event is answered 502 and parked with PagerDuty’s reason, naming the destination, never its key', async () => {
    pagerDuty.setBehaviour(REFUSED_KEY, { kind: 'error', status: 400 });
    const answer = await send(alert('Lambda spend rose', 'up 90%', ACCOUNT_REFUSED));
    expect(answer.statusCode).toBe(502);
    expect(JSON.parse(answer.body)).toMatchObject({ destinations: [{ name: 'refused', reason: 'invalid_event' }] });
    const parked = await receiveParked();
    expect(parked.map((m) => [m.MessageAttributes?.['destination']?.StringValue, m.MessageAttributes?.['reason']?.StringValue])).toEqual([
      ['refused', 'invalid_event'],
    ]);
    expect(parked[0]?.Body).not.toContain(REFUSED_KEY);
    expect(answer.body).not.toContain(REFUSED_KEY);
  });

  it('no log line, queued job, table item or answer holds a routing key', async () => {
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name, ConsistentRead: true }));
    expect(Items.length).toBeGreaterThan(0);
    const everything = [JSON.stringify(Items), ...poller.bodies, relay.output(), retry.output(), triage.output()].join('\n');
    expect(poller.bodies.length).toBeGreaterThan(0);
    for (const key of [ONCALL_KEY, REFUSED_KEY]) expect(everything).not.toContain(key);
    // The deliveries were counted by destination type.
    expect(relay.output()).toMatch(/"destinationType":"pagerduty"/);
  });

  async function receiveParked(): Promise<Message[]> {
    const found: Message[] = [];
    const deadline = Date.now() + 15_000;
    while (found.length === 0 && Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 600,
        }),
      );
      found.push(...Messages);
    }
    return found;
  }
});
