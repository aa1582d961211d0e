// The eventbridge destination kind in process: its configuration, the event it puts on a bus
// (through the relay's own signed AWS client, against a loopback fake of AWS), how it reads
// PutEvents' answers, the triage note, and how `npm start` and the preview page show it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import { awsJsonClient } from '../../lib/aws/json-client.js';
import { postingOver } from '../../lib/chat/post-json.js';
import { type AnomalyPost, type ChatService, OPENING, type PostOutcome } from '../../lib/chat/service.js';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import { parseRelayConfig } from '../../lib/config/load.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { createDelivery, type Target } from '../../lib/delivery/deliver.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { parseEscalationJob } from '../../lib/escalation/job-schema.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import type { EventBridgeDestination } from '../../lib/notify/eventbridge/config.js';
import {
  createPoster,
  type EventBridgePost,
  LOCAL_CREDENTIALS,
  MAX_ENTRY_BYTES,
  outcomeOfError,
} from '../../lib/notify/eventbridge/lazy-eventbridge-post.js';
import type { DestinationKind } from '../../lib/notify/kind.js';
import { createChatServices, KINDS, serviceFor } from '../../lib/notify/kinds.js';
import { toolsOf } from '../../lib/notify/tools.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createRelay } from '../../lib/relay/relay.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch } from '../../lib/retry/process-batch.js';
import { DeadlineExceededError } from '../../lib/shared/deadline.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { consolePathOf, createConsoles, loadKindTools } from '../../scripts/console-chat.js';
import { budgetOf } from '../helpers/budget.js';
import { type AwsCall, type FakeAws, startFakeAws } from '../helpers/fake-aws.js';
import { capturedLogger, manualClock, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { closeServer } from '../helpers/loopback-server.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';

const BUS = 'finops-alerts';
const destination: EventBridgeDestination = { type: 'eventbridge', eventBus: BUS };
// Sender text that would ping, link or format in a chat: on a bus it is data, and travels as sent.
const received = {
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z', destination_url: 'https://relay.example/webhook' },
  payload: {
    title: '<!channel> EC2 spend *up* [x](https://evil.example)',
    message: 'Daily cost rose 212% \u202E <script>alert(1)</script>',
    account_id: '123456789012',
    account_name: 'Production payer',
    cloud_provider_type: 'aws',
  },
};
const message = webhookMessageSchema.parse(received);
const LINK = 'https://api.example.com/triage/token-1';
const OK = { FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] };

let aws: FakeAws;
beforeAll(async () => {
  aws = await startFakeAws();
});
afterEach(() => {
  aws.calls.length = 0;
  aws.answer('AWSEvents.PutEvents', OK);
});
afterAll(() => aws.close());

const settings = () => ({ EVENTBRIDGE_ENDPOINT_URL: aws.url });
const awsEnv = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDFROMENV', AWS_SECRET_ACCESS_KEY: 'from-env-secret' };
const FIXED_NOW = Date.parse('2026-11-26T10:15:42.123Z');
const poster = (env: Record<string, string | undefined> = awsEnv, kindSettings: Record<string, unknown> | undefined = settings()) =>
  createPoster(awsJsonClient, kindSettings, { env, now: () => FIXED_NOW });
const service = () => KINDS.eventbridge.services({ posting: postingOver(), env: settings() }).eventbridge;

/** The one entry a PutEvents call carried, its detail parsed. */
function entryOf(call: AwsCall | undefined) {
  const [entry] = (call?.body['Entries'] ?? []) as Array<Record<string, string>>;
  return { ...entry, Detail: JSON.parse(entry?.['Detail'] ?? 'null') as Record<string, unknown> };
}

/** An entry's detail as PutEvents received it: the JSON text, every number as written there. */
const detailText = (call: AwsCall | undefined): string => ((call?.body['Entries'] ?? []) as Array<{ Detail?: string }>)[0]?.Detail ?? '';

