import { describe, expect, it } from 'vitest';
import type { ChatService, PostOutcome } from '../../lib/chat/service.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { deliveryRecordId } from '../../lib/dedup/fingerprint.js';
import { deliverOnce, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery, type FirstAttempt, type TriageControlsPort } from '../../lib/delivery/deliver.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { closeGroup } from '../../lib/group/close.js';
import { digestParts } from '../../lib/group/digest.js';
import type { GroupCloseJob } from '../../lib/group/job.js';
import { parseGroupCloseJob } from '../../lib/group/job.js';
import { joinGroup } from '../../lib/group/join.js';
import { entryBytes, inMemoryGroupStore, MAX_GROUP_ALERTS, MAX_GROUP_BYTES } from '../../lib/group/store.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { googleChatMessage } from '../../lib/notify/googlechat/lazy-googlechat-post.js';
import { createChatServices, KINDS } from '../../lib/notify/kinds.js';
import type { SlackAppPayload } from '../../lib/notify/slack/app-payload.js';
import type { SlackDestination } from '../../lib/notify/slack/config.js';
import { formatSlackMessage, triageLinkBlock } from '../../lib/notify/slack/format.js';
import { SLACK_MIN_INTERVAL_MS } from '../../lib/notify/slack/service.js';
import { teamsMessage } from '../../lib/notify/teams/lazy-teams-post.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch, type QueueRecord } from '../../lib/retry/process-batch.js';
import { invocationBudget } from '../../lib/shared/deadline.js';
import { budgetOf } from '../helpers/budget.js';
import { googleChatCardTexts, googleChatViolations, senderMarkup, teamsTexts, teamsViolations } from '../helpers/chat-limits.js';
import { capturedLogger, manualClock, memoryDeadLetters } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { liveSpecialForms, type ReceivedMessage, slackLimitViolations, slackSenderTexts } from '../helpers/slack-limits.js';

const SLACK_URL = 'https://hooks.slack.com/services/T0/B0/storm-secret';
const config = relayConfigSchema.parse({
  auth: { method: 'none' },
  slack: { botToken: 'xoxb-grouping-test' },
  destinations: {
    default: { url: 'https://hooks.slack.com/services/T0/B9/plain' },
    storm: { url: SLACK_URL, group: { waitSeconds: 60 } },
    teams: {
      url: 'https://prod-1.westus.logic.azure.com/workflows/x/triggers/manual/paths/invoke?sig=S',
      mention: { id: 'dana.example@example.com', name: 'Dana Example' },
      group: { waitSeconds: 30 },
    },
    chat: { url: 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=K&token=T', mention: '<users/all>', group: { waitSeconds: 30 } },
    app: { channel: 'C0123ABCD', group: { waitSeconds: 30 } },
  },
});

const alert = (n: number, extra: { title?: string; message?: string; account?: string } = {}): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert' },
    payload: {
      title: extra.title ?? `Spend spike ${n} in EC2`,
      message: extra.message ?? `Up ${n}% today`,
      account_id: extra.account ?? `1234567890${String(n % 100).padStart(2, '0')}`,
    },
  });

/**
 * The real formatters, with posts recorded and answered from a script (then delivered); an Error in the script is thrown, as by a closer
 * that dies. `sent`: what the service's poster sends for a payload, where it makes the message itself (Teams, Google Chat).
 */
function recording(real: ChatService, opened = false, sent: (payload: never) => unknown = (payload) => payload) {
  const payloads: unknown[] = [];
  const answers: Array<PostOutcome | Error> = [];
  const service: ChatService = {
    ...real,
    post: async (_address, payload) => {
      payloads.push(sent(payload as never));
      const next = answers.shift();
      if (next instanceof Error) throw next;
      if (next) return next;
      return opened
        ? { kind: 'delivered', opened: { channel: 'C0123ABCD', ts: `1700000000.${String(payloads.length).padStart(6, '0')}` } }
        : { kind: 'delivered' };
    },
  };
  return { service, payloads, answer: (...next: Array<PostOutcome | Error>) => answers.push(...next) };
}

