import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsJsonCall } from '../../lib/aws/json-client.js';
import { parseCostEventJob } from '../../lib/cost-events/events.js';
import { createLogger } from '../../lib/log/logger.js';
import { triageButtons } from '../../lib/notify/slack/triage-blocks.js';
import { dynamoOwnerStore } from '../../lib/owners/dynamodb.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { trendDays } from '../../lib/trend/lazy-trend.js';
import { dynamoTriageStore } from '../../lib/triage/dynamodb.js';
import { createTriageFromEnvironment } from '../../lib/triage/from-environment.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { signChartToken } from '../../lib/triage-link/chart.js';
import { signTriageToken } from '../../lib/triage-link/sign.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';
import { memoryAws } from '../helpers/memory-aws.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const BOT_TOKEN = 'xoxb-wiring-bot-token';
const SIGNING_SECRET = 'wiring-signing-secret';
const KEY = 'wiring-triage-key-0123456789abcdefghijklmnop';

describe('the triage state on the anomaly item', () => {
  it('reads state, snooze end, audit and opening; writes state and appends the audit entry in one UpdateItem', async () => {
    const calls: Array<{ operation: string; input: Record<string, unknown> }> = [];
    const dynamo: AwsJsonCall = async (operation, input) => {
      calls.push({ operation, input });
      if (operation !== 'GetItem') return {};
      return {
        Item: {
          id: { S: 'anomaly#1' },
          triage: { S: 'snoozed' },
          triageUntil: { N: '200' },
          triageAt: { N: '100' },
          triageBy: { S: 'dana' },
          channel: { S: 'C1' },
          ts: { S: '1.2' },
          audit: { L: [{ M: { who: { S: 'dana' }, action: { S: 'snooze' }, at: { N: '100' } } }, { M: { action: { S: 'bogus' } } }] },
        },
      };
    };
    const store = dynamoTriageStore(dynamo, 'table');
    expect(await store.read('anomaly#1')).toEqual({
      triage: { state: 'snoozed', until: 200, at: 100, by: 'dana' },
      audit: [{ who: 'dana', action: 'snooze', at: 100 }],
      opening: { channel: 'C1', ts: '1.2' },
    });
    // The item read is snoozed until 200: at 150 a snooze repeats the state and writes nothing.
    expect(await store.apply('anomaly#1', 'snooze', 'x', 150)).toEqual({ kind: 'unchanged' });
    expect(calls.filter((c) => c.operation === 'UpdateItem')).toHaveLength(0);
    await store.apply('anomaly#1', 'snooze', 'x', 250);
    await store.apply('anomaly#1', 'reopen', 'x', 2);
    const writes = calls.filter((c) => c.operation === 'UpdateItem');
    const updates = writes.map((c) => String(c.input['UpdateExpression']));
    expect(updates[0]).toContain('triageUntil = :until');
    expect(updates[1]).toContain('REMOVE triageUntil');
    // The whole audit list is written over the version it was read at: a concurrent action is decided again.
    expect(updates[0]).toContain('audit = :audit');
    expect(writes[0]?.input['ConditionExpression']).toBe('attribute_not_exists(triageVersion) OR triageVersion = :seen');
    // The item outlives the snooze whatever the dedup window, and still expires.
    const snooze = writes[0]?.input['ExpressionAttributeValues'] as Record<string, { N?: string }>;
    expect(updates[0]).toContain('expiresAt = :expires');
    expect(Number(snooze[':expires']?.N)).toBeGreaterThanOrEqual(250 + 86_400);
    expect(Number(snooze[':expires']?.N)).toBe(250 + 30 * 86_400);
  });

  it('an item without triage attributes reads as open', async () => {
    const store = dynamoTriageStore(async () => ({ Item: { id: { S: 'a' }, triage: { S: 'weird' } } }), 't');
    expect(await store.read('a')).toEqual({ triage: { state: 'open' }, audit: [] });
    expect(await dynamoTriageStore(async () => ({}), 't').read('a')).toBeUndefined();
  });
});

