import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnomalyPost, ChatService, PostOutcome } from '../../lib/chat/service.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';
import { retryLedger } from '../../lib/dedup/once.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { googleChatMessage } from '../../lib/notify/googlechat/lazy-googlechat-post.js';
import { googleChatService } from '../../lib/notify/googlechat/service.js';
import { slackAppService } from '../../lib/notify/slack/app-service.js';
import { editedNote, slackDate } from '../../lib/notify/slack/format.js';
import { classifyWebApiAnswer } from '../../lib/notify/slack/lazy-app-post.js';
import { slackService } from '../../lib/notify/slack/service.js';
import { formatTeamsMessage } from '../../lib/notify/teams/format.js';
import { teamsMessage } from '../../lib/notify/teams/lazy-teams-post.js';
import { teamsService } from '../../lib/notify/teams/service.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch } from '../../lib/retry/process-batch.js';
import { parseRetryAfterMs } from '../../lib/shared/retry-after.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, manualClock, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';

const TOKEN = 'xoxb-9999-wiring-secret';
const message = (text: string, title = 'EC2 spend rose') =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
    payload: { title, message: text, account_id: '1' },
  });
const followUp: AnomalyPost = { kind: 'follow_up', firstSeenAt: '2026-11-22T10:00:00Z', updates: 3 };

function appService(script: PostOutcome[] = []) {
  const posts: Array<{ address: string; payload: unknown; botToken?: string | undefined }> = [];
  const service: ChatService & { posts: typeof posts } = {
    posts,
    minIntervalMs: 1_100,
    paceKey: (channel) => `slack-app:${channel}`,
    format: (m, _d, anomaly) => ({ title: m.payload.title, anomaly }),
    async post(address, payload, options) {
      posts.push({ address, payload, botToken: options.botToken });
      return script.shift() ?? { kind: 'delivered', opened: { channel: address, ts: '9.9' } };
    },
  };
  return service;
}

describe('delivery-retry with a Slack app destination', () => {
  const config = {
    auth: { method: 'none' as const, headers: [] },
    slack: { botToken: TOKEN },
    destinations: { default: { channel: 'C0123ABCD' } },
    routes: [],
  };
  function setup(script: PostOutcome[] = []) {
    const clock = manualClock();
    const app = appService(script);
    const ledger = inMemoryLedger(clock.now);
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const deps = {
      config: memoryConfigStore({ config }),
      delivery: createDelivery({
        services: chatServices({ slackApp: app }),
        postTimeoutMs: 5_000,
        deadLetters: memoryDeadLetters(),
        logger: log.logger,
        now: clock.now,
        sleep: clock.sleep,
      }),
      messages: { changeVisibility: async () => {} } as unknown as QueueMessageOps,
      pacer: createPacer(clock.now, clock.sleep),
      maxAttempts: 5,
      postTimeoutMs: 5_000,
      logger: log.logger,
      ledger: retryLedger({ ledger, logger: log.logger }),
      metrics,
      budget: budgetOf(60_000),
    };
    return { deps, app, ledger, log, metrics };
  }
  const record = (body: unknown) => ({ messageId: 'm', receiptHandle: 'r', body: JSON.stringify(body), attributes: {} });

  it('posts an opening with the configured token, and the table learns where its message is', async () => {
    const { deps, app, ledger } = setup();
    await processBatch([record(newJob('d', 'default', message('up'), 'ratelimited', 0))], deps);
    expect(app.posts).toEqual([{ address: 'C0123ABCD', payload: { title: 'EC2 spend rose', anomaly: undefined }, botToken: TOKEN }]);
    expect(await ledger.startAnomaly(anomalyRecordId(message('x'), 'default'))).toEqual({
      kind: 'existing',
      state: { firstSeen: expect.any(Number), followUps: 0, opening: { channel: 'C0123ABCD', ts: '9.9' } },
    });
  });

  it('posts a queued follow-up as one, and counts it; a parked follow-up leaves the anomaly as it was', async () => {
    const { deps, app, ledger, metrics } = setup([{ kind: 'delivered' }, { kind: 'refused', reason: 'not_in_channel' }]);
    await ledger.startAnomaly(anomalyRecordId(message('x'), 'default'));
    await processBatch([record(newJob('d', 'default', message('up'), 'ratelimited', 0, followUp))], deps);
    expect(app.posts[0]?.payload).toEqual({ title: 'EC2 spend rose', anomaly: followUp });
    expect(metrics.count('Deliveries', { outcome: 'follow_up' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'delivered' })).toBe(0);
    await processBatch([record(newJob('e', 'default', message('down'), 'ratelimited', 0, followUp))], deps);
    const state = await ledger.startAnomaly(anomalyRecordId(message('x'), 'default'));
    expect(state).toMatchObject({ kind: 'existing', state: { followUps: 1 } });
  });
});