function setup() {
  const clock = manualClock();
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const real = createChatServices();
  const slack = recording(real.slack);
  const teams = recording(real.teams, false, teamsMessage);
  const chat = recording(real.googlechat, false, googleChatMessage);
  const app = recording(real.slackApp, true);
  const services = { ...real, slack: slack.service, teams: teams.service, googlechat: chat.service, slackApp: app.service };
  // Each message's triage link, for an alert that arrived on an origin.
  const triage: TriageControlsPort = ({ origin }) => (origin ? { link: `${origin}/triage/t` } : undefined);
  const deadLetters = memoryDeadLetters();
  const delivery = createDelivery({
    services,
    postTimeoutMs: 5_000,
    deadLetters,
    logger: log.logger,
    metrics,
    now: clock.now,
    sleep: clock.sleep,
    triage,
  });
  const store = inMemoryGroupStore(clock.now);
  const ledger = memoryLedger(clock.now);
  const scheduled: Array<{ job: GroupCloseJob; delaySeconds: number }> = [];
  const grouping = { store, logger: log.logger, metrics, now: clock.now };
  const schedule = async (job: GroupCloseJob, delaySeconds: number) => {
    scheduled.push({ job, delaySeconds });
  };
  const join = joinGroup({ ...grouping, schedule }, delivery.first);
  const first: FirstAttempt = deliverOnce({ ledger, delivery: { ...delivery, first: join }, logger: log.logger, metrics, now: clock.now });
  const visibility: number[] = [];
  let received = 0;
  /** The retry worker receiving the closing jobs scheduled so far (or the given messages). */
  const close = async (jobs: unknown[] = scheduled.map((s) => s.job)) => {
    const records: QueueRecord[] = jobs.map((job) => ({
      messageId: `m${++received}`,
      receiptHandle: `rh${received}`,
      body: JSON.stringify(job),
      attributes: { ApproximateReceiveCount: '1' },
    }));
    return processBatch(records, {
      config: memoryConfigStore({ config }),
      delivery,
      messages: { changeVisibility: async (_handle, seconds) => void visibility.push(seconds), send: async () => undefined },
      pacer: createPacer(clock.now, clock.sleep),
      maxAttempts: 5,
      postTimeoutMs: 5_000,
      logger: log.logger,
      metrics,
      ledger: retryLedger({ ledger, logger: log.logger, metrics }),
      groups: store,
      sleep: clock.sleep,
      budget: budgetOf(() => 600_000),
    });
  };
  const target = (name: string) => ({
    name,
    destination: config.destinations[name]!,
    ...(name === 'app' ? { botToken: 'xoxb-grouping-test' } : {}),
  });
  let requests = 0;
  const send = (name: string, message: WebhookMessage, origin?: string) =>
    first({ deliveryId: `r${++requests}`, target: target(name), message, origin }, budgetOf(10_000));
  return {
    send,
    delivery,
    deadLetters,
    close,
    scheduled,
    slack,
    teams,
    chat,
    app,
    metrics,
    store,
    ledger,
    visibility,
    log,
    join,
    target,
    clock,
    schedule,
    grouping,
  };
}

const slackText = (payload: unknown) => JSON.stringify(payload);

/** Posts at once through the core, to one service. */
const createDeliveryFor = (slack: ChatService) =>
  createDelivery({
    services: { ...createChatServices(), slack },
    postTimeoutMs: 5_000,
    logger: capturedLogger().logger,
    now: Date.now,
    sleep: async () => undefined,
  }).first;

