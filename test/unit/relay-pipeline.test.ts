import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import type { PostOutcome } from '../../lib/chat/service.js';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import type { RelayConfig } from '../../lib/config/schema.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import type { HttpRequest } from '../../lib/inbound/types.js';
import { addressOf } from '../../lib/notify/kinds.js';
import { createRelay } from '../../lib/relay/relay.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService, manualClock, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { settledWithin } from '../helpers/timer-clock.js';

const PASSWORD = 'pipeline-secret-9f1';
const config: RelayConfig = {
  auth: { method: 'basic', basic: { username: 'relay', password: PASSWORD }, headers: [] },
  destinations: {
    default: { url: 'https://hooks.slack.com/services/T0/B0/default-hook' },
    aws: { url: 'https://hooks.slack.com/services/T0/B1/aws-hook' },
  },
  routes: [{ when: { cloudProvider: ['aws'] }, to: ['aws', 'default'] }],
};
const authorization = `Basic ${Buffer.from(`relay:${PASSWORD}`).toString('base64')}`;
const alert = {
  metadata: { object_type: 'anomaly_alert' },
  payload: { title: 'EC2 up 40%', cloud_provider_type: 'AWS', account_id: '123' },
};

function request(overrides: Partial<HttpRequest> = {}): HttpRequest {
  return {
    requestId: 'req-1',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify(alert),
    isBase64Encoded: false,
    ...overrides,
  };
}

function setup(script: PostOutcome[] = [], current: RelayConfig | Error = config, queue = false) {
  const clock = manualClock();
  const log = capturedLogger();
  const slack = fakeChatService(script);
  const store = memoryConfigStore(current instanceof Error ? current : { config: current });
  const retryQueue = memoryRetryQueue();
  const metrics = memoryMetrics();
  const relay = createRelay({
    config: store,
    authenticate: createRequestAuthenticator({ check: createAuthenticator(), store, graceMs: 0, now: clock.now }),
    first: createDelivery({
      services: chatServices({ slack }),
      postTimeoutMs: 5_000,
      logger: log.logger,
      metrics,
      now: clock.now,
      sleep: clock.sleep,
      ...(queue ? { retryQueue } : {}),
    }).first,
    logger: log.logger,
    metrics,
    now: clock.now,
  });
  const send = (overrides?: Partial<HttpRequest>) => relay(request(overrides), budgetOf(10_000));
  return { send, slack, store, log, retryQueue, metrics, clock };
}

const bodyOf = (response: { body: string }) => JSON.parse(response.body) as Record<string, unknown>;

