import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnomalyPost, ChatService, TriageControls, TriageMark } from '../../lib/chat/service.js';
import { deliverOnce } from '../../lib/dedup/once.js';
import { createDelivery, type Target, type TriageControlsPort, targetOf } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { fromHttpApiEvent } from '../../lib/inbound/api-gateway.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { formatGoogleChatMessage } from '../../lib/notify/googlechat/format.js';
import { googleChatMessage } from '../../lib/notify/googlechat/lazy-googlechat-post.js';
import { googleChatService } from '../../lib/notify/googlechat/service.js';
import { threadKeyFor } from '../../lib/notify/googlechat/thread.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import { slackAppTools } from '../../lib/notify/slack/app-service.js';
import { formatSlackMessage, triageLinkBlock, updateNote } from '../../lib/notify/slack/format.js';
import { createSlackAppPoster } from '../../lib/notify/slack/lazy-app-post.js';
import { slackService } from '../../lib/notify/slack/service.js';
import { formatTeamsMessage } from '../../lib/notify/teams/format.js';
import { teamsMessage } from '../../lib/notify/teams/lazy-teams-post.js';
import { teamsService } from '../../lib/notify/teams/service.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { verifyChartToken } from '../../lib/triage-link/chart.js';
import { triageControls } from '../../lib/triage-link/controls.js';
import { verifyTriageToken } from '../../lib/triage-link/token.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';
import { capturedLogger, chatServices, manualClock, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';
import { liveSpecialForms } from '../helpers/slack-limits.js';

const KEY = 'unit-triage-link-key-0123456789abcdefghijklmnopqrstuvwxyz';
const TOKEN = 'xoxb-1111-2222-triagecontrolstoken';
const ORIGIN = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const alert = (title = 'EC2 spend rose', message = 'up 340%') =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
    payload: { title, message, account_id: '123456789012', account_name: 'Production' },
  });
const HOSTILE = '<!channel> *bold* <https://evil.example|click> @here {{DATE(2026-01-01T00:00:00Z)}}';
const mark = (by = 'Dana'): TriageMark => ({ state: 'acknowledged', by, at: Math.floor(NOW / 1000) });

const teams: Target = { name: 'teams', destination: { type: 'teams', url: 'https://prod-1.westeurope.logic.azure.com/workflows/x' } };
const gchat: Target = { name: 'gchat', destination: { type: 'googlechat', url: 'https://chat.googleapis.com/v1/spaces/S/messages?key=k' } };
const webhook: Target = { name: 'ops', destination: { url: 'https://hooks.slack.com/services/T0/B0/secret' } };

/** What a message would be offered: the port's answer, or the work it hands over, done. */
async function offered(port: TriageControlsPort, alert: Parameters<TriageControlsPort>[0]) {
  const offer = port(alert);
  return typeof offer === 'function' ? offer(new AbortController().signal) : offer;
}

function secretsReturning(value: unknown, reads: string[] = []) {
  return async (operation: string, input: Record<string, unknown>) => {
    reads.push(`${operation}:${String(input['SecretId'])}`);
    return { SecretString: value };
  };
}