describe('grouping per destination: an alert storm becomes one message', () => {
  it('folds 120 alerts into at most 3 Slack posts within its limits, naming every alert, after the wait', async () => {
    const { send, close, scheduled, slack, metrics } = setup();
    const results = [];
    for (let i = 1; i <= 120; i++) results.push(await send('storm', alert(i)));
    expect(results.every((r) => r.kind === 'grouped')).toBe(true);
    // Nothing is posted before the group closes; one closing job waits for the whole wait.
    expect(slack.payloads).toHaveLength(0);
    expect(scheduled).toEqual([{ job: expect.objectContaining({ kind: 'group_close', destination: 'storm' }), delaySeconds: 60 }]);

    expect(await close()).toEqual({ batchItemFailures: [] });
    expect(slack.payloads.length).toBeGreaterThan(0);
    expect(slack.payloads.length).toBeLessThanOrEqual(3);
    for (const payload of slack.payloads) expect(slackLimitViolations(payload as ReceivedMessage)).toEqual([]);
    const text = slack.payloads.map(slackText).join('\n');
    for (let i = 1; i <= 120; i++) expect(text).toContain(`Spend spike ${i} in EC2 ·`);
    expect(metrics.count('GroupsOpened')).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'grouped' })).toBe(120);
    expect(metrics.count('DigestsPosted')).toBe(slack.payloads.length);
  });

  it('posts a lone alert as itself once the wait is over', async () => {
    const { send, close, slack } = setup();
    const lone = alert(7);
    expect(await send('storm', lone)).toEqual({ kind: 'grouped' });
    await close();
    expect(slack.payloads).toEqual([createChatServices().slack.format(lone, config.destinations['storm']!)]);
  });

  it("gives a lone alert closed from a group its Triage link to the origin it arrived on; a digest never carries one alert's", async () => {
    const { send, close, slack, teams, scheduled } = setup();
    await send('storm', alert(1), 'https://api.example.com');
    await send('teams', alert(2), 'https://api.example.com');
    await close();
    expect((slack.payloads[0] as ReceivedMessage).blocks?.at(-1)).toEqual(triageLinkBlock('https://api.example.com/triage/t'));
    expect(JSON.stringify(teams.payloads[0])).toContain('"url":"https://api.example.com/triage/t"');
    // An origin that is not an API's own is never linked to.
    await send('storm', alert(3), 'https://api.example.com/evil?x=');
    await close([scheduled.at(-1)!.job]);
    expect(JSON.stringify(slack.payloads[1])).not.toContain('triage');
    await send('storm', alert(4), 'https://api.example.com');
    await send('storm', alert(5), 'https://api.example.com');
    await close([scheduled.at(-1)!.job]);
    expect(JSON.stringify(slack.payloads[2])).toContain('2 alerts grouped');
    expect(JSON.stringify(slack.payloads[2])).not.toContain('triage');
  });

  it('leaves destinations without grouping as they were: posted at once, nothing scheduled', async () => {
    const { send, scheduled, slack } = setup();
    expect(await send('default', alert(1))).toEqual({ kind: 'delivered' });
    expect(slack.payloads).toHaveLength(1);
    expect(scheduled).toHaveLength(0);
  });

  it('splits a digest too large for one message into several, dropping no alert and naming the most important first', async () => {
    const { send, close, slack } = setup();
    const long = 'x'.repeat(300);
    for (let i = 1; i <= 80; i++) await send('storm', alert(i, { title: `Alert ${i} ${long}`, message: long }));
    await send('storm', alert(81, { title: 'Critical: runaway GPU fleet' }));
    await close();
    expect(slack.payloads.length).toBeGreaterThan(1);
    for (const payload of slack.payloads) expect(slackLimitViolations(payload as ReceivedMessage)).toEqual([]);
    const all = slack.payloads.map(slackText).join('\n');
    for (let i = 1; i <= 80; i++) expect(all).toContain(`Alert ${i} x`);
    expect(slackText(slack.payloads[0])).toContain('part 1 of');
    expect(slackText(slack.payloads[0]).indexOf('runaway GPU')).toBeLessThan(slackText(slack.payloads[0]).indexOf('Alert 1 x'));
  });

  it('when the chat service is down at closing, the digest comes later through the retry queue, once', async () => {
    const { send, close, slack, scheduled, visibility } = setup();
    for (let i = 1; i <= 5; i++) await send('storm', alert(i));
    slack.answer({ kind: 'retryable', reason: 'http_503' });
    const job = scheduled[0]!.job;
    expect((await close([job])).batchItemFailures).toHaveLength(1);
    expect(visibility).toHaveLength(1);
    // Back again: posted now; the same closing job delivered once more posts nothing.
    expect(await close([job])).toEqual({ batchItemFailures: [] });
    expect(await close([job])).toEqual({ batchItemFailures: [] });
    const delivered = slack.payloads.slice(1);
    expect(delivered).toHaveLength(1);
    for (let i = 1; i <= 5; i++) expect(slackText(delivered[0])).toContain(`Spend spike ${i} in EC2`);
  });

  it('resumes a split digest after the part that was posted, when a later part failed', async () => {
    const { send, close, slack, scheduled } = setup();
    const long = 'y'.repeat(300);
    for (let i = 1; i <= 120; i++) await send('storm', alert(i, { title: `Alert ${i} ${long}` }));
    slack.answer({ kind: 'delivered' }, { kind: 'retryable', reason: 'http_429', retryAfterMs: 2_000 });
    const job = scheduled[0]!.job;
    await close([job]);
    const firstTry = slack.payloads.length;
    await close([job]);
    const parts = digestParts(
      Array.from({ length: 120 }, (_, i) => ({ key: String(i), at: i, message: alert(i + 1, { title: `Alert ${i + 1} ${long}` }) })),
      (await KINDS.slack.extras()).digest(config.destinations['storm'] as SlackDestination),
      0,
      (message) => createChatServices().slack.format(message, config.destinations['storm']!),
    );
    // One part posted, one refused with 429, then the rest: every part exactly once.
    expect(slack.payloads.length - 1).toBe(parts.length);
    expect(firstTry).toBe(2);
    expect(slackText(slack.payloads[2])).toContain(`part 2 of ${parts.length}`);
  });

  it("a closing job delivered twice at once posts the digest once; the second copy tries again when the first's lease ends", async () => {
    const { send, close, slack, scheduled, visibility } = setup();
    for (let i = 1; i <= 5; i++) await send('storm', alert(i));
    const job = scheduled[0]!.job;
    const results = await Promise.all([close([job]), close([job])]);
    expect(slack.payloads).toHaveLength(1);
    // One copy closed the group; the other found its lease and waits until it ends.
    expect(results.map((r) => r.batchItemFailures.length).sort()).toEqual([0, 1]);
    expect(visibility).toHaveLength(1);
    expect(visibility[0]).toBeGreaterThan(600);
    expect(await close([job])).toEqual({ batchItemFailures: [] });
    expect(slack.payloads).toHaveLength(1);
  });

  it('takes over from a closer that died once its lease has ended, resuming after the parts it posted', async () => {
    const { send, close, slack, scheduled, visibility, clock } = setup();
    const long = 'z'.repeat(300);
    for (let i = 1; i <= 120; i++) await send('storm', alert(i, { title: `Alert ${i} ${long}` }));
    const job = scheduled[0]!.job;
    // The first part is posted, then the closer dies in the middle of the second.
    slack.answer({ kind: 'delivered' }, new Error('the invocation was cut off'));
    expect((await close([job])).batchItemFailures).toHaveLength(1);
    expect(slack.payloads).toHaveLength(2);
    // Its lease still holds: the next copy posts nothing and waits for it to end.
    expect((await close([job])).batchItemFailures).toHaveLength(1);
    expect(slack.payloads).toHaveLength(2);
    clock.advance(visibility.at(-1)! * 1000);
    expect(await close([job])).toEqual({ batchItemFailures: [] });
    const parts = slack.payloads.length - 1;
    expect(slackText(slack.payloads[2])).toContain(`part 2 of ${parts}`);
    const posts = [slack.payloads[0], ...slack.payloads.slice(2)].map(slackText);
    for (let i = 1; i <= 120; i++) expect(posts.filter((p) => p.includes(`Alert ${i} z`))).toHaveLength(1);
  });

  it('parks each alert of a closing the chat refuses as its own delivery, which a redrive posts', async () => {
    const { send, close, slack, deadLetters, log, metrics } = setup();
    const alerts = [alert(1), alert(2), alert(3)];
    for (const a of alerts) await send('storm', a, 'https://api.example.com');
    slack.answer({ kind: 'refused', reason: 'no_service' });
    expect(await close()).toEqual({ batchItemFailures: [] });
    expect(slack.payloads).toHaveLength(1);
    expect(deadLetters.parked).toHaveLength(3);
    for (const parcel of deadLetters.parked) {
      expect(parcel).toMatchObject({ reason: 'no_service', destination: 'storm' });
      expect(parseDeliveryJob(parcel.body)).toMatchObject({
        destination: 'storm',
        lastReason: 'no_service',
        origin: 'https://api.example.com',
      });
      expect(parcel.body).not.toContain('storm-secret');
    }
    expect(deadLetters.parked.map((p) => parseDeliveryJob(p.body)?.message)).toEqual(expect.arrayContaining(alerts));
    expect(metrics.count('Deliveries', { outcome: 'parked' })).toBe(3);
    expect(log.lines.join('\n')).not.toContain('Spend spike');

    // The webhook is fixed; a redrive puts the parked messages back on the retry queue.
    expect(await close(deadLetters.parked.map((p) => JSON.parse(p.body) as unknown))).toEqual({ batchItemFailures: [] });
    const alone = (a: WebhookMessage) =>
      createChatServices().slack.format(a, config.destinations['storm']!, undefined, { link: 'https://api.example.com/triage/t' });
    expect(slack.payloads.slice(1)).toHaveLength(3);
    expect(slack.payloads.slice(1)).toEqual(expect.arrayContaining(alerts.map(alone)));
  });

  it('records the parked alerts as parked, so that the platform sending one again is posted rather than answered delivered', async () => {
    const { send, close, slack, scheduled } = setup();
    await send('storm', alert(1));
    await send('storm', alert(2));
    slack.answer({ kind: 'refused', reason: 'channel_is_archived' });
    await close();
    expect(await send('storm', alert(1))).toEqual({ kind: 'grouped' });
    await close([scheduled.at(-1)!.job]);
    expect(slack.payloads).toHaveLength(2);
    expect(slackText(slack.payloads[1])).toContain('Spend spike 1 in EC2');
  });

  it('parks only the alerts of the digest parts not yet posted; those posted stay delivered', async () => {
    const { send, close, slack, deadLetters, ledger } = setup();
    const long = 'w'.repeat(300);
    const alerts = Array.from({ length: 120 }, (_, i) => alert(i + 1, { title: `Alert ${i + 1} ${long}` }));
    for (const a of alerts) await send('storm', a);
    slack.answer({ kind: 'delivered' }, { kind: 'refused', reason: 'invalid_blocks' });
    expect(await close()).toEqual({ batchItemFailures: [] });
    const posted = alerts.filter((a) => slackText(slack.payloads[0]).includes(`${a.payload.title!.slice(0, 12)}`));
    const parked = deadLetters.parked.map((p) => parseDeliveryJob(p.body)!.message);
    expect(posted.length).toBeGreaterThan(0);
    expect(posted.length + parked.length).toBe(120);
    expect(parked.filter((m) => posted.includes(m))).toEqual([]);
    const state = (m: WebhookMessage) => ledger.entries.get(deliveryRecordId(m, 'storm'))?.state;
    expect(posted.map(state).every((s) => s === 'delivered')).toBe(true);
    expect(parked.map(state).every((s) => s === 'parked')).toBe(true);
  });

  it('keeps the group and tries again when the dead-letter queue cannot take the alerts', async () => {
    const { send, close, slack, deadLetters, scheduled, store } = setup();
    await send('storm', alert(1));
    await send('storm', alert(2));
    const job = scheduled[0]!.job;
    const park = deadLetters.park;
    deadLetters.park = async () => Promise.reject(new Error('dead-letter queue down'));
    slack.answer({ kind: 'refused', reason: 'no_service' });
    expect((await close([job])).batchItemFailures).toHaveLength(1);
    expect(store.groups.get('storm')?.entries).toHaveLength(2);
    deadLetters.park = park;
    slack.answer({ kind: 'refused', reason: 'no_service' });
    expect(await close([job])).toEqual({ batchItemFailures: [] });
    expect(deadLetters.parked).toHaveLength(2);
    expect(store.groups.get('storm')?.state).toBe('flushed');
  });

  it('names a re-sent alert once inside a window, and a re-send after the closing is a duplicate', async () => {
    const { send, close, slack } = setup();
    await send('storm', alert(1));
    expect(await send('storm', alert(1))).toEqual({ kind: 'duplicate', state: 'queued' });
    await send('storm', alert(2));
    await close();
    const blocks = JSON.stringify((slack.payloads[0] as ReceivedMessage).blocks);
    expect(blocks.split('Spend spike 1 in EC2').length - 1).toBe(1);
    expect(await send('storm', alert(1))).toEqual({ kind: 'duplicate', state: 'delivered' });
    expect(slack.payloads).toHaveLength(1);
  });

  it('bounds a group by bytes: of 40 alerts of 20 KB, those that do not fit are posted on their own, and every one once', async () => {
    const { send, close, slack, store } = setup();
    const results = [];
    for (let i = 1; i <= 40; i++) results.push(await send('storm', alert(i, { message: `${i} `.repeat(10_000) })));
    const grouped = results.filter((r) => r.kind === 'grouped').length;
    expect(grouped).toBeGreaterThan(1);
    expect(results.filter((r) => r.kind === 'delivered')).toHaveLength(40 - grouped);
    // What the group's table item would hold stays within the bound, far below DynamoDB's item limit.
    const held = store.groups.get('storm')!.entries;
    expect(held).toHaveLength(grouped);
    expect(held.reduce((sum, e) => sum + entryBytes(e), 0)).toBeLessThanOrEqual(MAX_GROUP_BYTES);
    await close();
    const posts = slack.payloads.map(slackText);
    for (let i = 1; i <= 40; i++) expect(posts.filter((p) => p.includes(`Spend spike ${i} in EC2`))).toHaveLength(1);
  });

  it('posts an alert too large for any group on its own', async () => {
    const { send, scheduled, slack } = setup();
    expect(await send('storm', alert(1, { message: 'x'.repeat(MAX_GROUP_BYTES) }))).toEqual({ kind: 'delivered' });
    expect(scheduled).toHaveLength(0);
    expect(slack.payloads).toHaveLength(1);
  });

  it('the group itself names an alert once even without the ledger', async () => {
    const { join, target, store } = setup();
    await join({ deliveryId: 'a', target: target('storm'), message: alert(3) }, budgetOf(10_000));
    await join({ deliveryId: 'b', target: target('storm'), message: alert(3) }, budgetOf(10_000));
    expect(store.groups.get('storm')?.entries).toHaveLength(1);
  });

  it('concurrent relays joining one group: one group, every alert once; the losing opener closes nothing', async () => {
    const { grouping, schedule, scheduled, close, slack, target } = setup();
    const failAlone = async () => {
      throw new Error('no alert may go alone here');
    };
    const relays = [joinGroup({ ...grouping, schedule }, failAlone), joinGroup({ ...grouping, schedule }, failAlone)];
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        relays[i % 2]!({ deliveryId: `c${i}`, target: target('storm'), message: alert(i + 1) }, budgetOf(10_000)),
      ),
    );
    expect(results.every((r) => r.kind === 'grouped')).toBe(true);
    await close();
    expect(slack.payloads).toHaveLength(1);
    for (let i = 1; i <= 30; i++) expect(slackText(slack.payloads[0])).toContain(`Spend spike ${i} in EC2`);
    expect(scheduled.length).toBeGreaterThanOrEqual(1);
  });

  it('posts Teams and Google Chat digests within their limits, naming every alert', async () => {
    const { send, close, teams, chat } = setup();
    for (let i = 1; i <= 60; i++) {
      await send('teams', alert(i));
      await send('chat', alert(i));
    }
    await close();
    expect(teams.payloads.length).toBeGreaterThan(0);
    expect(chat.payloads.length).toBeGreaterThan(0);
    for (const p of teams.payloads) expect(teamsViolations(p)).toEqual([]);
    for (const p of chat.payloads) expect(googleChatViolations(p)).toEqual([]);
    const teamsAll = teams.payloads.flatMap(teamsTexts).join('\n');
    const chatAll = chat.payloads.flatMap(googleChatCardTexts).join('\n');
    for (let i = 1; i <= 60; i++) {
      expect(teamsAll).toContain(`Spend spike ${i} in EC2`);
      expect(chatAll).toContain(`Spend spike ${i} in EC2`);
    }
  });

  it('fills each Teams and Google Chat digest part as far as the message it posts allows, and cuts no line', async () => {
    // Lone surrogates take six bytes each in JSON: the service's byte limit, not its characters,
    // decides where a part ends, so a part measured on anything but the message as posted
    // overflows and has its last lines cut. Storms of several line lengths (each title within a
    // digest line's 60 characters) put the ends anywhere in a line.
    for (const length of [49, 51, 53, 55]) {
      const { send, close, teams, chat } = setup();
      const title = (i: number) => `A${i} ${'\uDC00'.repeat(length)}`;
      for (let i = 1; i <= 200; i++) {
        const message = webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title: title(i) } });
        await send('teams', message);
        await send('chat', message);
      }
      await close();
      const parts = {
        teams: teams.payloads.map((p) => ({ texts: teamsTexts(p), violations: teamsViolations(p) })),
        googlechat: chat.payloads.map((p) => ({ texts: googleChatCardTexts(p), violations: googleChatViolations(p) })),
      };
      for (const [service, posted] of Object.entries(parts)) {
        const which = `${service}, lines of ${length} lone surrogates`;
        expect(posted.length, which).toBeGreaterThan(1);
        for (const { texts, violations } of posted) {
          expect(violations, which).toEqual([]);
          expect(texts.join('\n'), which).not.toContain('…');
        }
        const shown = posted.flatMap((p) => p.texts).join('\n');
        for (let i = 1; i <= 200; i++) expect(shown, `${which}: alert ${i} in full`).toContain(title(i));
      }
    }
  });

  it("names all of 200 alerts full of card functions, lone surrogates, markup and escapes, each part within every service's limits", async () => {
    const { send, close, slack, app, teams, chat } = setup();
    // What each service's escaping and JSON encoding grows: `{{` (Teams breaks each pair), lone
    // surrogates (six bytes each in JSON), `&` and `<` (entities), markup and links (look-alikes).
    const lone = (n: number) => '\uDC00'.repeat(n);
    const nasty = (i: number) => {
      if (i <= 90) {
        const title = `Alert ${i} ${lone(60)}`;
        return webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title } });
      }
      if (i <= 180)
        return alert(i, {
          title: `Alert ${i} ${'{'.repeat(60)}`,
          message: `${'{'.repeat(40)} ${'x'.repeat(300)}`,
          account: '{'.repeat(24),
        });
      return alert(i, {
        title: `Alert ${i} *b* _i_ ~s~ \`c\` <!here> & example.com`,
        message: `&<>*_ ${'y'.repeat(300)}`,
        account: '&<'.repeat(12),
      });
    };
    for (let i = 1; i <= 200; i++) for (const name of ['storm', 'app', 'teams', 'chat']) await send(name, nasty(i));
    await close();
    const appMessages = (app.payloads as SlackAppPayload[]).map((p) => formatSlackMessage(p.message, p.mention) as ReceivedMessage);
    const received: Record<string, { texts: string[]; violations: string[] }> = {
      slack: {
        texts: slack.payloads.map(slackText),
        violations: slack.payloads.flatMap((p) => slackLimitViolations(p as ReceivedMessage)),
      },
      slackApp: { texts: appMessages.map(slackText), violations: appMessages.flatMap((m) => slackLimitViolations(m)) },
      teams: { texts: teams.payloads.map((p) => teamsTexts(p).join('\n')), violations: teams.payloads.flatMap((p) => teamsViolations(p)) },
      googlechat: {
        texts: chat.payloads.map((p) => googleChatCardTexts(p).join('\n')),
        violations: chat.payloads.flatMap((p) => googleChatViolations(p)),
      },
    };
    const ids = Array.from({ length: 200 }, (_, n) => n + 1);
    const outcome = (check: (texts: string[], violations: string[]) => unknown) =>
      Object.fromEntries(Object.entries(received).map(([service, { texts, violations }]) => [service, check(texts, violations)]));
    expect(outcome((texts) => texts.length > 1)).toEqual({ slack: true, slackApp: true, teams: true, googlechat: true });
    expect(outcome((_, violations) => violations)).toEqual({ slack: [], slackApp: [], teams: [], googlechat: [] });
    const unnamed = outcome((texts) => ids.filter((n) => !texts.some((t) => t.includes(`Alert ${n} `))));
    expect(unnamed).toEqual({ slack: [], slackApp: [], teams: [], googlechat: [] });
  });

  it("threads a Slack app anomaly first seen in a digest under the digest's message", async () => {
    const { send, close, app, ledger, scheduled } = setup();
    await send('app', alert(1));
    await send('app', alert(2));
    await close();
    expect(app.payloads).toHaveLength(1);
    const digestRef = { channel: 'C0123ABCD', ts: '1700000000.000001' };
    expect(ledger.anomalies.get(anomalyRecordId(alert(1), 'app'))?.opening).toEqual(digestRef);
    // A later figure for anomaly 1 is its follow-up, posted (alone in its group) into the digest's thread.
    await send('app', alert(1, { message: 'Spend up further' }));
    await close([scheduled.at(-1)!.job]);
    expect(app.payloads[1]).toMatchObject({ anomaly: { kind: 'follow_up', updates: 1, opening: digestRef } });
  });

  it('never holds an alert back: a failing table or queue, or a closing group, posts it on its own', async () => {
    const { grouping, schedule, target, slack, store, log } = setup();
    const broken = { ...store, join: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) };
    const alone = joinGroup({ ...grouping, store: broken, schedule }, (a, b) => createDeliveryFor(slack.service)(a, b));
    expect(await alone({ deliveryId: 'x', target: target('storm'), message: alert(1) }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    expect(log.lines.join('\n')).toContain('grouping unavailable');
    const noQueue = joinGroup(
      { ...grouping, schedule: async () => Promise.reject(new Error('queue down')) },
      createDeliveryFor(slack.service),
    );
    expect(await noQueue({ deliveryId: 'y', target: target('storm'), message: alert(2) }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    await joinGroup({ ...grouping, schedule }, createDeliveryFor(slack.service))(
      { deliveryId: 'z', target: target('storm'), message: alert(3) },
      budgetOf(10_000),
    );
    const groupId = store.groups.get('storm')!.groupId;
    await store.take('storm', groupId, { token: 'closer', holdSeconds: 60 });
    const late = joinGroup({ ...grouping, schedule }, createDeliveryFor(slack.service));
    expect(await late({ deliveryId: 'w', target: target('storm'), message: alert(4) }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    expect(slack.payloads).toHaveLength(3);
  });

  it('keeps sender text inert in a Slack digest', async () => {
    const { send, close, slack } = setup();
    await send('storm', alert(1, { title: '<!channel> pay <https://evil.example|here>', message: '*bold* <@U123>' }));
    await send('storm', alert(2));
    await close();
    expect(liveSpecialForms(slack.payloads[0] as ReceivedMessage)).toEqual([]);
  });

  it('shows sender markup in a Slack webhook digest as plain text, as in a single alert: no emphasis, code, link or mention', async () => {
    const { send, close, slack } = setup();
    await send('storm', alert(1, { title: '*bold* _it_ ~strike~ `code`', message: 'see example.com <!channel> @here' }));
    await send('storm', alert(2));
    await close();
    const digest = slack.payloads[0] as ReceivedMessage;
    expect(slackText(digest)).toContain('2 alerts grouped');
    expect(liveSpecialForms(digest)).toEqual([]);
    expect(slackSenderTexts(digest).flatMap(senderMarkup)).toEqual([]);
    // Still readable: look-alikes, not deletions.
    expect(slackSenderTexts(digest).join('\n')).toContain('＊bold＊ ＿it＿ ～strike～ ｀code｀');
  });

  it('keeps secrets out of the closing job and the group', async () => {
    const { send, scheduled, store } = setup();
    await send('storm', alert(1));
    await send('app', alert(1));
    const stored = JSON.stringify([...store.groups.values()]) + JSON.stringify(scheduled);
    expect(stored).not.toContain('storm-secret');
    expect(stored).not.toContain('xoxb-grouping-test');
    expect(parseGroupCloseJob(JSON.stringify(scheduled[0]!.job))).toEqual(scheduled[0]!.job);
    expect(parseGroupCloseJob(JSON.stringify({ ...scheduled[0]!.job, url: SLACK_URL }))).toBeUndefined();
  });
});

describe('grouping decisions at their edges', () => {
  const at = (name: string) => ({ deliveryId: name, message: alert(1) });

  it('gives up opening a group after three lost races and posts the alert on its own', async () => {
    const { grouping, scheduled, schedule, target, slack } = setup();
    let opens = 0;
    // Every open loses to another relay's, whose group is gone again by the next join.
    const racing = {
      ...grouping.store,
      join: async () => ({ kind: 'none' as const }),
      open: async () => ++opens > 10 && Promise.reject(new Error('runaway')),
    };
    const join = joinGroup({ ...grouping, store: racing, schedule }, createDeliveryFor(slack.service));
    expect(await join({ ...at('a'), target: target('storm') }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    expect(opens).toBe(3);
    expect(scheduled).toHaveLength(3);
    expect(slack.payloads).toHaveLength(1);
  });

  it('posts an alert on its own at once when its group is closing, scheduling no closing for it', async () => {
    const { grouping, scheduled, schedule, target, slack, store } = setup();
    const join = joinGroup({ ...grouping, schedule }, createDeliveryFor(slack.service));
    await join({ deliveryId: 'a', target: target('storm'), message: alert(1) }, budgetOf(10_000));
    await store.take('storm', store.groups.get('storm')!.groupId, { token: 'closer', holdSeconds: 60 });
    expect(await join({ deliveryId: 'b', target: target('storm'), message: alert(2) }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    expect(scheduled).toHaveLength(1);
  });

  it('answers a re-sent alert grouped without the ledger, posting nothing and scheduling no second closing', async () => {
    const { grouping, scheduled, schedule, target, slack } = setup();
    const join = joinGroup({ ...grouping, schedule }, createDeliveryFor(slack.service));
    await join({ deliveryId: 'a', target: target('storm'), message: alert(3) }, budgetOf(10_000));
    expect(await join({ deliveryId: 'b', target: target('storm'), message: alert(3) }, budgetOf(10_000))).toEqual({ kind: 'grouped' });
    expect(scheduled).toHaveLength(1);
    expect(slack.payloads).toHaveLength(0);
  });

  it('counts a lone alert closed from a group as a delivery, not a digest, and titles a one-part digest without parts', async () => {
    const { send, close, scheduled, slack, metrics } = setup();
    await send('storm', alert(1));
    await close();
    expect(metrics.count('DigestsPosted')).toBe(0);
    await send('storm', alert(2));
    await send('storm', alert(3));
    await close([scheduled.at(-1)!.job]);
    expect(metrics.count('DigestsPosted')).toBe(1);
    expect(slackText(slack.payloads[1])).toContain('2 alerts grouped');
    expect(slackText(slack.payloads[1])).not.toContain('part 1 of');
  });

  it('stops a split digest between parts when the next would not fit the invocation, and the next try resumes', async () => {
    const { send, scheduled, slack, store, delivery, log, clock, target } = setup();
    const long = 'v'.repeat(300);
    for (let i = 1; i <= 120; i++) await send('storm', alert(i, { title: `Alert ${i} ${long}` }));
    const deps = { store, delivery, logger: log.logger, now: clock.now, sleep: clock.sleep, reserveMs: 2_000, postTimeoutMs: 5_000 };
    // Exactly a millisecond short of a pause, a post and what records it.
    const needed = SLACK_MIN_INTERVAL_MS + deps.postTimeoutMs + deps.reserveMs;
    const short = invocationBudget({ getRemainingTimeInMillis: () => needed - 1 }, 0);
    const job = scheduled[0]!.job;
    expect(await closeGroup(job, target('storm'), deps, short)).toEqual({
      kind: 'retry',
      reason: 'invocation_ending',
      delaySeconds: 1,
    });
    expect(slack.payloads).toHaveLength(1);
    // Released: the next try takes the group at once and posts the rest, then says how many it posted.
    const enough = invocationBudget({ getRemainingTimeInMillis: () => needed }, 0);
    const outcome = await closeGroup(job, target('storm'), deps, enough);
    expect(outcome).toEqual({ kind: 'closed', posts: slack.payloads.length - 1 });
    expect(log.records().find((r) => r['message'] === 'group closed')).toMatchObject({ posts: slack.payloads.length - 1 });
  });

  it('keeps the whole group when the dead-letter queue takes only some of its alerts', async () => {
    const { send, close, slack, deadLetters, scheduled, store } = setup();
    for (let i = 1; i <= 3; i++) await send('storm', alert(i));
    const park = deadLetters.park;
    let calls = 0;
    deadLetters.park = async (...args) => (++calls === 2 ? Promise.reject(new Error('dead-letter queue throttled')) : park(...args));
    slack.answer({ kind: 'refused', reason: 'no_service' });
    expect((await close([scheduled[0]!.job])).batchItemFailures).toHaveLength(1);
    expect(store.groups.get('storm')).toMatchObject({ state: 'closing' });
    expect(store.groups.get('storm')!.entries).toHaveLength(3);
  });
});

describe("the in-memory group store keeps the table's rules", () => {
  const entry = (key: string, at = 1) => ({ key, at, message: alert(Number(key.replace(/\D/g, '')) || 1) });

  it('holds at most MAX_GROUP_ALERTS alerts; the next is busy', async () => {
    const store = inMemoryGroupStore(() => 0);
    await store.open('d', 'g', entry('k0'), 60);
    for (let i = 1; i < MAX_GROUP_ALERTS; i++) expect(await store.join('d', entry(`k${i}`))).toEqual({ kind: 'joined' });
    expect(await store.join('d', entry('k-last'))).toEqual({ kind: 'busy' });
    expect(await store.join('d', entry('k7'))).toEqual({ kind: 'duplicate' });
  });

  it('takes an alert that fills the group to exactly MAX_GROUP_BYTES, and none past it', async () => {
    const store = inMemoryGroupStore(() => 0);
    const sized = (key: string, n: number) => ({ key, at: 1, message: alert(1, { message: 'x'.repeat(n) }) });
    await store.open('d', 'g', sized('k0', 1_000), 60);
    const room = MAX_GROUP_BYTES - store.groups.get('d')!.bytes;
    const fits = sized('k1', room - entryBytes(sized('k1', 0)));
    expect(entryBytes(fits)).toBe(room);
    expect(await store.join('d', { ...fits, key: 'k2', message: alert(1, { message: `${fits.message.payload.message}x` }) })).toEqual({
      kind: 'busy',
    });
    expect(await store.join('d', fits)).toEqual({ kind: 'joined' });
  });

  it('hands the entries over in the order they joined, a tie by key, the same at every take', async () => {
    const store = inMemoryGroupStore(() => 0);
    await store.open('d', 'g', entry('k2', 5), 60);
    await store.join('d', entry('k3', 5));
    await store.join('d', entry('k1', 5));
    await store.join('d', entry('k0', 9));
    await store.join('d', entry('k9', 2));
    const taken = await store.take('d', 'g', { token: 't', holdSeconds: 60 });
    expect(taken.kind === 'taken' && taken.entries.map((e) => e.key)).toEqual(['k9', 'k1', 'k2', 'k3', 'k0']);
    // The group itself keeps the order they arrived in.
    expect(store.groups.get('d')!.entries.map((e) => e.key)).toEqual(['k2', 'k3', 'k1', 'k0', 'k9']);
  });

  it('closes only the group of its id, and lets only the lease holder record, flush or release it', async () => {
    let now = 0;
    const store = inMemoryGroupStore(() => now);
    await store.open('d', 'g', entry('k1'), 60);
    expect(await store.take('d', 'other', { token: 't', holdSeconds: 60 })).toEqual({ kind: 'gone' });
    expect(await store.take('elsewhere', 'g', { token: 't', holdSeconds: 60 })).toEqual({ kind: 'gone' });
    expect(await store.posted('elsewhere', 'g', 't', 1)).toBe(false);
    expect(store.groups.get('d')!.state).toBe('open');
    await store.take('d', 'g', { token: 't', holdSeconds: 60 });
    now = 20_000;
    expect(await store.take('d', 'g', { token: 'u', holdSeconds: 60 })).toEqual({ kind: 'leased', retryAfterSeconds: 40 });
    expect(await store.posted('d', 'g', 'u', 1)).toBe(false);
    expect(await store.flushed('d', 'g', 'u')).toBe(false);
    await store.release('d', 'g', 'u');
    expect(store.groups.get('d')).toMatchObject({ state: 'closing', postedParts: 0, lease: { token: 't' } });
    expect(store.groups.get('d')!.entries).toHaveLength(1);
    expect(await store.posted('d', 'g', 't', 1)).toBe(true);
    expect(store.groups.get('d')!.postedParts).toBe(1);
    await store.release('d', 'g', 't');
    expect(store.groups.get('d')!.lease).toBeUndefined();
    expect(await store.posted('d', 'g', 't', 2)).toBe(false);
    await store.take('d', 'g', { token: 'u', holdSeconds: 60 });
    expect(await store.flushed('d', 'g', 'u')).toBe(true);
    expect(store.groups.get('d')).toMatchObject({ state: 'flushed', entries: [], bytes: 0 });
  });
});