describe('the relay wired with a Slack app destination and an in-memory ledger (npm start)', () => {
  let api: FakeSlackApi;
  beforeAll(async () => {
    api = await startFakeSlackApi(TOKEN);
  });
  afterAll(() => api.close());

  it('opens, then edits and replies in the thread; the token is in no log line or answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anomaly-wiring-'));
    writeFileSync(
      join(dir, 'relay.json'),
      JSON.stringify({ auth: { method: 'none' }, slack: { botToken: TOKEN }, destinations: { default: { channel: 'C0123ABCD' } } }),
    );
    const log = capturedLogger();
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`, SLACK_API_URL: api.url },
      { logger: log.logger, metrics: memoryMetrics(), ledger: inMemoryLedger() },
    );
    const send = (text: string) =>
      relay(
        {
          requestId: text,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(message(text)),
          isBase64Encoded: false,
        },
        budgetOf(10_000),
      );
    const answers = [await send('up 10%'), await send('up 20%'), await send('up 20%')];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(api.messages).toHaveLength(1);
    expect(api.messages[0]?.edits).toBe(1);
    expect(api.messages[0]?.replies).toHaveLength(1);
    expect([...log.lines, ...answers.map((a) => a.body)].join('\n')).not.toContain(TOKEN);
  });
});

describe('the in-memory ledger keeps the DynamoDB rules', () => {
  it('claims, sees duplicates and live claims, releases only its own, and keeps anomalies', async () => {
    const clock = manualClock();
    const ledger = inMemoryLedger(clock.now);
    expect(await ledger.claim('a', { token: 't1', holdSeconds: 5 })).toEqual({ kind: 'claimed' });
    expect(await ledger.claim('a', { token: 't2', holdSeconds: 5 })).toEqual({ kind: 'in_progress', retryAfterSeconds: 5 });
    await ledger.release('a', 't2');
    expect((await ledger.claim('a', { token: 't2', holdSeconds: 5 })).kind).toBe('in_progress');
    await ledger.release('a', 't1');
    expect(await ledger.claim('a', { token: 't2', holdSeconds: 5 })).toEqual({ kind: 'claimed' });
    await ledger.record('a', 'queued');
    expect(await ledger.claim('a', { token: 't3', holdSeconds: 5 })).toEqual({ kind: 'done', state: 'queued' });
    await ledger.release('a');
    await ledger.record('a', 'delivered');
    await ledger.release('a');
    expect(await ledger.claim('a', { token: 't3', holdSeconds: 5 })).toEqual({ kind: 'done', state: 'delivered' });

    const firstSeen = Math.floor(clock.now() / 1000);
    expect(await ledger.startAnomaly('x')).toEqual({ kind: 'opened', firstSeen });
    await ledger.forgetAnomaly('x');
    expect(await ledger.startAnomaly('x')).toEqual({ kind: 'opened', firstSeen });
    await ledger.anomalyFollowedUp('x');
    await ledger.forgetAnomaly('x');
    await ledger.anomalyOpened('y', { channel: 'C1', ts: '1.1' });
    expect(await ledger.startAnomaly('x')).toMatchObject({ kind: 'existing', state: { followUps: 1 } });
    expect(await ledger.startAnomaly('y')).toMatchObject({ kind: 'existing', state: { opening: { ts: '1.1' } } });
  });
});

describe('follow-ups through each webhook service, and the edges of the Slack app client', () => {
  const destination = (url: string) => ({ url });

  it('each webhook service marks a follow-up as an update and an opening not', () => {
    const slack = slackService();
    const hook = destination('https://hooks.slack.com/services/T/B/X');
    expect(JSON.stringify(slack.format(message('x'), hook, followUp))).toContain('Update 3 of an anomaly');
    expect(JSON.stringify(slack.format(message('x'), hook))).not.toContain('Update');
    const teams = teamsService();
    const flow = destination('https://prod-1.westus.logic.azure.com/workflows/x');
    expect(JSON.stringify(teamsMessage(teams.format(message('x'), flow, followUp)))).toContain('Update 3 of an anomaly');
    expect(JSON.stringify(teamsMessage(teams.format(message('x'), flow, { kind: 'opening' })))).not.toContain('Update');
    const chat = googleChatService();
    const space = destination('https://chat.googleapis.com/v1/spaces/A/messages?key=K&token=T');
    expect(googleChatMessage(chat.format(message('x'), space, followUp)).text).toMatch(/^Update: /);
  });

  it('an unreadable time is said plainly rather than shown wrong', () => {
    expect(slackDate('not a time')).toBe('an earlier time');
    expect(editedNote(2, '2026-11-22T10:00:00Z').context).toContain('Updated 2 times');
    expect(JSON.stringify(formatTeamsMessage(message('x'), undefined, { firstSeenAt: 'yesterday', updates: 1 }))).toContain(
      'first seen earlier',
    );
  });

  it('an answer that is not JSON, or an error that is not a plain word, is never passed on as it came', () => {
    expect(classifyWebApiAnswer(200, '<html>', null, parseRetryAfterMs).outcome).toEqual({
      kind: 'retryable',
      reason: 'unreadable_answer',
    });
    expect(classifyWebApiAnswer(200, '{"ok":false,"error":"<b>x</b>"}', null, parseRetryAfterMs).outcome).toEqual({
      kind: 'refused',
      reason: 'unknown_error',
    });
    expect(classifyWebApiAnswer(200, '{"ok":true}', null, parseRetryAfterMs)).toEqual({ outcome: { kind: 'delivered' } });
    expect(classifyWebApiAnswer(408, '', null, parseRetryAfterMs).outcome).toEqual({ kind: 'retryable', reason: 'http_408' });
    expect(classifyWebApiAnswer(429, '', 'soon', parseRetryAfterMs).outcome).toEqual({
      kind: 'retryable',
      reason: 'ratelimited',
      retryAfterMs: 1_000,
    });
    expect(classifyWebApiAnswer(200, '{"ok":false,"error":"ratelimited"}', null, parseRetryAfterMs).outcome).toEqual({
      kind: 'retryable',
      reason: 'ratelimited',
      retryAfterMs: 1_000,
    });
  });

  it('the app service posts through the transport it is given', async () => {
    const seen: string[] = [];
    const transport: NodeFetch = async (input) => {
      seen.push(String(input));
      return {
        ok: true,
        status: 200,
        statusText: 'OK',
        url: String(input),
        headers: { get: () => null, entries: () => [] },
        text: async () => '{"ok":true,"channel":"C1","ts":"1.1"}',
      } as unknown as Awaited<ReturnType<NodeFetch>>;
    };
    const service = slackAppService({ transport });
    const outcome = await service.post('C1', service.format(message('x'), { channel: 'C1' }), { timeoutMs: 1_000, botToken: TOKEN });
    expect(outcome).toEqual({ kind: 'delivered', opened: { channel: 'C1', ts: '1.1' } });
    expect(seen).toEqual(['https://slack.com/api/chat.postMessage']);
  });
});
