import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnomalyPost, ChatService, PostOutcome } from '../../lib/chat/service.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { deliveryRecordId } from '../../lib/dedup/fingerprint.js';
import { deliverOnce, OPENING_PENDING_SECONDS, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery, type Target } from '../../lib/delivery/deliver.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { formatGoogleChatMessage } from '../../lib/notify/googlechat/format.js';
import { slackAppService, slackAppTools } from '../../lib/notify/slack/app-service.js';
import { formatSlackMessage, SLACK_LIMITS, updateNote } from '../../lib/notify/slack/format.js';
import { createSlackAppPoster } from '../../lib/notify/slack/lazy-app-post.js';
import { formatTeamsMessage } from '../../lib/notify/teams/format.js';
import { answerFor } from '../../lib/relay/lazy-relay-answer.js';
import { fetchOverNodeHttp, type NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, manualClock, memoryDeadLetters, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';

const TOKEN = 'xoxb-1111-2222-secretbottoken';
const alert = (title = 'EC2 spend rose', message = 'up 340%', accountId = '123456789012', objectType = 'anomaly_alert') =>
  webhookMessageSchema.parse({
    metadata: { object_type: objectType, timestamp: '2026-11-22T10:00:00Z' },
    payload: { title, message, account_id: accountId },
  });
const plenty = budgetOf(10_000);

/** A chat service that remembers where each post stood in its anomaly; a Slack app one also says where it opened. */
function recordingService(app = false) {
  const posts: Array<{ address: string; anomaly: AnomalyPost | undefined; botToken: string | undefined }> = [];
  const answers: PostOutcome[] = [];
  let ts = 100;
  const service: ChatService & { posts: typeof posts; answers: PostOutcome[] } = {
    posts,
    answers,
    minIntervalMs: 0,
    paceKey: (a) => a,
    format: (_message, _destination, anomaly) => anomaly,
    async post(address, payload, options) {
      posts.push({ address, anomaly: payload as AnomalyPost | undefined, botToken: options.botToken });
      const scripted = answers.shift();
      if (scripted) return scripted;
      const opening = !payload || (payload as AnomalyPost).kind === 'opening' || !(payload as { opening?: unknown }).opening;
      return app && opening ? { kind: 'delivered', opened: { channel: address, ts: `${ts++}.0001` } } : { kind: 'delivered' };
    },
  };
  return service;
}

function setup() {
  const clock = manualClock();
  const webhook = recordingService();
  const app = recordingService(true);
  const ledger = memoryLedger(clock.now);
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const retryQueue = memoryRetryQueue();
  const deadLetters = memoryDeadLetters();
  const delivery = createDelivery({
    services: chatServices({ slack: webhook, teams: webhook, googlechat: webhook, slackApp: app }),
    postTimeoutMs: 5_000,
    retryQueue,
    deadLetters,
    logger: log.logger,
    metrics,
    now: clock.now,
    sleep: clock.sleep,
  });
  const first = deliverOnce({ ledger, delivery, logger: log.logger, metrics, now: clock.now });
  return { first, webhook, app, ledger, log, metrics, clock, retryQueue, deadLetters, delivery };
}

const ops: Target = { name: 'ops', destination: { url: 'https://hooks.slack.com/services/T0/B0/secret' } };
const finops: Target = { name: 'finops', destination: { type: 'slack', channel: 'C0123ABCD' }, botToken: TOKEN };
const send = (s: ReturnType<typeof setup>, target: Target, message = alert(), id = 'req') =>
  s.first({ deliveryId: id, target, message }, plenty);

describe('which anomaly an alert belongs to', () => {
  it('kind, account and title with whitespace collapsed, per destination; case and other fields count as the same anomaly or not', () => {
    const id = anomalyRecordId(alert(), 'ops');
    expect(anomalyRecordId(alert('EC2   spend\n rose ', 'down 10%'), 'ops')).toBe(id);
    expect(anomalyRecordId(alert('ec2 spend rose'), 'ops')).not.toBe(id);
    expect(anomalyRecordId(alert(undefined, undefined, '999999999999'), 'ops')).not.toBe(id);
    expect(anomalyRecordId(alert(undefined, undefined, undefined, 'budget_alert'), 'ops')).not.toBe(id);
    expect(anomalyRecordId(alert(), 'finops')).not.toBe(id);
    expect(id).toMatch(/^anomaly#[0-9a-f]{64}$/);
    expect(id).not.toContain(deliveryRecordId(alert(), 'ops'));
  });

  it('a title-less alert is told apart by its message, so snoozing one holds back no other; titled ids stay as they were', async () => {
    const untitled = (message: string) => alert('', message);
    expect(anomalyRecordId(untitled('Budget  exceeded\n'), 'ops')).toBe(anomalyRecordId(untitled('Budget exceeded'), 'ops'));
    expect(anomalyRecordId(untitled('Budget exceeded'), 'ops')).not.toBe(anomalyRecordId(untitled('Forecast exceeded'), 'ops'));
    expect(anomalyRecordId(untitled('EC2 spend rose'), 'ops')).not.toBe(anomalyRecordId(alert('EC2 spend rose', 'x'), 'ops'));
    expect(formatGoogleChatMessage(untitled('Budget exceeded')).thread).not.toEqual(
      formatGoogleChatMessage(untitled('Forecast exceeded')).thread,
    );
    // Anomalies already in the table and threads already in Google Chat keep their keys.
    const legacy = createHash('sha256')
      .update(JSON.stringify(['anomaly_alert', '123456789012', 'EC2 spend rose']))
      .digest('hex');
    expect(anomalyRecordId(alert(), 'ops')).toBe(
      `anomaly#${createHash('sha256')
        .update(`${JSON.stringify(['anomaly_alert', '123456789012', 'EC2 spend rose'])}\nops`)
        .digest('hex')}`,
    );
    expect(formatGoogleChatMessage(alert()).thread.threadKey).toBe(`cost-alert-${legacy.slice(0, 32)}`);

    const s = setup();
    await send(s, ops, untitled('Budget exceeded'), 'r1');
    const id = anomalyRecordId(untitled('Budget exceeded'), 'ops');
    const state = s.ledger.anomalies.get(id);
    s.ledger.anomalies.set(id, {
      ...(state as NonNullable<typeof state>),
      triage: { state: 'snoozed', until: Math.floor(s.clock.now() / 1000) + 86_400 },
    });
    expect(await send(s, ops, untitled('Forecast exceeded'), 'r2')).toEqual({ kind: 'delivered' });
    expect(s.webhook.posts.map((p) => p.anomaly?.kind)).toEqual(['opening', 'opening']);
  });
});

describe('opening, follow-ups and duplicates at one destination', () => {
  it('the first alert opens, a changed one follows up with its count and first-seen time, an identical re-send posts nothing', async () => {
    const s = setup();
    expect(await send(s, ops)).toEqual({ kind: 'delivered' });
    s.clock.advance(60_000);
    await send(s, ops, alert('EC2 spend rose', 'up 400%'));
    expect(await send(s, ops, alert('EC2 spend rose', 'up 400%'))).toEqual({ kind: 'duplicate', state: 'delivered' });
    await send(s, ops, alert('EC2  spend rose ', 'up 500%'));
    expect(s.webhook.posts.map((p) => p.anomaly)).toEqual([
      { kind: 'opening' },
      { kind: 'follow_up', firstSeenAt: '2026-11-22T12:00:00Z', updates: 1 },
      { kind: 'follow_up', firstSeenAt: '2026-11-22T12:00:00Z', updates: 2 },
    ]);
    // Each alert counted once: the opening as delivered, each follow-up as a follow-up.
    expect(s.metrics.count('Deliveries', { outcome: 'follow_up' })).toBe(2);
    expect(s.metrics.count('Deliveries', { outcome: 'delivered' })).toBe(1);
  });

  it('another anomaly, or the same one at another destination, is an opening of its own', async () => {
    const s = setup();
    await send(s, ops);
    await send(s, ops, alert('S3 spend rose'));
    await send(s, finops);
    expect(s.webhook.posts.map((p) => p.anomaly?.kind)).toEqual(['opening', 'opening']);
    expect(s.app.posts.map((p) => p.anomaly?.kind)).toEqual(['opening']);
  });

  it('a Slack app follow-up names the opening message, and the bot token goes with the post only', async () => {
    const s = setup();
    await send(s, finops);
    await send(s, finops, alert(undefined, 'up 400%'));
    expect(s.app.posts[1]).toEqual({
      address: 'C0123ABCD',
      botToken: TOKEN,
      anomaly: { kind: 'follow_up', firstSeenAt: '2026-11-22T12:00:00Z', updates: 1, opening: { channel: 'C0123ABCD', ts: '100.0001' } },
    });
    expect(JSON.stringify([...s.ledger.anomalies.values()])).not.toContain(TOKEN);
    expect(s.log.lines.join('\n')).not.toContain(TOKEN);
  });

  it('two new alerts of one anomaly arriving together post one opening; the other waits for it (503 in_progress), then follows up', async () => {
    const s = setup();
    s.app.answers.push({ kind: 'delivered', opened: { channel: 'C0123ABCD', ts: '7.0001' } });
    const [a, b] = await Promise.all([send(s, finops, alert(undefined, 'one')), send(s, finops, alert(undefined, 'two'))]);
    expect([a, b].map((r) => r.kind).sort()).toEqual(['delivered', 'in_progress']);
    expect(answerFor([{ destination: 'finops', result: b.kind === 'in_progress' ? b : a }]).response.statusCode).toBe(503);
    expect(s.app.posts).toHaveLength(1);
    const again = await send(s, finops, alert(undefined, a.kind === 'in_progress' ? 'one' : 'two'));
    expect(again.kind).toBe('delivered');
    expect(s.app.posts[1]?.anomaly).toMatchObject({ kind: 'follow_up', opening: { ts: '7.0001' } });
  });

  it('a Slack app follow-up whose opening never got posted becomes a new message that is edited from then on', async () => {
    const s = setup();
    s.app.answers.push({ kind: 'retryable', reason: 'ratelimited', retryAfterMs: 1_000 });
    expect((await send(s, finops)).kind).toBe('queued');
    s.clock.advance((OPENING_PENDING_SECONDS + 1) * 1000);
    expect((await send(s, finops, alert(undefined, 'later'))).kind).toBe('delivered');
    expect(s.app.posts[1]?.anomaly).toEqual({ kind: 'follow_up', firstSeenAt: '2026-11-22T12:00:00Z', updates: 1 });
    expect([...s.ledger.anomalies.values()][0]?.opening).toEqual({ channel: 'C0123ABCD', ts: '100.0001' });
  });

  it('a refused opening is forgotten, so the next alert of the anomaly opens again', async () => {
    const s = setup();
    s.webhook.answers.push({ kind: 'refused', reason: 'channel_not_found' });
    expect(await send(s, ops)).toEqual({ kind: 'refused', reason: 'channel_not_found' });
    expect(s.deadLetters.parked[0]?.reason).toBe('channel_not_found');
    await send(s, ops, alert(undefined, 'again'));
    expect(s.webhook.posts.map((p) => p.anomaly?.kind)).toEqual(['opening', 'opening']);
  });

  it('a table outage costs no alert: it is delivered as an opening', async () => {
    const s = setup();
    await send(s, ops);
    s.ledger.fail = new Error('ProvisionedThroughputExceededException');
    expect(await send(s, ops, alert(undefined, 'changed'))).toEqual({ kind: 'delivered' });
    expect(s.webhook.posts.map((p) => p.anomaly?.kind)).toEqual(['opening', 'opening']);
    expect(s.log.records().some((r) => r['reason'] === 'dedup_unavailable')).toBe(true);
  });

  it('an anomaly write that fails alone is told once and costs nothing: the alert goes out as an opening', async () => {
    const s = setup();
    await send(s, ops);
    s.ledger.startAnomaly = async () => {
      throw new Error('ThrottlingException');
    };
    expect(await send(s, ops, alert(undefined, 'changed'))).toEqual({ kind: 'delivered' });
    expect(s.webhook.posts.map((p) => p.anomaly?.kind)).toEqual(['opening', 'opening']);
    expect(s.log.records().filter((r) => r['reason'] === 'dedup_unavailable')).toHaveLength(1);
  });

  it('a re-send whose anomaly had expired leaves no anomaly behind that nothing was posted for', async () => {
    const s = setup();
    await send(s, ops);
    s.ledger.anomalies.clear();
    expect(await send(s, ops)).toEqual({ kind: 'duplicate', state: 'delivered' });
    expect(s.ledger.anomalies.size).toBe(0);
  });

  it('a throttled follow-up waits on the queue as a follow-up, and the retry worker delivers it and counts it once', async () => {
    const s = setup();
    await send(s, finops);
    s.app.answers.push({ kind: 'retryable', reason: 'ratelimited', retryAfterMs: 3_000 });
    expect((await send(s, finops, alert(undefined, 'up 400%'))).kind).toBe('queued');
    const [queued] = s.retryQueue.jobs;
    expect(queued?.delaySeconds).toBe(3);
    const job = parseDeliveryJob(JSON.stringify(queued?.job));
    expect(job?.anomaly).toMatchObject({ kind: 'follow_up', updates: 1, opening: { ts: '100.0001' } });
    expect(JSON.stringify(queued?.job)).not.toContain(TOKEN);

    const decision = await s.delivery.again({ job: job!, target: finops, attempts: 2, maxAttempts: 5 }, plenty);
    expect(decision.kind).toBe('delivered');
    expect(s.app.posts[2]?.anomaly).toEqual(job?.anomaly);
    await retryLedger({ ledger: s.ledger, logger: s.log.logger }).settle(
      { message: job!.message, destination: 'finops', outcome: 'delivered', ...(job?.anomaly ? { anomaly: job.anomaly } : {}) },
      plenty,
    );
    expect([...s.ledger.anomalies.values()][0]?.followUps).toBe(1);
    expect(await send(s, finops, alert(undefined, 'up 400%'))).toEqual({ kind: 'duplicate', state: 'delivered' });
  });

  it('a queued opening delivered by the retry worker records where its message is; a parked one is forgotten', async () => {
    const s = setup();
    const ledger = retryLedger({ ledger: s.ledger, logger: s.log.logger });
    await ledger.settle({ message: alert(), destination: 'finops', outcome: 'delivered', opened: { channel: 'C1', ts: '5.5' } }, plenty);
    expect(s.ledger.anomalies.get(anomalyRecordId(alert(), 'finops'))?.opening).toEqual({ channel: 'C1', ts: '5.5' });
    await s.ledger.startAnomaly(anomalyRecordId(alert('other'), 'finops'));
    const parked = { firstAttemptAt: '2026-11-22T10:00:00.000Z', parkToken: 'parking' };
    await ledger.settle({ message: alert('other'), destination: 'finops', outcome: 'parked', parked }, plenty);
    expect(s.ledger.anomalies.has(anomalyRecordId(alert('other'), 'finops'))).toBe(false);
  });
});

describe('retry jobs', () => {
  it('carry a follow-up with ids and an ISO time only; anything else is not a job', () => {
    const base = { version: 2, deliveryId: 'r', destination: 'ops', attempt: 1, firstAttemptAt: 'x', message: alert() };
    const followUp = { kind: 'follow_up', firstSeenAt: '2026-11-22T10:00:00Z', updates: 2, opening: { channel: 'C1', ts: '1.2' } };
    expect(parseDeliveryJob(JSON.stringify({ ...base, anomaly: followUp }))?.anomaly).toEqual(followUp);
    expect(parseDeliveryJob(JSON.stringify({ ...base, anomaly: { ...followUp, firstSeenAt: '<!channel>' } }))).toBeUndefined();
    expect(parseDeliveryJob(JSON.stringify({ ...base, anomaly: { ...followUp, opening: { channel: '<@U1>', ts: '1' } } }))).toBeUndefined();
    expect(parseDeliveryJob(JSON.stringify({ ...base, anomaly: { ...followUp, text: 'x' } }))).toBeUndefined();
  });
});

describe('configuration of Slack app destinations', () => {
  const auth = { method: 'none' };
  const problems = (config: unknown) => {
    const result = relayConfigSchema.safeParse(config);
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
  };

  it('a channel with the top-level slack settings is valid, and needs them', () => {
    const destinations = { default: { channel: 'C0123ABCD', mention: '<!here>' } };
    expect(problems({ auth, slack: { botToken: TOKEN, signingSecret: 's' }, destinations })).toEqual([]);
    expect(problems({ auth, destinations })).toEqual(['slack is required: destination "default" names a Slack channel']);
  });

  it('exactly one of url and channel, a channel only for Slack, a channel id and a bot token, no unknown key', () => {
    const slack = { botToken: TOKEN };
    expect(problems({ auth, slack, destinations: { default: {} } })[0]).toMatch(/^destinations\.default\.url or "channel" is required/);
    expect(
      problems({ auth, slack, destinations: { default: { url: 'https://hooks.slack.com/services/x', channel: 'C0123ABCD' } } })[0],
    ).toMatch(/^destinations\.default\.url/);
    expect(problems({ auth, slack, destinations: { default: { type: 'teams', channel: 'C0123ABCD' } } })).toEqual([
      'destinations.default.channel is for Slack destinations only; use "url"',
    ]);
    expect(problems({ auth, slack, destinations: { default: { channel: '#finops' } } })[0]).toMatch(/^destinations\.default\.channel/);
    expect(problems({ auth, slack: { botToken: 'nope' }, destinations: { default: { channel: 'C0123ABCD' } } })[0]).toMatch(
      /^slack\.botToken/,
    );
    expect(problems({ auth, slack: { ...slack, token: 'x' }, destinations: { default: { channel: 'C0123ABCD' } } })[0]).toMatch(/^slack/);
  });
});

describe('follow-ups on webhook destinations', () => {
  it('Slack webhooks and Teams post a marked update that names when the anomaly was first seen', () => {
    const slack = formatSlackMessage(alert(), undefined, updateNote('2026-11-22T10:00:00Z', 2));
    expect(slack.text).toMatch(/^Update: /);
    expect(JSON.stringify(slack.blocks)).toContain('Update 2 of an anomaly first seen <!date^1795341600^');
    const teams = JSON.stringify(formatTeamsMessage(alert(), undefined, { firstSeenAt: '2026-11-22T10:00:00Z', updates: 2 }));
    expect(teams).toContain('Update 2 of an anomaly first seen {{DATE(2026-11-22T10:00:00Z, SHORT)}}');
    expect(JSON.stringify(formatTeamsMessage(alert()))).not.toContain('Update');
  });

  it('Google Chat replies in the anomaly thread, whatever the message or spacing of the title', () => {
    const opening = formatGoogleChatMessage(alert());
    const followUp = formatGoogleChatMessage(alert('EC2  spend rose', 'up 500%'), undefined, {});
    expect(followUp.thread).toEqual(opening.thread);
    expect(followUp.text).toMatch(/^Update: /);
    expect(formatGoogleChatMessage(alert('S3 spend rose')).thread).not.toEqual(opening.thread);
  });
});

describe("the Slack app client against a loopback server that plays Slack's Web API", () => {
  let api: FakeSlackApi;
  let post: ReturnType<typeof createSlackAppPoster>;
  const service = () => slackAppService({});
  const opening: AnomalyPost = { kind: 'opening' };
  const payload = (anomaly: AnomalyPost, title = 'EC2 spend rose') => ({ message: alert(title), mention: '<!here>', anomaly });
  const options = { timeoutMs: 2_000, botToken: TOKEN };

  beforeAll(async () => {
    api = await startFakeSlackApi(TOKEN);
    post = createSlackAppPoster({ apiUrl: api.url, tools: slackAppTools(), now: () => Date.parse('2026-11-22T11:00:00Z') });
  });
  beforeEach(() => {
    api.calls.length = 0;
    api.messages.length = 0;
  });
  afterAll(() => api.close());

  it('an opening is chat.postMessage with the bot token, and says where the message is', async () => {
    const outcome = await post('C0123ABCD', payload(opening), options);
    expect(outcome).toEqual({ kind: 'delivered', opened: { channel: 'C0123ABCD', ts: expect.any(String) } });
    expect(api.calls[0]).toMatchObject({ method: 'chat.postMessage', authorization: `Bearer ${TOKEN}` });
    expect(api.calls[0]?.body).toMatchObject({ channel: 'C0123ABCD', unfurl_links: false });
    expect(api.messages[0]?.text).toMatch(/^<!here> /);
  });

  it('a follow-up edits the opening (latest content, updates and when) and replies in its thread', async () => {
    const opened = await post('C0123ABCD', payload(opening), options);
    const ref = opened.kind === 'delivered' ? opened.opened : undefined;
    const followUp: AnomalyPost = { kind: 'follow_up', firstSeenAt: '2026-11-22T10:00:00Z', updates: 1, ...(ref ? { opening: ref } : {}) };
    expect(await post('C0123ABCD', { ...payload(followUp), message: alert('EC2 spend rose', 'now up 500%') }, options)).toEqual({
      kind: 'delivered',
    });
    expect(api.messages).toHaveLength(1);
    const [message] = api.messages;
    expect(message?.edits).toBe(1);
    expect(JSON.stringify(message?.blocks)).toContain('now up 500%');
    expect(JSON.stringify(message?.blocks)).toContain('Updated 1 time, latest <!date^1795345200^');
    expect(message?.replies).toHaveLength(1);
    expect(JSON.stringify(message?.replies[0]?.blocks)).toContain('now up 500%');
    expect(message?.replies[0]?.text).not.toContain('<!here>');
    for (const block of (message?.blocks ?? []) as Array<{ text?: { text: string } }>) {
      expect((block.text?.text ?? '').length).toBeLessThanOrEqual(SLACK_LIMITS.body + 20);
    }
  });

  it("a follow-up's edit and reply share the post's one deadline: a slow edit leaves the reply only what is left of it", async () => {
    const granted: Array<{ method: string; timeoutMs: number | undefined }> = [];
    // Our transport, as the service uses it, with Slack taking its time over the edit.
    const slowEdit: NodeFetch = async (input, init) => {
      const method = String(input).split('/').at(-1) as string;
      granted.push({ method, timeoutMs: init?.timeoutMs });
      if (method === 'chat.update') await new Promise((resolve) => setTimeout(resolve, 300));
      return fetchOverNodeHttp(input, init);
    };
    const slowPost = createSlackAppPoster({ apiUrl: api.url, tools: slackAppTools(slowEdit) });
    const opened = await slowPost('C0123ABCD', payload(opening), options);
    const ref = opened.kind === 'delivered' ? opened.opened : undefined;
    const followUp: AnomalyPost = { kind: 'follow_up', firstSeenAt: '2026-11-22T10:00:00Z', updates: 1, ...(ref ? { opening: ref } : {}) };
    granted.length = 0;
    expect(await slowPost('C0123ABCD', payload(followUp), { timeoutMs: 1_000, botToken: TOKEN })).toEqual({ kind: 'delivered' });
    expect(granted.map((g) => g.method)).toEqual(['chat.update', 'chat.postMessage']);
    expect(granted[0]?.timeoutMs).toBeLessThanOrEqual(1_000);
    // Together they never take more than the one post timeout the invocation could give.
    expect(granted[1]?.timeoutMs).toBeLessThanOrEqual(1_000 - 300);
  });

  it('an opening message that was deleted is replaced by a new opening, so the follow-up is not lost', async () => {
    const opened = await post('C0123ABCD', payload(opening), options);
    const ref = opened.kind === 'delivered' && opened.opened ? opened.opened : { channel: 'C0123ABCD', ts: '1.1' };
    api.deleteMessage(ref.ts);
    const outcome = await post(
      'C0123ABCD',
      payload({ kind: 'follow_up', firstSeenAt: '2026-11-22T10:00:00Z', updates: 1, opening: ref }),
      options,
    );
    expect(outcome).toEqual({ kind: 'delivered', opened: { channel: 'C0123ABCD', ts: expect.any(String) } });
    expect(api.messages).toHaveLength(1);
    expect(api.messages[0]?.text).toMatch(/Update: /);
  });

  it('answers are classified as Slack documents them: throttling and trouble retryable, refusals with their reason', async () => {
    const cases: Array<[Parameters<FakeSlackApi['queue']>[1], PostOutcome]> = [
      [
        { kind: 'rate_limited', retryAfterSeconds: 7 },
        { kind: 'retryable', reason: 'ratelimited', retryAfterMs: 7_000 },
      ],
      [
        { kind: 'error', error: 'ratelimited', retryAfterSeconds: 2 },
        { kind: 'retryable', reason: 'ratelimited', retryAfterMs: 2_000 },
      ],
      [
        { kind: 'error', error: 'internal_error' },
        { kind: 'retryable', reason: 'internal_error' },
      ],
      [
        { kind: 'error', error: 'service_unavailable' },
        { kind: 'retryable', reason: 'service_unavailable' },
      ],
      [
        { kind: 'status', status: 503 },
        { kind: 'retryable', reason: 'http_503' },
      ],
      [
        { kind: 'status', status: 404 },
        { kind: 'refused', reason: 'http_404' },
      ],
      [
        { kind: 'error', error: 'channel_not_found' },
        { kind: 'refused', reason: 'channel_not_found' },
      ],
      [
        { kind: 'error', error: 'not_in_channel' },
        { kind: 'refused', reason: 'not_in_channel' },
      ],
      [
        { kind: 'error', error: 'token_revoked' },
        { kind: 'refused', reason: 'token_revoked' },
      ],
      [
        { kind: 'error', error: 'msg_too_long' },
        { kind: 'refused', reason: 'msg_too_long' },
      ],
    ];
    for (const [answer, expected] of cases) {
      api.queue('chat.postMessage', answer);
      expect(await post('C0123ABCD', payload(opening), options)).toEqual(expected);
    }
    expect(await post('C0123ABCD', payload(opening), { timeoutMs: 2_000, botToken: 'xoxb-wrong' })).toEqual({
      kind: 'refused',
      reason: 'invalid_auth',
    });
    expect(await post('C0123ABCD', payload(opening), { timeoutMs: 2_000 })).toEqual({ kind: 'refused', reason: 'not_authed' });
  });

  it('a failed edit is the follow-up failing (it is tried again whole); a network failure is retryable', async () => {
    api.queue('chat.update', { kind: 'rate_limited', retryAfterSeconds: 30 });
    const followUp: AnomalyPost = {
      kind: 'follow_up',
      firstSeenAt: '2026-11-22T10:00:00Z',
      updates: 1,
      opening: { channel: 'C1', ts: '1.1' },
    };
    expect(await post('C1', payload(followUp), options)).toEqual({ kind: 'retryable', reason: 'ratelimited', retryAfterMs: 30_000 });
    const offline = createSlackAppPoster({ apiUrl: 'http://127.0.0.1:9/api/', tools: slackAppTools() });
    expect((await offline('C1', payload(opening), options)).kind).toBe('retryable');
  });

  it('the service formats nothing on the cold path and paces per channel', async () => {
    const s = service();
    expect(s.paceKey('C0123ABCD')).toBe('slack-app:C0123ABCD');
    expect(s.format(alert(), { channel: 'C1', mention: '<!here>' })).toEqual({ message: alert(), mention: '<!here>', anomaly: opening });
    const local = slackAppService({ apiUrl: api.url });
    expect(await local.post('C0123ABCD', local.format(alert(), { channel: 'C0123ABCD' }), options)).toMatchObject({ kind: 'delivered' });
  });
});

describe('a snoozed anomaly (lib/triage)', () => {
  it('is not posted to that destination while the snooze holds, answered 200 under snoozed and counted; posted again after it ends', async () => {
    const s = setup();
    await send(s, ops);
    const id = anomalyRecordId(alert(), 'ops');
    const state = s.ledger.anomalies.get(id);
    s.ledger.anomalies.set(id, {
      ...(state as NonNullable<typeof state>),
      triage: { state: 'snoozed', until: Math.floor(s.clock.now() / 1000) + 86_400 },
    });
    const held = await send(s, ops, alert('EC2 spend rose', 'up 400%'), 'r2');
    expect(held).toEqual({ kind: 'snoozed' });
    expect(s.webhook.posts).toHaveLength(1);
    expect(s.metrics.count('Deliveries', { outcome: 'snoozed' })).toBe(1);
    const answer = answerFor([{ destination: 'ops', result: held }]);
    expect(answer.response.statusCode).toBe(200);
    expect(JSON.parse(answer.response.body)).toMatchObject({ delivered: [], snoozed: ['ops'] });
    // Another destination of the same alert is not affected.
    expect(await send(s, finops, alert('EC2 spend rose', 'up 400%'), 'r2')).toMatchObject({ kind: 'delivered' });

    s.clock.advance(86_400_000);
    expect(await send(s, ops, alert('EC2 spend rose', 'up 400%'), 'r3')).toEqual({ kind: 'delivered' });
    expect(s.webhook.posts).toHaveLength(2);
  });

  it('a decision written before any opening (a click after the record expired) holds for the next alert, which opens nothing while snoozed', async () => {
    const s = setup();
    const id = anomalyRecordId(alert(), 'finops');
    const nowSeconds = Math.floor(s.clock.now() / 1000);
    s.ledger.anomalies.set(id, { triage: { state: 'snoozed', by: 'Dana', at: nowSeconds, until: nowSeconds + 86_400 } });
    expect(await send(s, finops)).toEqual({ kind: 'snoozed' });
    expect(s.app.posts).toHaveLength(0);
    // Nothing was posted, so nothing was opened; what was decided stays.
    expect(s.ledger.anomalies.get(id)).toEqual({ triage: { state: 'snoozed', by: 'Dana', at: nowSeconds, until: nowSeconds + 86_400 } });

    s.ledger.anomalies.set(id, { triage: { state: 'acknowledged', by: 'Dana', at: nowSeconds } });
    expect(await send(s, finops, alert('EC2 spend rose', 'up 1%'), 'r2')).toMatchObject({ kind: 'delivered' });
    expect(await send(s, finops, alert('EC2 spend rose', 'up 2%'), 'r3')).toMatchObject({ kind: 'delivered' });
    expect(s.app.posts.map((p) => p.anomaly)).toEqual([
      { kind: 'opening' },
      expect.objectContaining({ kind: 'follow_up', updates: 1, triage: { state: 'acknowledged', by: 'Dana', at: nowSeconds } }),
    ]);
  });
});