describe('which controls a message offers (lib/triage-link)', () => {
  it('a Slack app that takes clicks gets buttons naming the anomaly; without a signing secret, none', async () => {
    const port = triageControls({ secrets: secretsReturning(KEY), now: () => NOW });
    const slack = { botToken: TOKEN, signingSecret: 'sign' };
    const app = targetOf('finops', { type: 'slack', channel: 'C0123ABCD' }, slack);
    expect(app).toMatchObject({ botToken: TOKEN, buttons: true });
    // The buttons carry what a cost event is written with, since the table holds no alert text.
    expect(await offered(port, { target: app, message: alert() })).toEqual({
      buttons: anomalyRecordId(alert(), 'finops'),
      about: { destination: 'finops', title: alert().payload.title, accountId: alert().payload.account_id },
    });
    const quiet = targetOf('finops', { type: 'slack', channel: 'C0123ABCD' }, { botToken: TOKEN });
    expect(await offered(port, { target: quiet, message: alert() })).toBeUndefined();
    expect(targetOf('ops', webhook.destination, slack)).toEqual(webhook);
  });

  it('every other destination gets a signed link to its anomaly on the origin the alert arrived on; the key is read once', async () => {
    const reads: string[] = [];
    const port = triageControls({ keySecretId: 'stack/triage-key', secrets: secretsReturning(KEY, reads), now: () => NOW });
    const link = (await offered(port, { target: gchat, message: alert(), origin: ORIGIN })) as { link: string };
    expect(link.link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const reading = verifyTriageToken(KEY, link.link.slice(`${ORIGIN}/triage/`.length), NOW);
    expect(reading).toEqual({
      ok: true,
      token: {
        a: anomalyRecordId(alert(), 'gchat'),
        d: 'gchat',
        t: 'EC2 spend rose',
        c: 'Production (123456789012)',
        k: threadKeyFor(alert()),
        e: Math.floor(NOW / 1000) + 30 * 86_400,
      },
    });
    const teamsLink = (await offered(port, { target: teams, message: alert(), origin: ORIGIN })) as { link: string };
    const teamsToken = verifyTriageToken(KEY, teamsLink.link.split('/triage/')[1] as string, NOW);
    expect(teamsToken.ok && 'token' in teamsToken && teamsToken.token.k).toBeUndefined();
    expect(reads).toEqual(['GetSecretValue:stack/triage-key']);
    // The link never carries the key or the destination's URL.
    expect(link.link).not.toContain(KEY);
    expect(Buffer.from(link.link.split('/triage/')[1]?.split('.')[0] ?? '', 'base64url').toString()).not.toContain('chat.googleapis.com');
  });

  it('no link without an origin or without a key; a key too short is an error, read again next time', async () => {
    const withKey = triageControls({ key: KEY, secrets: secretsReturning(KEY), now: () => NOW });
    expect(await offered(withKey, { target: teams, message: alert() })).toBeUndefined();
    const withoutKey = triageControls({ secrets: secretsReturning(KEY), now: () => NOW });
    expect(await offered(withoutKey, { target: teams, message: alert(), origin: ORIGIN })).toBeUndefined();
    withoutKey.prime();
    const reads: string[] = [];
    const short = triageControls({ keySecretId: 'k', secrets: secretsReturning('short', reads), now: () => NOW });
    await expect(offered(short, { target: teams, message: alert(), origin: ORIGIN })).rejects.toThrow('shorter than 32');
    await expect(offered(short, { target: teams, message: alert(), origin: ORIGIN })).rejects.toThrow('shorter than 32');
    expect(reads).toHaveLength(2);
  });

  it('prime reads the key ahead of the first link', async () => {
    const reads: string[] = [];
    const port = triageControls({ keySecretId: 'k', secrets: secretsReturning(KEY, reads), now: () => NOW });
    port.prime();
    await expect.poll(() => reads.length).toBe(1);
    await offered(port, { target: teams, message: alert(), origin: ORIGIN });
    expect(reads).toHaveLength(1);
  });

  it('prime starts nothing once the key is read, and tries again after a read that failed', async () => {
    const reads: string[] = [];
    let down = true;
    const secrets = async (operation: string, input: Record<string, unknown>) => {
      reads.push(`${operation}:${String(input['SecretId'])}`);
      if (down) throw new Error('secrets manager down');
      return { SecretString: KEY };
    };
    const port = triageControls({ keySecretId: 'k', secrets, now: () => NOW });
    port.prime();
    await expect.poll(() => reads.length).toBe(1);
    down = false;
    // The failed read is not remembered: the next request's prime reads again, and then no more.
    await expect
      .poll(() => {
        port.prime();
        return reads.length;
      })
      .toBe(2);
    for (let i = 0; i < 5; i += 1) port.prime();
    expect(await offered(port, { target: teams, message: alert(), origin: ORIGIN })).toMatchObject({ link: expect.any(String) });
    expect(reads).toHaveLength(2);
  });

  it('the origin comes from API Gateway’s own domain name; anything else gets no link', () => {
    const event = (domainName?: string) => ({
      requestContext: { requestId: 'r', ...(domainName ? { domainName } : {}), http: { method: 'POST' } },
    });
    expect(fromHttpApiEvent(event('abc123.execute-api.eu-west-1.amazonaws.com'), 'x').origin).toBe(ORIGIN);
    expect(fromHttpApiEvent(event('evil.example/path?'), 'x').origin).toBeUndefined();
    expect(fromHttpApiEvent(event(), 'x').origin).toBeUndefined();
  });
});

describe('links and marks in each chat', () => {
  const link = `${ORIGIN}/triage/abc.def`;

  it('Slack webhooks, Teams and Google Chat carry one "Triage" link button; without a link, none', () => {
    const slack = slackService().format(alert(), webhook.destination, undefined, { link }) as ReturnType<typeof formatSlackMessage>;
    expect(slack.blocks.at(-1)).toEqual(triageLinkBlock(link));
    expect(JSON.stringify(slackService().format(alert(), webhook.destination))).not.toContain('Triage');
    const card = teamsMessage(teamsService().format(alert(), teams.destination, undefined, { link }));
    expect(card.attachments[0].content.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Triage', url: link }]);
    expect(formatTeamsMessage(alert()).attachments[0].content.actions).toBeUndefined();
    const chat = googleChatMessage(googleChatService().format(alert(), gchat.destination, undefined, { link }));
    expect(chat.cardsV2[0].card.sections[0].widgets.at(-1)).toEqual({
      buttonList: { buttons: [{ text: 'Triage', onClick: { openLink: { url: link } } }] },
    });
    expect(
      JSON.stringify(googleChatMessage(googleChatService().format(alert(), gchat.destination, undefined, { buttons: 'x' }))),
    ).not.toContain('openLink');
  });

  it('a follow-up of an acknowledged anomaly says so, with the name made inert in every chat', () => {
    const followUp = { firstSeenAt: '2026-11-22T10:00:00Z', updates: 2, triage: mark(HOSTILE) };
    const slack = formatSlackMessage(alert(), undefined, updateNote(followUp.firstSeenAt, 2, followUp.triage));
    expect(slack.text).toMatch(/^Update \(acknowledged\):/);
    expect(JSON.stringify(slack.blocks)).toContain('Acknowledged by');
    expect(liveSpecialForms(slack)).toEqual([]);
    const teamsText = JSON.stringify(formatTeamsMessage(alert(), undefined, followUp));
    expect(teamsText).toContain('Acknowledged by');
    expect(teamsText).not.toMatch(/<!channel>|\*bold\*|\{\{DATE\(2026-01-01/);
    const chat = formatGoogleChatMessage(alert(), undefined, { triage: mark(HOSTILE) });
    expect(chat.text).toMatch(/^Update \(acknowledged by /);
    expect(chat.text).not.toMatch(/[<>]/);
    // An open anomaly's follow-up is marked as an update only.
    expect(formatGoogleChatMessage(alert(), undefined, {}).text).toMatch(/^Update: /);
  });
});

/** A chat service whose payload is the triage controls it was offered: what a message would carry. */
function controlsRecorder(posted: unknown[]): ChatService {
  return {
    minIntervalMs: 0,
    paceKey: (a) => a,
    format: (_m, _d, _a, triage) => triage,
    async post(_address, payload) {
      posted.push(payload);
      return { kind: 'delivered' };
    },
  };
}

describe('the delivery core asks for the controls and never loses an alert over them', () => {
  const posted: unknown[] = [];
  const recording = controlsRecorder(posted);
  beforeEach(() => {
    posted.length = 0;
  });
  const delivery = (triage: TriageControlsPort, log = capturedLogger(), retryQueue = memoryRetryQueue()) => ({
    log,
    retryQueue,
    delivery: createDelivery({
      services: chatServices({ slack: recording, teams: recording, googlechat: recording, slackApp: recording }),
      postTimeoutMs: 5_000,
      logger: log.logger,
      now: () => NOW,
      sleep: async () => {},
      triage,
      retryQueue,
    }),
  });

  it('the relay’s attempt and a retry offer the controls for the origin the alert arrived on; a digest offers none', async () => {
    const seen: Array<string | undefined> = [];
    const { delivery: core } = delivery(({ origin }) => {
      seen.push(origin);
      return async () => ({ link: `${origin}/triage/t` });
    });
    await core.first({ deliveryId: 'r', target: teams, message: alert(), origin: ORIGIN }, budgetOf(10_000));
    const job = newJob('r', 'teams', alert(), 'http_503', NOW, undefined, ORIGIN);
    await core.again({ job, target: teams, attempts: 2, maxAttempts: 5 }, budgetOf(10_000));
    await core.attempt(teams, alert(), budgetOf(10_000));
    expect(posted).toEqual([{ link: `${ORIGIN}/triage/t` }, { link: `${ORIGIN}/triage/t` }, undefined]);
    expect(seen).toEqual([ORIGIN, ORIGIN]);
  });

  it('a failing or hung controls port costs only the controls: the alert is posted in time', async () => {
    const failing = delivery(() => async () => {
      throw new Error('secrets down');
    });
    expect(await failing.delivery.first({ deliveryId: 'r', target: teams, message: alert(), origin: ORIGIN }, budgetOf(10_000))).toEqual({
      kind: 'delivered',
    });
    expect(failing.log.lines.join('\n')).toContain('message posted without its triage controls');
    const hung = delivery(() => (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))));
    expect(await hung.delivery.first({ deliveryId: 'r', target: teams, message: alert(), origin: ORIGIN }, budgetOf(10_000))).toEqual({
      kind: 'delivered',
    });
    expect(posted).toEqual([undefined, undefined]);
  });

  it('a queued alert keeps its origin on the retry queue; an origin that is not an API’s own is not kept', async () => {
    const job = newJob('r', 'teams', alert(), 'http_503', NOW, undefined, ORIGIN);
    expect(parseDeliveryJob(JSON.stringify(job))?.origin).toBe(ORIGIN);
    expect(newJob('r', 'teams', alert(), 'x', NOW, undefined, 'https://evil.example/phish?')).not.toHaveProperty('origin');
    expect(parseDeliveryJob(JSON.stringify({ ...job, origin: 'javascript:alert(1)' }))).toBeUndefined();
    expect(parseDeliveryJob(JSON.stringify({ ...job, origin: 'http://127.0.0.1:3000' }))?.origin).toBe('http://127.0.0.1:3000');
    const followUp: AnomalyPost = { kind: 'follow_up', firstSeenAt: '2026-11-22T10:00:00Z', updates: 1, triage: mark() };
    expect(parseDeliveryJob(JSON.stringify(newJob('r', 'teams', alert(), 'x', NOW, followUp)))?.anomaly).toEqual(followUp);
  });
});

describe('a message’s cost-trend picture', () => {
  const HOOK = 'https://hooks.slack.com/services/T0/B0/secret-part';
  const chartToken = (link: string) => verifyChartToken(KEY, link.slice(`${ORIGIN}/chart/`.length), NOW);

  it('its link is signed with the triage key and names the account, its name and the alert’s day; none without an account or key', async () => {
    const port = triageControls({ keySecretId: 'k', secrets: secretsReturning(KEY), now: () => NOW });
    const link = await port.chart?.({ message: alert(), origin: ORIGIN })?.(new AbortController().signal);
    expect(link?.startsWith(`${ORIGIN}/chart/`)).toBe(true);
    expect(chartToken(link ?? '')).toEqual({
      ok: true,
      token: { a: '123456789012', d: '2026-11-22', n: 'Production', e: Math.floor(NOW / 1000) + 30 * 86_400 },
    });
    expect(link).not.toContain(KEY);
    const unnamed = webhookMessageSchema.parse({
      metadata: { object_type: 'anomaly_alert' },
      payload: { title: 'T', account_id: '210987654321' },
    });
    const unnamedLink = await port.chart?.({ message: unnamed, origin: ORIGIN })?.(new AbortController().signal);
    expect(chartToken(unnamedLink ?? '')).toMatchObject({ ok: true, token: { a: '210987654321', d: '2026-11-22' } });
    expect(chartToken(unnamedLink ?? '')).not.toHaveProperty('token.n');
    const noAccount = webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title: 'T', account_id: ' ' } });
    expect(port.chart?.({ message: noAccount, origin: ORIGIN })).toBeUndefined();
    expect(triageControls({ now: () => NOW }).chart?.({ message: alert(), origin: ORIGIN })).toBeUndefined();
  });

  it('a Slack message about an account the directory knows shows it; a test, an unknown account or a failing key, none', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const transport: NodeFetch = async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return new Response('ok', { status: 200 }) as never;
    };
    const log = capturedLogger();
    const core = (triage: TriageControlsPort) =>
      createDelivery({
        services: createChatServices(transport, {}),
        postTimeoutMs: 5_000,
        logger: log.logger,
        now: () => NOW,
        sleep: async () => {},
        triage,
      });
    const images = () =>
      ((bodies.at(-1)?.['blocks'] ?? []) as Array<{ type: string; image_url?: string }>).filter((block) => block.type === 'image');
    const trend = { trend: true };
    const target = targetOf('ops', { url: HOOK }, undefined, false, trend);
    const costCenters = [{ id: '7', name: 'Data' }];
    const signing = core(triageControls({ key: KEY, now: () => NOW }));

    const delivered = await signing.first({ deliveryId: 'r1', target, message: alert(), origin: ORIGIN, costCenters }, budgetOf(10_000));
    expect(delivered).toEqual({ kind: 'delivered' });
    const [image] = images();
    expect(image?.image_url?.startsWith(`${ORIGIN}/chart/`)).toBe(true);
    expect(chartToken(image?.image_url ?? '')).toMatchObject({ ok: true, token: { a: '123456789012', d: '2026-11-22' } });

    // A quiet test is about no account; an account the directory does not know (no cost centers), or no origin: no picture.
    await signing.first(
      { deliveryId: 'r2', target: targetOf('ops', { url: HOOK }, undefined, true, trend), message: alert(), origin: ORIGIN, costCenters },
      budgetOf(10_000),
    );
    expect(images()).toEqual([]);
    await signing.first({ deliveryId: 'r3', target, message: alert(), origin: ORIGIN }, budgetOf(10_000));
    expect(images()).toEqual([]);
    await signing.first({ deliveryId: 'r4', target, message: alert(), costCenters }, budgetOf(10_000));
    expect(images()).toEqual([]);
    // Without platform.trend the target carries none, whatever it knows.
    await signing.first(
      { deliveryId: 'r5', target: targetOf('ops', { url: HOOK }, undefined, false, {}), message: alert(), origin: ORIGIN, costCenters },
      budgetOf(10_000),
    );
    expect(images()).toEqual([]);
    // No key configured: nothing signs it.
    await core(triageControls({ now: () => NOW })).first(
      { deliveryId: 'r6', target, message: alert(), origin: ORIGIN, costCenters },
      budgetOf(10_000),
    );
    expect(images()).toEqual([]);

    // A key that cannot be read costs the message its picture, never the alert.
    const failing = core(
      triageControls({
        keySecretId: 'k',
        secrets: async () => {
          throw new Error('AccessDeniedException');
        },
        now: () => NOW,
      }),
    );
    expect(await failing.first({ deliveryId: 'r7', target, message: alert(), origin: ORIGIN, costCenters }, budgetOf(10_000))).toEqual({
      kind: 'delivered',
    });
    expect(images()).toEqual([]);
    expect(log.lines.join('\n')).toContain('message posted without its cost-trend picture');
    expect(bodies).toHaveLength(7);
  });
});