describe('the relay pipeline, in process', () => {
  it('routes by cloud (ignoring case), fans out once per destination and answers 200', async () => {
    const { send, slack, log } = setup();
    const response = await send();
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)['delivered']).toEqual(['aws', 'default']);
    expect(slack.posts.map((p) => p.url)).toEqual([addressOf(config.destinations['aws']!), addressOf(config.destinations['default']!)]);
    const line = log.records().find((r) => r['message'] === 'delivery');
    expect(line).toMatchObject({
      outcome: 'delivered',
      status: 200,
      destinations: ['aws', 'default'],
      objectType: 'anomaly_alert',
      requestId: 'req-1',
    });
    expect(log.lines.join('\n')).not.toMatch(/hook|EC2 up|pipeline-secret/);
  });

  it('refuses bad requests before reading the configuration', async () => {
    const { send, store } = setup();
    expect((await send({ method: 'GET' })).statusCode).toBe(405);
    expect((await send({ headers: { 'content-type': 'text/plain', authorization } })).statusCode).toBe(415);
    expect((await send({ body: 'x'.repeat(70_000) })).statusCode).toBe(413);
    expect(store.reads.current).toBe(0);
  });

  it('401 with a challenge for wrong credentials, the same answer whatever was wrong', async () => {
    const { send } = setup();
    const wrong = await send({ headers: { 'content-type': 'application/json', authorization: 'Basic eDp5' } });
    const missing = await send({ headers: { 'content-type': 'application/json' } });
    for (const response of [wrong, missing]) {
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Basic realm="cost-alert-relay"');
      expect(response.body).toBe(wrong.body);
    }
  });

  it('authenticates before it parses: a stranger learns nothing about the body', async () => {
    const { send } = setup();
    expect((await send({ headers: { 'content-type': 'application/json' }, body: '{' })).statusCode).toBe(401);
  });

  it('400 for a body that is not JSON, 422 naming field paths only', async () => {
    const { send } = setup();
    expect((await send({ body: '{"metadata":' })).statusCode).toBe(400);
    const invalid = await send({ body: JSON.stringify({ metadata: { object_type: '' }, payload: { title: 'secret title' } }) });
    expect(invalid.statusCode).toBe(422);
    expect(bodyOf(invalid)['fields']).toEqual([expect.objectContaining({ path: 'metadata.object_type' })]);
    expect(invalid.body).not.toContain('secret title');
  });

  it('503 when the configuration is unusable, without details in the answer', async () => {
    const { send } = setup([], new ConfigInvalidError([{ path: 'auth.basic', problem: 'is required' }]));
    const response = await send();
    expect(response.statusCode).toBe(503);
    expect(response.body).not.toContain('auth.basic');
  });

  it('202 when a destination waits on the retry queue; the log names it and the reason', async () => {
    const { send, log, retryQueue } = setup([{ kind: 'delivered' }, { kind: 'retryable', reason: 'http_500' }], config, true);
    const response = await send();
    expect(bodyOf(response)).toEqual({ status: 202, delivered: ['aws'], queued: ['default'] });
    expect(retryQueue.jobs).toHaveLength(1);
    expect(log.records().find((r) => r['message'] === 'delivery')).toMatchObject({
      failures: [{ destination: 'default', reason: 'http_500' }],
    });
  });

  it('an unexpected failure still gets a contract answer', async () => {
    const { send, slack } = setup();
    slack.format = () => {
      throw new TypeError('formatter bug');
    };
    const response = await send();
    expect(response.statusCode).toBe(503);
    expect(bodyOf(response)['error']).toBe('internal_error');
  });

  it('counts each destination by outcome and type, every answer by status, and the latency; no name, URL or text in a metric', async () => {
    const { send, metrics } = setup([{ kind: 'delivered' }, { kind: 'refused', reason: 'channel_not_found' }]);
    expect((await send()).statusCode).toBe(502);
    expect((await send({ headers: { 'content-type': 'application/json' } })).statusCode).toBe(401);
    expect(metrics.count('Deliveries', { outcome: 'delivered', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'parked', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Answers', { status: '502' })).toBe(1);
    expect(metrics.count('Answers', { status: '401' })).toBe(1);
    expect(metrics.points.filter((p) => p.name === 'AnswerLatency')).toHaveLength(2);
    expect(JSON.stringify(metrics.points)).not.toMatch(/hook|EC2 up|pipeline-secret|"aws"|default/);
  });

  it('a configuration that cannot be read is counted', async () => {
    const { send, metrics } = setup([], new ConfigInvalidError([{ path: 'auth.basic', problem: 'is required' }]));
    expect((await send()).statusCode).toBe(503);
    expect(metrics.count('ConfigurationUnavailable')).toBe(1);
  });

  it('logs whether an invocation met a cold container: once true, then false', async () => {
    const { send, log } = setup();
    await send();
    await send({ requestId: 'req-2' });
    const lines = log.records().filter((r) => r['message'] === 'delivery');
    expect(lines.map((r) => [r['requestId'], r['coldStart']])).toEqual([
      ['req-1', true],
      ['req-2', false],
    ]);
  });
});

describe('what the relay waits for, and for how long', () => {
  /** A relay whose configuration store and authenticator may hang: `never` makes them return a promise that never settles. */
  function hanging(never: { config?: boolean; auth?: boolean }) {
    const log = capturedLogger();
    const slack = fakeChatService([]);
    const store = memoryConfigStore({ config });
    const realCurrent = store.current.bind(store);
    const check = createRequestAuthenticator({ check: createAuthenticator(), store, graceMs: 0, now: Date.now });
    const relay = createRelay({
      config: { ...store, current: () => (never.config ? new Promise(() => undefined) : realCurrent()) },
      authenticate: (headers, loaded, l) => (never.auth ? new Promise(() => undefined) : check(headers, loaded, l)),
      first: createDelivery({
        services: chatServices({ slack }),
        postTimeoutMs: 5_000,
        logger: log.logger,
        now: Date.now,
        sleep: async () => undefined,
      }).first,
      logger: log.logger,
    });
    // 600 ms left: each step may take what is left minus the 500 ms kept for answering.
    const send = () => relay(request(), budgetOf(600));
    return { send, slack, log };
  }

  it.each([
    {
      what: 'a configuration read',
      never: { config: true },
      error: 'configuration_unavailable',
      outcome: 'configuration_unavailable',
      reason: 'configuration_deadline',
    },
    {
      what: 'an authentication (an identity provider that hangs)',
      never: { auth: true },
      error: 'authentication_unavailable',
      outcome: 'auth_unavailable',
      reason: 'authentication_deadline',
    },
  ])('$what that never settles: 503 at its deadline, nothing posted', async ({ never, error, outcome, reason }) => {
    const { send, slack, log } = hanging(never);
    // 100 ms on the timer clock: the step's share of the 600 ms left.
    const response = await settledWithin(100, send);
    expect(response.statusCode).toBe(503);
    expect(bodyOf(response)['error']).toBe(error);
    expect(slack.posts).toEqual([]);
    expect(log.records()).toContainEqual(expect.objectContaining({ outcome, reason }));
  });
});
