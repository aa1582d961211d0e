// eventbridge destinations end to end: the relay, delivery-retry and triage bundles put events on
// a bus in moto_server, whose rule sends everything from the relay to an SQS queue, where this
// test reads the events as a rule's target gets them.
import { randomUUID } from 'node:crypto';
import { CreateEventBusCommand, EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { type EventInput, httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { grantedActions, loadTemplate } from '../helpers/cloudformation.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { createQueues, type Poller, receiveAll, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const DOMAIN = 'cost-alerts.example.org';
const ORIGIN = `https://${DOMAIN}`;
const TRIAGE_KEY = 'eventbridge-loop-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const ACCOUNTS = { bus: '310000000001', missing: '310000000002' } as const;

interface Answer {
  statusCode: number;
  body: string;
}
/** An event as a rule's SQS target receives it. */
interface Delivered {
  source: string;
  'detail-type': string;
  detail: Record<string, unknown> & { anomaly: { id: string; update?: number; firstSeen?: string } };
}

/** What the platform sends: only fields the relay knows, as strings, so "as received" can be compared whole. */
const alert = (title: string, text: string, account: string) => ({
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z', destination_url: `${ORIGIN}/webhook` },
  payload: {
    title,
    message: text,
    account_id: account,
    account_name: 'Production <!here> payer',
    cloud_provider_type: 'aws',
  },
});

describe.skipIf(!moto)('eventbridge destinations: relay, delivery-retry and triage bundles against a bus in moto_server', () => {
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');
  const bus = `finops-${randomUUID().slice(0, 8)}`;
  let eventsQueueUrl: string;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let triage: RunningBundle;
  let poller: Poller;
  let proxies: Record<'relay' | 'delivery-retry' | 'triage', AwsProxy>;
  const events: Delivered[] = [];

  /** Everything the bus's rule delivered so far, in order. */
  const delivered = async () => {
    for (const message of await receiveAll(sqs, eventsQueueUrl)) events.push(JSON.parse(message.Body ?? '{}') as Delivered);
    return events;
  };
  const eventsAbout = async (title: string) =>
    (await delivered()).filter((e) => (e.detail['payload'] as { title?: string } | undefined)?.title === title);
  const send = (body: unknown) => {
    const built = httpApiEvent({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const event = { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN } };
    return relay.invoke<Answer>(event, { timeoutMs: 15_000 });
  };

  beforeAll(async () => {
    const aws = { endpoint: moto, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
    const eventBridge = new EventBridgeClient(aws);
    const [table, made, eventsQueue] = await Promise.all([
      createDedupTable(moto as string),
      createQueues(sqs, 30),
      sqs.send(new CreateQueueCommand({ QueueName: `bus-events-${randomUUID().slice(0, 8)}` })),
      eventBridge.send(new CreateEventBusCommand({ Name: bus })),
    ]);
    queues = made;
    eventsQueueUrl = eventsQueue.QueueUrl as string;
    const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: eventsQueueUrl, AttributeNames: ['QueueArn'] })))
      .Attributes?.['QueueArn'];
    // What a user's rule would match the relay's events by: their source.
    await eventBridge.send(
      new PutRuleCommand({ Name: 'cost-alerts', EventBusName: bus, EventPattern: JSON.stringify({ source: ['cost-alert-relay'] }) }),
    );
    await eventBridge.send(new PutTargetsCommand({ Rule: 'cost-alerts', EventBusName: bus, Targets: [{ Id: 'queue', Arn: queueArn }] }));

    const secrets = secretsClient(moto as string);
    const [configId, keyId] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations: {
          default: { type: 'eventbridge', eventBus: `arn:aws:events:us-east-1:123456789012:event-bus/${bus}` },
          bus: { type: 'eventbridge', eventBus: bus },
          missing: { type: 'eventbridge', eventBus: `${bus}-gone` },
        },
        routes: Object.entries(ACCOUNTS).map(([name, account]) => ({ when: { accountId: [account] }, to: [name] })),
      }),
      createSecret(secrets, TRIAGE_KEY, 'triage-key'),
    ]);
    const [relayProxy, retryProxy, triageProxy] = await Promise.all([1, 2, 3].map(() => startAwsProxy(moto as string)));
    proxies = { relay: relayProxy as AwsProxy, 'delivery-retry': retryProxy as AwsProxy, triage: triageProxy as AwsProxy };
    const shared = {
      ...awsEnvironment(moto as string),
      RELAY_CONFIG_SECRET_ID: configId,
      DEDUP_TABLE_NAME: table.name,
      TRIAGE_KEY_SECRET_ID: keyId,
    };
    const posting = {
      ...shared,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      POST_TIMEOUT_MS: '3000',
    };
    [relay, retry, triage] = await Promise.all([
      startBundle('webhook-relay', { ...posting, AWS_ENDPOINT_URL: proxies.relay.url }),
      startBundle('delivery-retry', { ...posting, AWS_ENDPOINT_URL: proxies['delivery-retry'].url }),
      startBundle('triage', { ...shared, AWS_ENDPOINT_URL: proxies.triage.url }),
    ]);
    poller = startPoller(sqs, queues, retry);
  });

  afterAll(async () => {
    await poller?.stop();
    await Promise.all([relay?.stop(), retry?.stop(), triage?.stop()]);
    await Promise.all(Object.values(proxies ?? {}).map((p) => p.close()));
  });

  it('an opening and its follow-up are events on the bus: the anomaly, its update, and the alert exactly as received', async () => {
    const opening = alert('EC2 spend *up* <!channel>', 'Daily cost rose 212% [x](https://evil.example)', ACCOUNTS.bus);
    expect(await send(opening)).toMatchObject({ statusCode: 200 });
    const followUp = alert(opening.payload.title, 'Daily cost rose 340%', ACCOUNTS.bus);
    expect(await send(followUp)).toMatchObject({ statusCode: 200 });

    expect(await waitFor(async () => (await eventsAbout(opening.payload.title)).length >= 2, 10_000)).toBe(true);
    const [first, second] = await eventsAbout(opening.payload.title);
    const id = anomalyRecordId(webhookMessageSchema.parse(opening), 'bus');
    expect(first).toMatchObject({ source: 'cost-alert-relay', 'detail-type': 'Cost Alert' });
    expect(first?.detail).toEqual({
      destination: 'bus',
      anomaly: { id, update: 0, firstSeen: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/) },
      metadata: opening.metadata,
      payload: opening.payload,
      triageUrl: expect.stringMatching(new RegExp(`^${ORIGIN}/triage/[\\w.-]+$`)),
    });
    expect(second?.detail).toMatchObject({ destination: 'bus', anomaly: { id, update: 1 }, payload: followUp.payload });
    // The follow-up's first-seen time is the table's, kept when the opening was posted.
    const seconds = (event: Delivered | undefined) => Date.parse(event?.detail.anomaly.firstSeen ?? '') / 1000;
    expect(Math.abs(seconds(second) - seconds(first))).toBeLessThanOrEqual(1);
  });

  it('PutEvents failing first (InternalFailure): queued (202), then put on the bus once by delivery-retry', {
    timeout: 60_000,
  }, async () => {
    const title = 'NAT gateway spend rose';
    proxies.relay.fault('AWSEvents.PutEvents', 'fail', 1);
    const answer = await send(alert(title, 'up 30%', ACCOUNTS.bus));
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ queued: ['bus'] });
    expect(await waitFor(async () => (await eventsAbout(title)).length === 1, 40_000)).toBe(true);
    expect(proxies['delivery-retry'].count('AWSEvents.PutEvents')).toBe(1);
    const jobs = poller.bodies.filter((body) => body.includes(title));
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0] as string)).toMatchObject({ destination: 'bus', lastReason: 'InternalFailure' });
  });

  it('members the relay does not know, a numeric account id and nulls arrive as sent: on the first post and after a retry', {
    timeout: 60_000,
  }, async () => {
    // What a rule may match on that the relay's schema does not name, or would make text of.
    const asSent = (title: string) => ({
      metadata: { object_type: 'anomaly_alert', timestamp: null, platform_event_id: `evt-${title.length}` },
      payload: {
        title,
        message: 'up 45%',
        account_id: Number(ACCOUNTS.bus),
        cloud_provider_type: 'aws',
        anomaly_score: 0.93,
        tags: { team: 'data', env: ['prod'] },
      },
    });
    const direct = asSent('EBS spend rose');
    expect(await send(direct)).toMatchObject({ statusCode: 200 });
    const retried = asSent('CloudFront spend rose');
    proxies.relay.fault('AWSEvents.PutEvents', 'fail', 1);
    const answer = await send(retried);
    expect(answer.statusCode).toBe(202);

    for (const body of [direct, retried]) {
      expect(await waitFor(async () => (await eventsAbout(body.payload.title)).length === 1, 40_000), body.payload.title).toBe(true);
      const [event] = await eventsAbout(body.payload.title);
      expect(event?.detail['metadata']).toEqual(body.metadata);
      expect(event?.detail['payload']).toEqual(body.payload);
    }
    // The job carried them, and still no secret: only what the platform sent and the relay's own fields.
    const [job] = poller.bodies.filter((b) => b.includes(retried.payload.title));
    expect(JSON.parse(job as string)).toMatchObject({ destination: 'bus', message: { received: retried } });
  });

  it('a bus that does not exist: refused (502) with AWS’s code, parked in the dead-letter queue with that reason', async () => {
    const title = 'S3 spend rose';
    const answer = await send(alert(title, 'up 20%', ACCOUNTS.missing));
    expect(answer.statusCode).toBe(502);
    expect(answer.body).not.toContain(`${bus}-gone`);
    const parked = (await receiveAll(sqs, queues.deadLetterQueueUrl)).filter((m) => m.Body?.includes(title));
    expect(parked).toHaveLength(1);
    expect(parked[0]?.MessageAttributes?.['reason']?.StringValue).toBe('ResourceNotFoundException');
    expect(parked[0]?.MessageAttributes?.['destination']?.StringValue).toBe('missing');
  });

  it('a triage action through the event’s Triage link puts a Cost Alert Triage event on the bus (triage bundle)', async () => {
    const title = 'Lambda spend rose';
    expect(await send(alert(title, 'up 80%', ACCOUNTS.bus))).toMatchObject({ statusCode: 200 });
    expect(await waitFor(async () => (await eventsAbout(title)).length === 1, 10_000)).toBe(true);
    const [opening] = await eventsAbout(title);
    const link = String(opening?.detail['triageUrl']);
    const path = link.slice(ORIGIN.length);
    const form: EventInput = {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=acknowledge&name=Dana%20%3C!here%3E',
    };
    const built = httpApiEvent(form);
    const page = await triage.invoke<Answer>(
      { ...built, requestContext: { ...built.requestContext, domainName: DOMAIN } },
      { timeoutMs: 10_000 },
    );
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Acknowledged by');
    expect(page.body).not.toContain('could not be told');

    const isNote = (e: Delivered) => e['detail-type'] === 'Cost Alert Triage' && e.detail.anomaly.id === opening?.detail.anomaly.id;
    expect(await waitFor(async () => (await delivered()).some(isNote), 10_000)).toBe(true);
    const note = events.find(isNote);
    expect(note).toMatchObject({ source: 'cost-alert-relay' });
    expect(note?.detail).toEqual({
      destination: 'bus',
      anomaly: { id: opening?.detail.anomaly.id },
      triage: {
        action: 'acknowledge',
        by: expect.stringContaining('Dana'),
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      },
    });
  });

  it('a bus named by ARN takes the same events (the default destination)', async () => {
    const title = 'RDS spend rose';
    expect(await send(alert(title, 'up 10%', '999999999999'))).toMatchObject({ statusCode: 200 });
    expect(await waitFor(async () => (await eventsAbout(title)).length === 1, 10_000)).toBe(true);
    expect((await eventsAbout(title))[0]?.detail).toMatchObject({ destination: 'default' });
  });

  it('every AWS call each function made is one its role in template.yaml grants (events:PutEvents on EventBusArns)', () => {
    const template = loadTemplate('template.yaml');
    for (const [key, name] of [
      ['relay', 'webhook-relay'],
      ['delivery-retry', 'delivery-retry'],
      ['triage', 'triage'],
    ] as const) {
      const actions = proxies[key].actions();
      expect(actions, name).toContain('events:PutEvents');
      const granted = grantedActions(template, name);
      expect(
        actions.filter((action) => !granted.has(action)),
        `${name} calls what its role does not grant`,
      ).toEqual([]);
    }
  });
});
