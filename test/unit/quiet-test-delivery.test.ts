import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { QUIET_TEST, TEST_DELIVERY_HEADER } from '../../lib/inbound/request.js';
import type { HttpRequest } from '../../lib/inbound/types.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { createRelay } from '../../lib/relay/relay.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch } from '../../lib/retry/process-batch.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, manualClock, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const PASSWORD = 'quiet-test-secret-4d2';
const SLACK = 'https://hooks.slack.com/services/T0/B0/quiet';
const DIGEST = 'https://hooks.slack.com/services/T0/B1/digest';
const TEAMS = 'https://prod-01.westeurope.logic.azure.com/workflows/quiet/triggers/manual/paths/invoke?sig=x';
const CHAT = 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=k&token=t';
const config = relayConfigSchema.parse({
  auth: { method: 'basic', basic: { username: 'relay', password: PASSWORD } },
  destinations: {
    default: { url: SLACK, mention: '<!here>' },
    teams: { url: TEAMS, mention: { id: 'jane@example.com', name: 'Jane Doe' } },
    chat: { url: CHAT, mention: '<users/all>' },
    digest: { url: DIGEST, mention: '<!channel>', group: { waitSeconds: 60 } },
  },
  routes: [{ to: ['default', 'teams', 'chat', 'digest'] }],
});
/** Each service's configured mention as it shows in a payload. */
const MENTIONS = /<!here>|<!channel>|<at>|jane@example\.com|<users\/all>/;

const authorization = `Basic ${Buffer.from(`relay:${PASSWORD}`).toString('base64')}`;
function delivery(title: string, headers: Record<string, string> = {}): HttpRequest {
  return {
    requestId: `req-${title}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization, ...headers },
    body: JSON.stringify({ metadata: { object_type: 'anomaly_alert' }, payload: { title, account_id: '123' } }),
    isBase64Encoded: false,
  };
}
const quietly = { [TEST_DELIVERY_HEADER]: QUIET_TEST };

/** The chat webhooks behind the real chat services: what each was posted; the first `refusals` posts get a 503. */
function webhooks(refusals = 0) {
  const posts: Array<{ url: string; body: string }> = [];
  let refuse = refusals;
  const fetch: NodeFetch = async (input, init) => {
    posts.push({ url: String(input), body: String(init?.body) });
    const status = refuse-- > 0 ? 503 : 200;
    return {
      ok: status === 200,
      status,
      statusText: '',
      url: String(input),
      headers: { get: () => null, entries: () => [] },
      text: async () => (status === 200 ? 'ok' : 'busy'),
      json: async () => ({}),
      arrayBuffer: async () => new ArrayBuffer(0),
    };
  };
  const to = (url: string, title: string) => posts.filter((p) => p.url.startsWith(url.split('?')[0] as string) && p.body.includes(title));
  return { fetch, posts, to };
}

const bodyOf = (response: { body: string }) => JSON.parse(response.body) as Record<string, unknown>;

describe('a quiet test delivery (npm run send -- --test)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quiet-test-'));
  writeFileSync(join(dir, 'relay.json'), JSON.stringify(config));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reaches Slack, Teams and Google Chat without their mentions, on its own; a delivery without the header has them', async () => {
    const chats = webhooks();
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}` },
      { logger: capturedLogger().logger, metrics: memoryMetrics(), services: createChatServices(chats.fetch), localGroups: true },
    );

    const loud = await relay(delivery('loud one'), budgetOf(10_000));
    expect(bodyOf(loud)).toMatchObject({ status: 202, grouped: ['digest'] });
    for (const url of [SLACK, TEAMS, CHAT]) {
      const [post, ...more] = chats.to(url, 'loud one');
      expect(more).toEqual([]);
      expect(post?.body).toMatch(MENTIONS);
    }

    const quiet = await relay(delivery('quiet one', quietly), budgetOf(10_000));
    // Not grouped: a digest would carry the mention, or lose it for the alerts it holds.
    expect(bodyOf(quiet)).toMatchObject({ status: 200, delivered: ['default', 'teams', 'chat', 'digest'] });
    for (const url of [SLACK, TEAMS, CHAT, DIGEST]) {
      const [post, ...more] = chats.to(url, 'quiet one');
      expect(more).toEqual([]);
      expect(post?.body).not.toMatch(MENTIONS);
    }

    // Authentication is the same for a quiet delivery: the header opens nothing.
    const stranger = delivery('quiet stranger', quietly);
    const denied = await relay({ ...stranger, headers: { ...stranger.headers, authorization: 'Basic eDp5' } }, budgetOf(10_000));
    expect(denied.statusCode).toBe(401);
    expect(chats.posts.filter((p) => p.body.includes('quiet stranger'))).toEqual([]);
  });

  it('stays quiet when it waits on the retry queue and delivery-retry posts it; a queued loud alert keeps its mention', async () => {
    // Each destination refuses the first post of each alert: both alerts wait on the queue.
    const chats = webhooks(Number.POSITIVE_INFINITY);
    const clock = manualClock();
    const log = capturedLogger();
    const store = memoryConfigStore({ config });
    const retryQueue = memoryRetryQueue();
    const core = createDelivery({
      services: createChatServices(chats.fetch),
      postTimeoutMs: 5_000,
      retryQueue,
      logger: log.logger,
      now: clock.now,
      sleep: clock.sleep,
    });
    const relay = createRelay({
      config: store,
      authenticate: createRequestAuthenticator({ check: createAuthenticator(), store, graceMs: 0, now: clock.now }),
      first: core.first,
      logger: log.logger,
      now: clock.now,
    });
    expect((await relay(delivery('queued quiet', quietly), budgetOf(10_000))).statusCode).toBe(202);
    expect((await relay(delivery('queued loud'), budgetOf(10_000))).statusCode).toBe(202);
    const bodies = retryQueue.jobs.map(({ job }) => JSON.stringify(job));
    // On the queue the quiet alert's jobs say so; the others are as jobs always were.
    expect(bodies.map((body) => parseDeliveryJob(body)?.quiet)).toEqual([
      true,
      true,
      true,
      true,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);

    const retried = webhooks();
    const records = bodies.map((body, i) => ({ messageId: `m${i}`, receiptHandle: `h${i}`, body, attributes: {} }));
    const result = await processBatch(records, {
      config: store,
      delivery: createDelivery({
        services: createChatServices(retried.fetch),
        postTimeoutMs: 5_000,
        logger: log.logger,
        now: clock.now,
        sleep: clock.sleep,
      }),
      messages: { changeVisibility: async () => undefined } as unknown as QueueMessageOps,
      pacer: createPacer(clock.now, clock.sleep),
      maxAttempts: 5,
      postTimeoutMs: 5_000,
      logger: log.logger,
      budget: budgetOf(60_000),
    });
    expect(result).toEqual({ batchItemFailures: [] });
    for (const url of [SLACK, TEAMS, CHAT, DIGEST]) {
      expect(retried.to(url, 'queued quiet').map((p) => p.body)).toEqual([expect.not.stringMatching(MENTIONS)]);
      expect(retried.to(url, 'queued loud').map((p) => p.body)).toEqual([expect.stringMatching(MENTIONS)]);
    }
  });
});