const problemsOf = (destinations: Record<string, unknown>) => {
  try {
    parseRelayConfig(
      JSON.stringify({
        auth: { method: 'none' },
        destinations: { default: { url: 'https://hooks.slack.com/services/T/B/X' }, ...destinations },
      }),
    );
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigInvalidError);
    return (error as ConfigInvalidError).problems;
  }
};

describe('an eventbridge destination in the configuration', () => {
  it('names its bus: default, a custom bus, or a bus ARN in any partition', () => {
    for (const eventBus of [
      'default',
      'finops-alerts',
      'team.cost_alerts-2',
      'arn:aws:events:eu-west-1:123456789012:event-bus/finops-alerts',
      'arn:aws-us-gov:events:us-gov-west-1:123456789012:event-bus/default',
    ]) {
      expect(problemsOf({ bus: { type: 'eventbridge', eventBus } }), eventBus).toEqual([]);
    }
  });

  it('refuses what is neither a bus name nor a bus ARN, naming the path', () => {
    for (const eventBus of [
      '',
      'bus with spaces',
      'https://events.eu-west-1.amazonaws.com/',
      'arn:aws:sqs:eu-west-1:123456789012:queue',
      'arn:aws:events:eu-west-1:12345:event-bus/x',
      'x'.repeat(257),
    ]) {
      expect(problemsOf({ bus: { type: 'eventbridge', eventBus } }), eventBus).toEqual([
        { path: 'destinations.bus.eventBus', problem: 'must be a bus name ("default") or ARN' },
      ]);
    }
  });

  it('takes no mention, group or unknown key, and is never a destination without its type', () => {
    expect(problemsOf({ bus: { type: 'eventbridge', eventBus: 'default', mention: '<!here>' } }).map((p) => p.path)).toEqual([
      'destinations.bus.mention',
    ]);
    expect(problemsOf({ bus: { type: 'eventbridge', eventBus: 'default', group: { waitSeconds: 60 } } }).map((p) => p.path)).toEqual([
      'destinations.bus.group',
    ]);
    expect(problemsOf({ bus: { type: 'eventbridge', eventBus: 'default', source: 'x' } }).map((p) => p.path)).toEqual([
      'destinations.bus.source',
    ]);
    const untyped = problemsOf({ bus: { eventBus: 'default' } });
    expect(untyped).toEqual([
      expect.objectContaining({ path: 'destinations.bus.type', problem: expect.stringContaining('"type": "eventbridge"') }),
    ]);
  });
});