function wiring(env: Record<string, string> = {}, key: string | null = KEY) {
  const dir = mkdtempSync(join(tmpdir(), 'triage-'));
  writeFileSync(
    join(dir, 'relay.json'),
    JSON.stringify({
      auth: { method: 'none' },
      slack: { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET },
      destinations: {
        default: { channel: 'C0123ABCD' },
        gchat: { type: 'googlechat', url: 'https://chat.googleapis.com/v1/spaces/S/messages?key=k' },
      },
    }),
  );
  const requests: Array<{ url: string; body: string; authorization: string | undefined }> = [];
  const transport: NodeFetch = async (input, init) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    requests.push({ url: String(input), body: String(init?.body), authorization: headers['authorization'] });
    return new Response('{"ok":true}', { status: 200 }) as never;
  };
  const lines: string[] = [];
  const store = memoryTriageStore();
  const metrics = memoryMetrics();
  const triage = createTriageFromEnvironment(
    { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`, SLACK_API_URL: 'http://127.0.0.1:9/api/', ...env },
    { transport, store, logger: createLogger({ sink: (l) => lines.push(l) }), metrics, ...(key ? { tokenKey: key } : {}) },
  );
  return { triage, requests, lines, store, metrics };
}

describe('triage wiring', () => {
  it('a signed click updates the message through chat.update with the bot token', async () => {
    const w = wiring();
    const payload = {
      type: 'block_actions',
      user: { id: 'U1', username: 'dana' },
      actions: [{ action_id: 'triage_expected', value: 'anomaly#1' }],
      container: { channel_id: 'C0123ABCD', message_ts: '1.2' },
      message: { text: 't', blocks: [triageButtons('anomaly#1', true)] },
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    const answer = await w.triage(
      {
        method: 'POST',
        path: '/slack/interactions',
        headers: { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
        body,
      },
      budgetOf(3_000),
    );
    expect(answer.statusCode).toBe(200);
    expect(w.requests[0]?.url).toBe('http://127.0.0.1:9/api/chat.update');
    expect(w.requests[0]?.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    expect(w.lines.join('\n')).not.toContain(BOT_TOKEN);
  });

  it('the page posts the follow-up to the Google Chat destination and to a Slack app thread', async () => {
    const w = wiring();
    const gchat = signTriageToken(KEY, { a: 'anomaly#g', d: 'gchat', t: 'T', c: 'A', k: 'cost-alert-x' }, Date.now());
    const answer = await w.triage(
      { method: 'POST', path: `/triage/${gchat}`, headers: {}, body: 'action=acknowledge&name=Dana' },
      budgetOf(10_000),
    );
    expect(answer.statusCode).toBe(200);
    expect(w.requests[0]?.url).toContain('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    expect(JSON.parse(w.requests[0]?.body ?? '{}')).toMatchObject({ thread: { threadKey: 'cost-alert-x' } });
    expect(w.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'googlechat' })).toBe(1);

    w.store.records.set('anomaly#s', { triage: { state: 'open' }, audit: [], opening: { channel: 'C0123ABCD', ts: '9.9' } });
    const app = signTriageToken(KEY, { a: 'anomaly#s', d: 'default', t: 'T', c: 'A' }, Date.now());
    await w.triage({ method: 'POST', path: `/triage/${app}`, headers: {}, body: 'action=snooze' }, budgetOf(10_000));
    expect(w.requests[1]?.url).toBe('http://127.0.0.1:9/api/chat.postMessage');
    expect(JSON.parse(w.requests[1]?.body ?? '{}')).toMatchObject({ thread_ts: '9.9' });
  });

  it('a token for a destination no longer configured applies without a follow-up', async () => {
    const w = wiring();
    const token = signTriageToken(KEY, { a: 'anomaly#x', d: 'gone', t: 'T', c: 'A' }, Date.now());
    expect(
      (await w.triage({ method: 'POST', path: `/triage/${token}`, headers: {}, body: 'action=expected' }, budgetOf(10_000))).statusCode,
    ).toBe(200);
    expect(w.requests).toEqual([]);
    expect(w.metrics.count('TriageActions', { action: 'expected', destinationType: 'unknown' })).toBe(1);
  });

  it('without a key the page is 404; an invalid environment answers 503', async () => {
    const w = wiring({}, null);
    expect((await w.triage({ method: 'GET', path: '/triage/x.y', headers: {}, body: '' }, budgetOf(1_000))).statusCode).toBe(404);
    const bad = wiring({ SLACK_API_URL: 'ftp://nope' });
    expect((await bad.triage({ method: 'GET', path: '/triage/x.y', headers: {}, body: '' }, budgetOf(1_000))).statusCode).toBe(503);
  });
});

describe('triage wiring with the platform login', () => {
  const NOW = Date.parse('2026-11-21T15:00:00Z');
  const ACCOUNT = '247699517797';
  const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/delivery-retry';
  let platform: FakePlatform;
  beforeAll(async () => {
    platform = await startFakePlatform();
  });
  afterAll(() => platform.close());

  async function deployed(platformSettings: { trend?: boolean; costEvents?: boolean }) {
    platform.reset();
    platform.events.clear();
    platform.dailyCosts.set(ACCOUNT, new Map(trendDays('2026-11-21').map((day): [string, number] => [day, 100])));
    const dir = mkdtempSync(join(tmpdir(), 'triage-platform-'));
    writeFileSync(
      join(dir, 'relay.json'),
      JSON.stringify({
        auth: { method: 'none' },
        destinations: { default: { url: 'https://hooks.slack.com/services/T000/B000/XXXX' } },
        platform: platformSettings,
      }),
    );
    const aws = memoryAws({ now: () => NOW });
    aws.secrets.put('triage-key', KEY);
    aws.secrets.put('platform-login', JSON.stringify({ username: platform.username, password: platform.password }));
    aws.sqs.create(QUEUE, { visibilityTimeoutSeconds: 30 });
    await dynamoOwnerStore(aws.table.call, aws.tableName, () => NOW).write({
      accountId: ACCOUNT,
      costCenters: [{ id: '7', name: 'Data' }],
      readAt: Math.floor(NOW / 1000),
      parts: [{ accountKey: '12345', costCenters: [{ id: '7', name: 'Data' }], readAt: Math.floor(NOW / 1000) }],
    });
    const lines: string[] = [];
    const metrics = memoryMetrics();
    const posted: string[] = [];
    const triage = createTriageFromEnvironment(
      {
        RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`,
        DEDUP_TABLE_NAME: aws.tableName,
        TRIAGE_KEY_SECRET_ID: 'triage-key',
        COST_API_CREDENTIALS_SECRET_ID: 'platform-login',
        COST_API_BASE_URL: platform.url,
        DELIVERY_QUEUE_URL: QUEUE,
      },
      {
        aws: aws.aws,
        now: () => NOW,
        metrics,
        logger: createLogger({ sink: (l) => lines.push(l) }),
        transport: async (input) => {
          posted.push(String(input));
          return new Response('ok', { status: 200 }) as never;
        },
      },
    );
    const page = (anomalyId: string, body: string, title = 'EC2 spend up') => {
      const token = signTriageToken(KEY, { a: anomalyId, d: 'default', t: title, c: `Analytics (${ACCOUNT})` }, NOW);
      return triage({ method: 'POST', path: `/triage/${token}`, headers: {}, body }, budgetOf(10_000));
    };
    return { triage, page, aws, metrics, lines, posted };
  }

  it('serves the account’s picture from the platform, then from the table, counting each', async () => {
    const d = await deployed({ trend: true });
    const token = signChartToken(KEY, { a: ACCOUNT, d: '2026-11-21', n: 'Analytics' }, NOW);
    for (let i = 0; i < 2; i++) {
      const answer = await d.triage({ method: 'GET', path: `/chart/${token}`, headers: {}, body: '' }, budgetOf(10_000));
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe('image/png');
    }
    expect(platform.requests.filter((r) => r.path === '/api/v2/invoices/cost-and-usage')).toHaveLength(1);
    expect(d.metrics.count('Charts', { outcome: 'chart' })).toBe(1);
    expect(d.metrics.count('Charts', { outcome: 'cached' })).toBe(1);
    expect(d.lines.join('\n')).not.toContain(platform.password);
  });

  it('Expected writes the cost event and keeps it on the anomaly; one the platform cannot take waits on the retry queue', async () => {
    const d = await deployed({ costEvents: true });
    expect((await d.page('anomaly#1', 'action=expected&name=Dana&note=planned')).statusCode).toBe(200);
    const events = [...platform.events.values()];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      accountKey: 12345,
      body: { title: 'Expected: EC2 spend up', createdBy: 'Dana', date: '2026-11-21' },
    });
    expect(d.metrics.count('CostEvents', { outcome: 'written' })).toBe(1);
    // The anomaly's state and its event's uuid, both in the table.
    const items = [...d.aws.table.items().values()];
    expect(items.find((item) => item['id']?.S === 'anomaly#1')?.['triage']?.S).toBe('expected');
    expect(items.find((item) => item['id']?.S?.startsWith('costevent#'))?.['uuid']?.S).toBe([...platform.events.keys()][0]);

    platform.setBehaviour('events', { kind: 'hang' });
    expect((await d.page('anomaly#2', 'action=expected&name=Dana', 'S3 spend up')).statusCode).toBe(200);
    const [waiting] = d.aws.sqs.messages(QUEUE);
    expect(waiting?.attributes).toMatchObject({ kind: 'cost_event' });
    expect(waiting?.visibleAt).toBe(NOW + 30_000);
    expect(parseCostEventJob(waiting?.body ?? '')).toMatchObject({
      change: 'write',
      subject: { title: 'S3 spend up', by: 'Dana', destination: 'default' },
    });
    expect(d.metrics.count('CostEvents', { outcome: 'queued' })).toBe(1);
  });

  it('without platform.costEvents in the configuration, Expected writes no event and queues none', async () => {
    const d = await deployed({});
    expect((await d.page('anomaly#1', 'action=expected&name=Dana')).statusCode).toBe(200);
    expect(platform.events.size).toBe(0);
    expect(d.aws.sqs.messages(QUEUE)).toHaveLength(0);
  });
});