describe('what the anomaly’s triage state does to its follow-ups (lib/dedup)', () => {
  function setup() {
    const clock = manualClock(NOW);
    const ledger = memoryLedger(clock.now);
    const posts: Array<AnomalyPost | undefined> = [];
    const service: ChatService = {
      minIntervalMs: 0,
      paceKey: (a) => a,
      format: (_m, _d, anomaly) => anomaly,
      async post(_a, payload) {
        posts.push(payload as AnomalyPost | undefined);
        return { kind: 'delivered' };
      },
    };
    const log = capturedLogger();
    const delivery = createDelivery({
      services: chatServices({ slack: service, teams: service, googlechat: service, slackApp: service }),
      postTimeoutMs: 5_000,
      logger: log.logger,
      now: clock.now,
      sleep: clock.sleep,
    });
    const first = deliverOnce({ ledger, delivery, logger: log.logger, metrics: memoryMetrics(), now: clock.now });
    const send = (message: ReturnType<typeof alert>, id: string) => first({ deliveryId: id, target: teams, message }, budgetOf(10_000));
    return { clock, ledger, posts, send };
  }
  const id = anomalyRecordId(alert(), 'teams');

  it('acknowledged or expected: each follow-up carries who decided and when; reopened: no mark', async () => {
    const s = setup();
    await s.send(alert(), 'r1');
    const state = s.ledger.anomalies.get(id) as NonNullable<ReturnType<typeof s.ledger.anomalies.get>>;
    s.ledger.anomalies.set(id, { ...state, triage: { state: 'expected', by: 'Dana', at: 100 } });
    await s.send(alert('EC2 spend rose', 'up 400%'), 'r2');
    expect(s.posts[1]).toMatchObject({ kind: 'follow_up', triage: { state: 'expected', by: 'Dana', at: 100 } });
    s.ledger.anomalies.set(id, { ...state, triage: { state: 'open', by: 'Dana', at: 200 } });
    await s.send(alert('EC2 spend rose', 'up 500%'), 'r3');
    expect(s.posts[2]).toMatchObject({ kind: 'follow_up' });
    expect(s.posts[2]).not.toHaveProperty('triage');
  });

  it('a snooze holds follow-ups back until it ends; after that they are posted again, unmarked', async () => {
    const s = setup();
    await s.send(alert(), 'r1');
    const state = s.ledger.anomalies.get(id) as NonNullable<ReturnType<typeof s.ledger.anomalies.get>>;
    const until = Math.floor(NOW / 1000) + 86_400;
    s.ledger.anomalies.set(id, { ...state, triage: { state: 'snoozed', by: 'Dana', at: Math.floor(NOW / 1000), until } });
    expect(await s.send(alert('EC2 spend rose', 'up 400%'), 'r2')).toEqual({ kind: 'snoozed' });
    s.clock.advance(86_400 * 1000);
    expect(await s.send(alert('EC2 spend rose', 'up 400%'), 'r3')).toMatchObject({ kind: 'delivered' });
    expect(s.posts).toHaveLength(2);
    expect(s.posts[1]).not.toHaveProperty('triage');
  });
});