describe('the event of an alert', () => {
  const target: Target = { name: 'bus-finops', destination };
  const attempt = async (anomaly: AnomalyPost, withLink = true) => {
    const clock = manualClock();
    const delivery = createDelivery({
      services: createChatServices(undefined, settings()),
      postTimeoutMs: 2_000,
      logger: capturedLogger().logger,
      now: clock.now,
      sleep: clock.sleep,
      ...(withLink ? { triage: () => ({ link: LINK }) } : {}),
    });
    return delivery.attempt(target, message, budgetOf(10_000), anomaly, { origin: 'https://api.example.com' });
  };

  it('an opening: one signed PutEvents entry on the bus, its detail the destination, the anomaly and the alert as received', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    expect(await attempt(OPENING)).toEqual({ kind: 'delivered' });
    expect(aws.calls).toHaveLength(1);
    const [call] = aws.calls;
    expect(call?.target).toBe('AWSEvents.PutEvents');
    expect(call?.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(call?.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[\w-]+\/events\/aws4_request,/);
    const entry = entryOf(call);
    expect(entry).toEqual({
      Source: 'cost-alert-relay',
      DetailType: 'Cost Alert',
      EventBusName: BUS,
      Detail: {
        destination: 'bus-finops',
        anomaly: {
          id: anomalyRecordId(message, 'bus-finops'),
          update: 0,
          firstSeen: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        },
        metadata: received.metadata,
        payload: received.payload,
        triageUrl: LINK,
      },
    });
    const firstSeen = Date.parse((entry.Detail['anomaly'] as { firstSeen: string }).firstSeen);
    expect(firstSeen).toBeGreaterThanOrEqual(before);
    expect(firstSeen).toBeLessThanOrEqual(Date.now());
  });

  it('a follow-up: the same anomaly, its update number and when it was first seen; no link where none exists', async () => {
    const followUp: AnomalyPost = { kind: 'follow_up', firstSeenAt: '2026-11-26T08:00:00Z', updates: 3 };
    expect(await attempt(followUp, false)).toEqual({ kind: 'delivered' });
    const { Detail } = entryOf(aws.calls[0]);
    expect(Detail['anomaly']).toEqual({ id: anomalyRecordId(message, 'bus-finops'), update: 3, firstSeen: '2026-11-26T08:00:00Z' });
    expect(Detail).not.toHaveProperty('triageUrl');
  });

  it('a follow-up of an acknowledged or expected anomaly is marked with the decision, who made it and when', async () => {
    const at = Date.parse('2026-11-26T09:30:00Z') / 1000;
    const followUp: AnomalyPost = {
      kind: 'follow_up',
      firstSeenAt: '2026-11-26T08:00:00Z',
      updates: 2,
      triage: { state: 'acknowledged', by: 'Dana', at },
    };
    await poster()(BUS, { alert: [message, destination, followUp] }, { timeoutMs: 2_000 });
    expect(entryOf(aws.calls[0]).Detail['anomaly']).toMatchObject({
      update: 2,
      triage: { state: 'acknowledged', by: 'Dana', at: '2026-11-26T09:30:00Z' },
    });
  });

  it('an opening is first seen when it is posted, to the second', async () => {
    await poster()(BUS, { alert: [message, destination, OPENING, undefined, undefined] }, { timeoutMs: 2_000 });
    expect((entryOf(aws.calls[0]).Detail['anomaly'] as { firstSeen: string }).firstSeen).toBe('2026-11-26T10:15:42Z');
  });

  it('is refused, never cut, when it would be larger than PutEvents takes', async () => {
    const huge: WebhookMessage = webhookMessageSchema.parse({
      ...received,
      payload: { ...received.payload, message: 'x'.repeat(MAX_ENTRY_BYTES) },
    });
    expect(await poster()(BUS, { alert: [huge, destination, OPENING] }, { timeoutMs: 2_000 })).toEqual({
      kind: 'refused',
      reason: 'event_too_large',
    });
    expect(aws.calls).toHaveLength(0);
  });
});

describe('how the delivery core treats it', () => {
  it('a follow-up never waits for its opening (nothing is edited), every event carries the Triage link, and one bus is one pace', () => {
    const kind: DestinationKind<EventBridgeDestination> = KINDS.eventbridge;
    expect(kind.editsOpening(destination)).toBe(false);
    expect(kind.links(destination)).toBe(true);
    expect(kind.addressOf(destination)).toBe(BUS);
    expect(service().paceKey(BUS)).toBe(BUS);
    expect(service().minIntervalMs).toBe(0);
  });
});

describe('the triage note', () => {
  it('is an event of its own detail-type: the destination, the anomaly, the action, who and when', async () => {
    const extras = await KINDS.eventbridge.extras();
    const note = extras.triageNote(destination, {
      action: 'acknowledge',
      line: 'Acknowledged by Dana <!here> at 2026-11-26T09:30:00Z',
      by: 'Dana <!here>',
      at: Date.parse('2026-11-26T09:30:00Z') / 1000,
      destination: 'bus-finops',
      anomalyId: 'anomaly#abc',
    });
    expect(await service().post(BUS, note as EventBridgePost, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    expect(entryOf(aws.calls[0])).toEqual({
      Source: 'cost-alert-relay',
      DetailType: 'Cost Alert Triage',
      EventBusName: BUS,
      Detail: {
        destination: 'bus-finops',
        anomaly: { id: 'anomaly#abc' },
        triage: { action: 'acknowledge', by: 'Dana <!here>', at: '2026-11-26T09:30:00Z' },
      },
    });
  });
});

describe('the weekly summary', () => {
  it('is one event of its own detail-type: the week, its counts, and a record per anomaly with its state', async () => {
    const extras = await KINDS.eventbridge.extras();
    const from = Date.parse('2026-11-16T09:00:00Z') / 1000;
    const week = {
      destination: 'bus-finops',
      from,
      to: from + 7 * 86_400,
      asOf: from + 7 * 86_400,
      timeZone: 'UTC',
      counts: { open: 1, acknowledged: 1, expected: 0, snoozed: 0 },
      anomalies: [
        {
          id: 'anomaly#ec2',
          title: 'EC2 up',
          account: 'Prod (111111111111)',
          accountId: '111111111111',
          firstSeen: from + 3_600,
          updates: 2,
          state: 'open' as const,
          link: 'https://x/t',
        },
        {
          id: 'anomaly#s3',
          title: 'S3 up',
          account: '222222222222',
          accountId: '222222222222',
          firstSeen: from + 7_200,
          updates: 0,
          state: 'acknowledged' as const,
          by: 'Dana',
          at: from + 9_000,
        },
      ],
    };
    const summary = extras.summary(destination, week);
    expect(await service().post(BUS, summary as EventBridgePost, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    expect(entryOf(aws.calls[0])).toMatchObject({
      Source: 'cost-alert-relay',
      DetailType: 'Cost Alert Summary',
      EventBusName: BUS,
      Detail: {
        destination: 'bus-finops',
        week: { from: '2026-11-16T09:00:00Z', to: '2026-11-23T09:00:00Z', timeZone: 'UTC' },
        counts: { open: 1, acknowledged: 1, expected: 0, snoozed: 0 },
        anomalies: [
          { title: 'EC2 up', account: 'Prod (111111111111)', state: 'open', updates: 2, triageUrl: 'https://x/t' },
          { title: 'S3 up', state: 'acknowledged', by: 'Dana', at: '2026-11-16T11:30:00Z' },
        ],
      },
    });
  });
});

describe('where PutEvents goes and what it is signed with', () => {
  const alert: EventBridgePost = { alert: [message, destination, OPENING] };
  const credentialOf = (call: AwsCall | undefined) =>
    /Credential=([^/]+)\/\d{8}\/([^/]+)\/events\//.exec(call?.headers['authorization'] ?? '')?.slice(1);

  it('EVENTBRIDGE_ENDPOINT_URL redirects EventBridge alone, signed with the environment’s credentials and region', async () => {
    // AWS_ENDPOINT_URL stays where the other AWS calls go: here nowhere that answers.
    const outcome = await poster({ ...awsEnv, AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' })(
      BUS,
      alert,
      {
        timeoutMs: 2_000,
      },
    );
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(credentialOf(aws.calls[0])).toEqual(['AKIDFROMENV', 'eu-west-1']);
  });

  it('a local endpoint is signed with placeholders when the environment has no credentials or region (a laptop without AWS)', async () => {
    expect(await poster({})(BUS, alert, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    expect(credentialOf(aws.calls[0])).toEqual([LOCAL_CREDENTIALS.accessKeyId, 'us-east-1']);
  });

  it('without it, the AWS endpoint settings of every other call: AWS_ENDPOINT_URL_EVENTBRIDGE, then AWS_ENDPOINT_URL', async () => {
    expect(
      await poster({ ...awsEnv, AWS_ENDPOINT_URL_EVENTBRIDGE: aws.url, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' }, {})(BUS, alert, {
        timeoutMs: 2_000,
      }),
    ).toEqual({
      kind: 'delivered',
    });
    expect(await poster({ ...awsEnv, AWS_ENDPOINT_URL: aws.url }, undefined)(BUS, alert, { timeoutMs: 2_000 })).toEqual({
      kind: 'delivered',
    });
    expect(aws.calls.map(credentialOf)).toEqual([
      ['AKIDFROMENV', 'eu-west-1'],
      ['AKIDFROMENV', 'eu-west-1'],
    ]);
  });

  it('a function given an AWS port puts its events through the port’s client, as its other AWS calls, and reads its answers alike', async () => {
    const calls: Array<{ service: string; operation: string; input: Record<string, unknown> }> = [];
    const answers = [{ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }] }, OK];
    const services = createChatServices(undefined, settings(), {
      json: (service) => async (operation, input) => {
        calls.push({ service: service.signingName, operation, input });
        return answers.shift() ?? OK;
      },
    });
    const post = (serviceFor(services, destination) as ChatService<EventBridgePost>).post;
    expect(await post(BUS, alert, { timeoutMs: 2_000 })).toEqual({ kind: 'retryable', reason: 'ThrottlingException' });
    expect(await post(BUS, alert, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    expect(calls.map(({ service, operation }) => `${service} ${operation}`)).toEqual(['events PutEvents', 'events PutEvents']);
    expect(((calls[0]?.input['Entries'] ?? []) as Array<Record<string, string>>)[0]).toMatchObject({
      EventBusName: BUS,
      DetailType: 'Cost Alert',
    });
    // Its own client, pointed at the fake AWS by EVENTBRIDGE_ENDPOINT_URL, is never used.
    expect(aws.calls).toHaveLength(0);
  });

  it('settings it cannot use are retryable with what is missing, never guessed: no region for AWS itself', async () => {
    // The SDK's region lookup reads process.env and the profile files it names: none here.
    const saved = { ...process.env };
    for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) delete process.env[name];
    Object.assign(process.env, { AWS_CONFIG_FILE: '/nonexistent/config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials' });
    try {
      const outcome = await poster({ AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y', AWS_LAMBDA_FUNCTION_NAME: 'relay' }, {})(
        BUS,
        alert,
        {
          timeoutMs: 2_000,
        },
      );
      expect(outcome).toEqual({ kind: 'retryable', reason: 'region_missing' });
      expect(aws.calls).toHaveLength(0);
    } finally {
      process.env = saved;
    }
  });
});

describe('PutEvents answers', () => {
  const post = (timeoutMs = 2_000) => poster()(BUS, { alert: [message, destination, OPENING] }, { timeoutMs });
  const failedEntry = (ErrorCode: string) => ({
    FailedEntryCount: 1,
    Entries: [{ ErrorCode, ErrorMessage: 'secret text from AWS about arn:aws:x' }],
  });

  it('a 200 with a failed entry: throttling and internal failures are retryable, any other code refused with that code', async () => {
    const cases: Array<[string, PostOutcome]> = [
      ['ThrottlingException', { kind: 'retryable', reason: 'ThrottlingException' }],
      ['InternalFailure', { kind: 'retryable', reason: 'InternalFailure' }],
      ['AccessDeniedException', { kind: 'refused', reason: 'AccessDeniedException' }],
      ['ResourceNotFoundException', { kind: 'refused', reason: 'ResourceNotFoundException' }],
      ['MalformedDetail', { kind: 'refused', reason: 'MalformedDetail' }],
      ['InvalidArgument', { kind: 'refused', reason: 'InvalidArgument' }],
    ];
    for (const [code, expected] of cases) {
      aws.answer('AWSEvents.PutEvents', failedEntry(code));
      const outcome = await post();
      expect(outcome, code).toEqual(expected);
      expect(JSON.stringify(outcome)).not.toContain('secret text');
    }
  });

  it('an entry error that is no plain word, or an answer without an event id, is not trusted as delivered', async () => {
    aws.answer('AWSEvents.PutEvents', failedEntry('<b>Denied</b> because'));
    expect(await post()).toEqual({ kind: 'retryable', reason: 'unreadable_answer' });
    aws.answer('AWSEvents.PutEvents', { FailedEntryCount: 0, Entries: [] });
    expect(await post()).toEqual({ kind: 'retryable', reason: 'unreadable_answer' });
    aws.answer('AWSEvents.PutEvents', { status: 200, raw: '<html>' });
    expect(await post()).toEqual({ kind: 'retryable', reason: 'unreadable_answer' });
  });

  it('an HTTP error from AWS: throttling and 5xx retryable (with Retry-After), other types refused with the type’s word', async () => {
    const cases: Array<[Parameters<FakeAws['answer']>[1], PostOutcome]> = [
      [{ error: 'ThrottlingException' }, { kind: 'retryable', reason: 'ThrottlingException' }],
      [
        { status: 429, raw: '{}', headers: { 'retry-after': '3' } },
        { kind: 'retryable', reason: 'http_429', retryAfterMs: 3_000 },
      ],
      [
        { error: 'com.amazon.coral.service#InternalFailure', status: 500 },
        { kind: 'retryable', reason: 'InternalFailure' },
      ],
      [
        { status: 503, raw: 'Service Unavailable' },
        { kind: 'retryable', reason: 'http_503' },
      ],
      [
        { error: 'AccessDeniedException', status: 403 },
        { kind: 'refused', reason: 'AccessDeniedException' },
      ],
      [{ error: 'ResourceNotFoundException' }, { kind: 'refused', reason: 'ResourceNotFoundException' }],
      [{ error: 'ValidationException' }, { kind: 'refused', reason: 'ValidationException' }],
      [
        { status: 404, raw: 'Not Found' },
        { kind: 'refused', reason: 'http_404' },
      ],
      [
        { status: 307, raw: '', headers: { location: 'http://127.0.0.1:9/elsewhere' } },
        { kind: 'refused', reason: 'redirect_refused' },
      ],
    ];
    for (const [answer, expected] of cases) {
      aws.answer('AWSEvents.PutEvents', answer);
      expect(await post(), JSON.stringify(answer)).toEqual(expected);
    }
  });

  it('no answer within the post’s deadline is retryable as a timeout, and takes no longer', async () => {
    aws.answer('AWSEvents.PutEvents', 'hang');
    const started = performance.now();
    expect(await post(300)).toEqual({ kind: 'retryable', reason: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('failures without an answer, by name: network, missing settings, the SDK credential chain', () => {
    expect(outcomeOfError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toEqual({
      kind: 'retryable',
      reason: 'network_error',
    });
    expect(outcomeOfError(Object.assign(new Error('No region'), { reason: 'region_missing' }))).toEqual({
      kind: 'retryable',
      reason: 'region_missing',
    });
    expect(outcomeOfError(Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' }))).toEqual({
      kind: 'retryable',
      reason: 'credentials_unavailable',
    });
    expect(outcomeOfError(new DOMException('aborted', 'TimeoutError'))).toEqual({ kind: 'retryable', reason: 'timeout' });
    // The post's own deadline (withDeadline) is a timeout like the transport's, not a reason of its own.
    expect(outcomeOfError(new DeadlineExceededError('no answer', 'eventbridge_deadline'))).toEqual({
      kind: 'retryable',
      reason: 'timeout',
    });
    expect(outcomeOfError(undefined)).toEqual({ kind: 'retryable', reason: 'network_error' });
  });
});

describe('the alert as the platform sent it, through the relay and the retry queue', () => {
  // What the schema would change: a member it does not know, a number, a null, a padded kind.
  const sent = {
    metadata: { object_type: ' anomaly_alert ', timestamp: null, platform_event_id: 'evt-42' },
    payload: { title: 'EC2 spend rose', account_id: 123456789012, severity_score: 0.93, tags: { team: 'data' }, account_name: null },
  };
  const CHAT = 'https://hooks.slack.com/services/T0/B0/chat';
  const config = relayConfigSchema.parse({
    auth: { method: 'none' },
    destinations: { default: { type: 'eventbridge', eventBus: BUS }, chat: { url: CHAT } },
    routes: [{ to: ['default', 'chat'] }],
  });
  /** A chat that is down: its alert waits on the queue beside the bus's. */
  const down: NodeFetch = async (input) => ({
    ok: false,
    status: 503,
    statusText: '',
    url: String(input),
    headers: { get: () => null, entries: () => [] },
    text: async () => 'busy',
    json: async () => ({}),
    arrayBuffer: async () => new ArrayBuffer(0),
  });

  /**
   * `body` through the relay, with the bus throttled and the chat down, then the bus's job through
   * delivery-retry: each post's detail as PutEvents received it (a string), and the queued jobs.
   */
  async function relayThenRetry(body: string) {
    aws.calls.length = 0;
    const clock = manualClock();
    const { logger } = capturedLogger();
    const store = memoryConfigStore({ config });
    const retryQueue = memoryRetryQueue();
    const ports = { services: createChatServices(down, settings()), postTimeoutMs: 2_000, logger, now: clock.now, sleep: clock.sleep };
    const relay = createRelay({
      config: store,
      authenticate: createRequestAuthenticator({ check: createAuthenticator(), store, graceMs: 0, now: clock.now }),
      first: createDelivery({ ...ports, retryQueue }).first,
      logger,
      now: clock.now,
    });
    aws.answer('AWSEvents.PutEvents', { FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }] });
    const request = { requestId: 'r-1', method: 'POST', headers: { 'content-type': 'application/json' }, body, isBase64Encoded: false };
    expect((await relay(request, budgetOf(10_000))).statusCode).toBe(202);
    const first = entryOf(aws.calls[0]).Detail;
    const firstText = detailText(aws.calls[0]);

    const jobs = Object.fromEntries(retryQueue.jobs.map(({ job }) => [job.destination, JSON.stringify(job)]));
    expect(Object.keys(jobs).sort()).toEqual(['chat', 'default']);
    aws.calls.length = 0;
    aws.answer('AWSEvents.PutEvents', OK);
    const records = [{ messageId: 'm0', receiptHandle: 'h0', body: jobs['default']!, attributes: {} }];
    const result = await processBatch(records, {
      config: store,
      delivery: createDelivery(ports),
      messages: { changeVisibility: async () => undefined } as unknown as QueueMessageOps,
      pacer: createPacer(clock.now, clock.sleep),
      maxAttempts: 5,
      postTimeoutMs: 2_000,
      logger,
      budget: budgetOf(60_000),
    });
    expect(result).toEqual({ batchItemFailures: [] });
    const retried = entryOf(aws.calls[0]).Detail;
    const retriedText = detailText(aws.calls[0]);
    return { first, firstText, retried, retriedText, jobs };
  }

  it('a bus gets metadata and payload exactly as sent, on the first post and after a retry; a chat’s job holds the validated message only', async () => {
    const { first, retried, jobs } = await relayThenRetry(JSON.stringify(sent));
    expect(first['metadata']).toEqual(sent.metadata);
    expect(first['payload']).toEqual(sent.payload);
    expect(parseDeliveryJob(jobs['chat']!)?.message).not.toHaveProperty('received');
    expect(jobs['chat']).not.toContain('platform_event_id');
    expect(retried['metadata']).toEqual(sent.metadata);
    expect(retried['payload']).toEqual(sent.payload);
    expect(JSON.stringify(retried['payload'])).toContain('"account_id":123456789012');
  });

  it('numbers keep the digits they were sent with: past 2^53, int64’s largest, 1.0 and 1e3, on the first post and after a retry', async () => {
    // As a platform writes them; JSON.parse alone would make 9223372036854775807 into 9223372036854776000 (past int64).
    const numbers =
      '"max_int64":9223372036854775807,"cost_micros":12345678901234567891,"id":9007199254740993,' +
      '"ratio":1.0,"threshold":1e3,"offset":-0,"score":0.93,"nested":[18446744073709551615,{"n":2.50}]';
    const body = `{"metadata":{"object_type":"anomaly_alert","event_seq":90071992547409931},"payload":{"title":"EC2 spend rose",${numbers}}}`;
    const { firstText, retriedText, jobs } = await relayThenRetry(body);
    for (const detail of [firstText, retriedText]) {
      expect(detail).toContain(`"payload":{"title":"EC2 spend rose",${numbers}}`);
      expect(detail).toContain('"event_seq":90071992547409931');
    }
    // The job itself holds them as sent, and a chat's job none of it.
    expect(jobs['default']).toContain(numbers);
    expect(jobs['chat']).not.toContain('max_int64');
  });

  it('an escalation waiting on the queue to end at a bus carries those digits too', () => {
    const received = '{"metadata":{"object_type":"anomaly_alert"},"payload":{"title":"EC2 spend rose","max_int64":9223372036854775807}}';
    const body =
      '{"version":2,"kind":"escalation","from":"chat","firstSeen":1795773600,"updates":0,' +
      `"message":{"metadata":{"object_type":"anomaly_alert"},"payload":{"title":"EC2 spend rose"},"received":${received}}}`;
    const job = parseEscalationJob(body);
    expect(JSON.stringify(job?.message.received)).toBe(received);
  });
});

describe('npm start and the preview page', () => {
  it('the console plays PutEvents at /console/eventbridge, prints the event, and records it; only EventBridge is pointed there', async () => {
    const tools = await loadKindTools();
    const printed: string[] = [];
    const recorded: unknown[] = [];
    const consoles = createConsoles(
      tools,
      (line) => printed.push(line),
      (type, body) => recorded.push([type, body]),
    );
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => consoles(consolePathOf(req.url ?? '')!, req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`;
      const environment = tools.eventbridge.consoleEnvironment?.(base) ?? {};
      expect(environment).toEqual({ EVENTBRIDGE_ENDPOINT_URL: `${base}/eventbridge` });
      const outcome = await createPoster(awsJsonClient, environment, { env: {} })(
        BUS,
        { alert: [message, destination, OPENING, { link: LINK }, { anomalyId: 'anomaly#1', destination: 'bus-finops' }] },
        { timeoutMs: 2_000 },
      );
      expect(outcome).toEqual({ kind: 'delivered' });
    } finally {
      await closeServer(server);
    }
    const shown = printed.join('\n');
    expect(shown).toContain('Amazon EventBridge event');
    expect(shown).toContain('Cost Alert');
    expect(shown).toContain(`on bus ${BUS}`);
    expect(shown).toContain('"triageUrl": "https://api.example.com/triage/token-1"');
    expect(recorded).toEqual([['eventbridge', { Entries: [expect.objectContaining({ Source: 'cost-alert-relay', EventBusName: BUS })] }]]);
  });

  it('the preview page shows each event as a labelled JSON card, every value escaped', async () => {
    const tools = await toolsOf('eventbridge');
    const body = {
      Entries: [
        { Source: 'cost-alert-relay', DetailType: 'Cost Alert', EventBusName: BUS, Detail: JSON.stringify({ payload: received.payload }) },
      ],
    };
    const page = tools.preview(body, '10:15:42').value;
    expect(page).toContain('<dt>Event bus</dt><dd>finops-alerts</dd>');
    expect(page).toContain('<dt>Detail type</dt><dd>Cost Alert</dd>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>');
    expect(tools.preview({}, '10:15:42').value).toContain('without entries');
  });

  it('posts no person reads: nothing of them is shown as text, and the alert travels exactly as received', async () => {
    const tools = await toolsOf('eventbridge');
    expect(tools.conformance.shown({ Entries: [{ Detail: '{}' }] })).toEqual([]);
    const payload = serviceFor(createChatServices(undefined, settings()), destination).format(message, destination, OPENING);
    expect(payload).toEqual({ alert: [message, destination, OPENING] });
  });
});