describe('Slack app messages carry the buttons, and follow-ups keep them true to the state', () => {
  let api: FakeSlackApi;
  let post: ReturnType<typeof createSlackAppPoster>;
  const options = { timeoutMs: 2_000, botToken: TOKEN };
  const controls: TriageControls = { buttons: 'anomaly#abc' };
  const labels = (blocks: unknown) =>
    (
      (blocks as Array<{ block_id?: string; elements?: Array<{ text: { text: string }; value?: string }> }>).find(
        (b) => b.block_id === 'triage_actions',
      )?.elements ?? []
    ).map((e) => `${e.text.text}=${e.value}`);

  beforeAll(async () => {
    api = await startFakeSlackApi(TOKEN);
    post = createSlackAppPoster({ apiUrl: api.url, tools: slackAppTools(), now: () => NOW });
  });
  beforeEach(() => {
    api.calls.length = 0;
    api.messages.length = 0;
  });
  afterAll(() => api.close());

  it('the opening has the three actions; an acknowledged follow-up edits it to say who and offer Reopen, and marks its reply', async () => {
    const opened = await post('C0123ABCD', { message: alert(), anomaly: { kind: 'opening' }, triage: controls }, options);
    expect(labels(api.messages[0]?.blocks)).toEqual(['Acknowledge=anomaly#abc', 'Expected=anomaly#abc', 'Snooze 24 h=anomaly#abc']);
    const ref = opened.kind === 'delivered' ? opened.opened : undefined;
    const followUp: AnomalyPost = {
      kind: 'follow_up',
      firstSeenAt: '2026-11-22T10:00:00Z',
      updates: 1,
      triage: mark('<@U999> *Dana*'),
      ...(ref ? { opening: ref } : {}),
    };
    await post('C0123ABCD', { message: alert('EC2 spend rose', 'up 500%'), anomaly: followUp, triage: controls }, options);
    const [message] = api.messages;
    expect(labels(message?.blocks)).toEqual(['Reopen=anomaly#abc']);
    const status = JSON.stringify(((message?.blocks ?? []) as Array<{ block_id?: string }>).find((b) => b.block_id === 'triage_status'));
    expect(status).toContain('Acknowledged by');
    expect(status).not.toContain('<@U999>');
    expect(message?.replies[0]?.text).toMatch(/^Update \(acknowledged\):/);
    expect(liveSpecialForms(message as never)).toEqual([]);
  });

  it('without controls (no signing secret) a message has no buttons', async () => {
    await post('C0123ABCD', { message: alert(), anomaly: { kind: 'opening' } }, options);
    expect(labels(api.messages[0]?.blocks)).toEqual([]);
  });
});

describe('the relay wired from its environment signs links with the key in Secrets Manager', () => {
  let aws: FakeAws;
  const saved = { ...process.env };
  beforeAll(async () => {
    aws = await startFakeAws();
    Object.assign(process.env, { AWS_ENDPOINT_URL: aws.url, AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' });
    aws.answer('secretsmanager.GetSecretValue', { SecretString: KEY, VersionId: 'v1' });
  });
  afterAll(async () => {
    process.env = saved;
    await aws.close();
  });

  it('the link leads to the origin the delivery arrived on; the key is read once per container and never shown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'triage-wiring-'));
    writeFileSync(join(dir, 'relay.json'), JSON.stringify({ auth: { method: 'none' }, destinations: { default: teams.destination } }));
    const posted: unknown[] = [];
    const service = controlsRecorder(posted);
    const log = capturedLogger();
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`, TRIAGE_KEY_SECRET_ID: 'stack/triage-key' },
      {
        services: chatServices({ slack: service, teams: service, googlechat: service, slackApp: service }),
        logger: log.logger,
        metrics: memoryMetrics(),
      },
    );
    const request = (title: string) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...alert(title), metadata: { object_type: 'anomaly_alert' } }),
      isBase64Encoded: false,
      requestId: title,
      origin: ORIGIN,
    });
    const answers = [await relay(request('EC2 spend rose'), budgetOf(10_000)), await relay(request('S3 spend rose'), budgetOf(10_000))];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200]);
    const links = posted.map((p) => (p as { link: string }).link);
    expect(links.every((l) => l.startsWith(`${ORIGIN}/triage/`))).toBe(true);
    expect(verifyTriageToken(KEY, links[1]?.split('/triage/')[1] as string, Date.now())).toMatchObject({
      ok: true,
      token: { t: 'S3 spend rose' },
    });
    expect(aws.calls.filter((c) => c.target === 'secretsmanager.GetSecretValue')).toHaveLength(1);
    expect(JSON.stringify([answers, log.lines])).not.toContain(KEY);

    // npm start: a session key and the local server's own origin.
    const local = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}` },
      {
        services: chatServices({ slack: service, teams: service, googlechat: service, slackApp: service }),
        logger: log.logger,
        metrics: memoryMetrics(),
        triageKey: KEY,
        origin: 'http://127.0.0.1:3000',
      },
    );
    await local(request('RDS spend rose'), budgetOf(10_000));
    expect((posted.at(-1) as { link: string }).link.startsWith('http://127.0.0.1:3000/triage/')).toBe(true);
  });
});
