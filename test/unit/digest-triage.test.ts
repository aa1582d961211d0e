// A digest can be triaged (the contract's Grouping): where a destination offers triage, each
// digest links to a page listing every anomaly it names, each with its own actions, and an action
// there cancels that anomaly's escalation like any other. An anomaly escalates only from where
// someone could have triaged it. In process, with the real formatters, signer, closer, triage
// handler and escalation processing, an in-memory table shared by all of them, and a clock the
// tests move; test/integration/group-triage.test.ts runs the same through the built bundles.

import { createHmac } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ChatService, PostOutcome } from '../../lib/chat/service.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { deliverOnce, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery, type FirstAttempt, targetOf } from '../../lib/delivery/deliver.js';
import type { EscalationJob } from '../../lib/escalation/job.js';
import { processEscalation } from '../../lib/escalation/process.js';
import type { EscalationQueue } from '../../lib/escalation/queue.js';
import { escalationWatcher } from '../../lib/escalation/watch.js';
import { DIGEST_LINK_MAX, digestLinkLength, digestTokenBody, readDigestTokenBody, unpackId } from '../../lib/format/digest-token.js';
import { closeGroup } from '../../lib/group/close.js';
import type { GroupCloseJob } from '../../lib/group/job.js';
import { joinGroup } from '../../lib/group/join.js';
import { inMemoryGroupStore } from '../../lib/group/store.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import type { CostCenterRef } from '../../lib/message/cost-center.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { googleChatMessage } from '../../lib/notify/googlechat/lazy-googlechat-post.js';
import { createChatServices, destinationType } from '../../lib/notify/kinds.js';
import type { SlackAppPayload } from '../../lib/notify/slack/app-payload.js';
import { formatSlackMessage, triageLinkBlock } from '../../lib/notify/slack/format.js';
import { teamsMessage } from '../../lib/notify/teams/lazy-teams-post.js';
import { createTriageHandler, type TriagePorts } from '../../lib/triage/handle.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { triageControls } from '../../lib/triage-link/controls.js';
import { signDigestToken } from '../../lib/triage-link/sign.js';
import { verifyTriageToken } from '../../lib/triage-link/token.js';
import { budgetOf } from '../helpers/budget.js';
import { googleChatViolations, teamsViolations } from '../helpers/chat-limits.js';
import { capturedLogger, manualClock } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type ReceivedMessage, slackLimitViolations } from '../helpers/slack-limits.js';

const KEY = 'digest-triage-test-key-0123456789abcdefghijklmnopqrstuvwxyz';
const ORIGIN = 'https://api.example.com';
const WAIT_MINUTES = 30;
const escalate = { afterMinutes: WAIT_MINUTES, to: 'oncall' };
const group = { waitSeconds: 60 };

const config = relayConfigSchema.parse({
  auth: { method: 'none' },
  slack: { botToken: 'xoxb-digest-test', signingSecret: 'digest-signing-secret' },
  destinations: {
    default: { url: 'https://hooks.slack.com/services/T0/B9/plain' },
    storm: { url: 'https://hooks.slack.com/services/T0/B0/storm-secret', group, escalate },
    teams: { url: 'https://prod-1.westus.logic.azure.com/workflows/x/triggers/manual/paths/invoke?sig=S', group, escalate },
    chat: { url: 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=K&token=T', group, escalate },
    app: { channel: 'C0123ABCD', group, escalate },
    oncall: { type: 'teams', url: 'https://prod-1.westus.logic.azure.com/workflows/oncall/invoke?sig=ONCALL' },
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
 * The real formatters; each post recorded and answered delivered (a Slack app's with where its message is). `sent`: what the service's
 * poster sends for a payload, where it makes the message itself (Teams, Google Chat).
 */
function recording(real: ChatService, app = false, sent: (payload: never) => unknown = (payload) => payload) {
  const payloads: unknown[] = [];
  const service: ChatService = {
    ...real,
    post: async (_address, payload): Promise<PostOutcome> => {
      payloads.push(sent(payload as never));
      return app ? { kind: 'delivered', opened: { channel: 'C0123ABCD', ts: `1700000000.${payloads.length}` } } : { kind: 'delivered' };
    },
  };
  return { service, payloads };
}

/** Each triage link a payload carries (one per message, a digest's or an alert's). */
const linksIn = (payload: unknown): string[] =>
  JSON.stringify(payload).match(/https:\/\/api\.example\.com\/triage\/[A-Za-z0-9_.-]+/g) ?? [];

/**
 * The relay's first attempt (dedup, grouping, the escalation's wait), the closer, the triage
 * page and delivery-retry's escalation processing, over one table, one clock and one key.
 * `app`: the Slack app settings (`signingSecret` switches its buttons on); `key`: whether the stack has a link key.
 */
function setup(options: { app?: { botToken: string; signingSecret?: string }; key?: boolean } = {}) {
  const app = options.app ?? config.slack;
  const clock = manualClock();
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const real = createChatServices();
  const slack = recording(real.slack);
  const teams = recording(real.teams, false, teamsMessage);
  const chat = recording(real.googlechat, false, googleChatMessage);
  const slackApp = recording(real.slackApp, true);
  const services = { ...real, slack: slack.service, teams: teams.service, googlechat: chat.service, slackApp: slackApp.service };
  const triageStore = memoryTriageStore(clock.now);
  // The anomaly's item holds its triage state beside its escalation, as in the table.
  const ledger = memoryLedger(clock.now, (id) => triageStore.records.get(id)?.triage);
  const delivery = createDelivery({
    services,
    postTimeoutMs: 5_000,
    logger: log.logger,
    metrics,
    now: clock.now,
    sleep: clock.sleep,
    triage: triageControls(options.key === false ? { now: clock.now } : { key: KEY, now: clock.now }),
  });
  const waiting: Array<{ job: EscalationJob; delaySeconds: number }> = [];
  const queue: EscalationQueue = {
    async schedule(job, delaySeconds) {
      waiting.push({ job: structuredClone(job), delaySeconds });
    },
  };
  const held = escalationWatcher({ ledger, queue, logger: log.logger, metrics, now: clock.now, typeOf: destinationType });
  const groups = inMemoryGroupStore(clock.now);
  const closings: GroupCloseJob[] = [];
  const join = joinGroup(
    { store: groups, logger: log.logger, metrics, now: clock.now, schedule: async (job) => void closings.push(job) },
    delivery.first,
  );
  const first: FirstAttempt = deliverOnce({
    ledger,
    delivery: { ...delivery, first: join },
    logger: log.logger,
    metrics,
    now: clock.now,
    held,
  });
  const target = (name: string) => targetOf(name, config.destinations[name]!, app);
  let requests = 0;
  /** The relay's first attempt for an alert that arrived on `origin` (`null`: on none the link could use). */
  const send = (name: string, message: WebhookMessage, origin: string | null = ORIGIN, costCenters?: CostCenterRef[]) =>
    first({ deliveryId: `r${++requests}`, target: target(name), message, origin: origin ?? undefined, costCenters }, budgetOf(10_000));
  /** delivery-retry closing every group scheduled so far. */
  const close = async () => {
    for (const job of closings.splice(0)) {
      const outcome = await closeGroup(
        job,
        target(job.destination),
        {
          store: groups,
          delivery,
          logger: log.logger,
          metrics,
          ledger: retryLedger({ ledger, logger: log.logger, metrics }),
          held,
          now: clock.now,
          sleep: clock.sleep,
          reserveMs: 0,
          postTimeoutMs: 5_000,
        },
        budgetOf(600_000),
      );
      expect(outcome.kind).toBe('closed');
    }
  };
  const notes: Array<{ destination: string; anomalyId: string; line: string; thread?: string | undefined }> = [];
  const ports: TriagePorts = {
    tokenKey: async () => KEY,
    interactionsAt: () => undefined,
    store: triageStore,
    postAsApp: async () => undefined,
    postFollowUp: async (token, note) => void notes.push({ destination: token.d, anomalyId: token.a, line: note.line, thread: token.k }),
    destinationTypeOf: async (name) => (config.destinations[name] ? destinationType(config.destinations[name]) : undefined),
    metrics,
    logger: log.logger,
    now: clock.now,
  };
  const handle = createTriageHandler(ports);
  /** A GET or POST of the page a link opens, as API Gateway hands it to the triage function. */
  const page = (link: string, form?: string) =>
    handle(
      {
        method: form === undefined ? 'GET' : 'POST',
        path: link.slice(ORIGIN.length),
        headers: form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' },
        body: form ?? '',
        origin: ORIGIN,
      },
      budgetOf(10_000),
    );
  const oncall: string[] = [];
  const escalationPorts = {
    config: memoryConfigStore({ config }),
    ledger,
    // The destination it escalates to, recorded: what was posted there, by title.
    first: (async (escalated) => {
      oncall.push(escalated.message.payload.title ?? '');
      return { kind: 'delivered' };
    }) as FirstAttempt,
    queue,
    logger: log.logger,
    metrics,
    now: clock.now,
  };
  /** Moves the clock past the wait and processes every job waiting, twice over as a queue may deliver it. */
  const escalateDue = async () => {
    clock.advance(WAIT_MINUTES * 60_000 + 1_000);
    const due = waiting.splice(0).map((w) => w.job);
    for (const job of [...due, ...due]) expect(await processEscalation(job, escalationPorts, budgetOf(60_000), 'm')).toBe('done');
    return oncall;
  };
  return { send, close, page, notes, slack, teams, chat, slackApp, waiting, escalateDue, oncall, log, metrics, triageStore, ledger, clock };
}

describe('a digest can be triaged: its link opens a page listing each anomaly it names', () => {
  it('an anomaly acted on from a Slack digest does not escalate; the two nobody touched escalate once each', async () => {
    const s = setup();
    for (const n of [1, 2, 3]) expect(await s.send('storm', alert(n))).toEqual({ kind: 'grouped' });
    await s.close();
    expect(s.slack.payloads).toHaveLength(1);
    const digest = s.slack.payloads[0] as ReceivedMessage;
    const [link] = linksIn(digest);
    expect(digest.blocks?.at(-1)).toEqual(triageLinkBlock(link!));
    expect(slackLimitViolations(digest)).toEqual([]);

    const shown = await s.page(link!);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-security-policy']).toContain("default-src 'none'");
    for (const n of [1, 2, 3]) expect(shown.body).toContain(`Spend spike ${n} in EC2`);
    expect(shown.body).toMatch(/<dd id="destination">storm<\/dd>/);
    // Each anomaly has its own actions, and the open ones one set for all of them.
    expect(shown.body.match(/value="acknowledge:\d"/g)).toHaveLength(3);
    expect(shown.body).toContain('value="acknowledge:all"');

    // The digest names the most important first; the page in the same order: place 0 is alert 1 here.
    const acted = await s.page(link!, 'action=acknowledge%3A1&name=Dana');
    expect(acted.statusCode).toBe(200);
    expect(acted.body).toContain('Acknowledged by Dana');
    expect(s.triageStore.records.get(anomalyRecordId(alert(2), 'storm'))?.triage.state).toBe('acknowledged');
    expect(s.notes).toEqual([
      {
        destination: 'storm',
        anomalyId: anomalyRecordId(alert(2), 'storm'),
        line: expect.stringMatching(/^Acknowledged by Dana at .*: Spend spike 2 in EC2 · /),
      },
    ]);
    expect(s.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'slack' })).toBe(1);

    expect(await s.escalateDue()).toEqual(['Spend spike 1 in EC2', 'Spend spike 3 in EC2']);
  });

  it('"Acknowledge all open" acts on every anomaly still open and leaves what someone decided; none escalates', async () => {
    const s = setup();
    for (const n of [1, 2, 3]) await s.send('teams', alert(n));
    await s.close();
    const [link] = linksIn(s.teams.payloads[0]);
    expect((await s.page(link!, 'action=expected%3A2&name=Ana')).statusCode).toBe(200);
    const all = await s.page(link!, 'action=acknowledge%3Aall&name=Dana');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('No anomaly of this digest is open.');
    const state = (n: number) => s.triageStore.records.get(anomalyRecordId(alert(n), 'teams'))?.triage.state;
    expect([state(1), state(2), state(3)]).toEqual(['acknowledged', 'acknowledged', 'expected']);
    expect(s.notes.at(-1)?.line).toMatch(/^Acknowledged by Dana at .*: 2 anomalies of a digest$/);
    expect(s.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'teams' })).toBe(2);
    // Once more changes nothing and posts nothing.
    const again = await s.page(link!, 'action=acknowledge%3Aall&name=Dana');
    expect(again.body).toContain('Nothing changed');
    expect(s.notes).toHaveLength(2);
    expect(await s.escalateDue()).toEqual([]);
  });

  it('refuses a place the digest does not have, reopening all, or a tampered link, and changes nothing', async () => {
    const s = setup();
    for (const n of [1, 2]) await s.send('chat', alert(n));
    await s.close();
    const [link] = linksIn(s.chat.payloads[0]);
    for (const form of [
      'action=acknowledge%3A2',
      'action=reopen%3Aall',
      'action=acknowledge',
      'action=shout%3A0',
      'action=acknowledge%3A-1',
    ]) {
      expect((await s.page(link!, form)).statusCode, form).toBe(400);
    }
    const [body, mac] = link!.split('/triage/')[1]!.split('.');
    // Flip a character well inside the body: the last ones may carry only padding bits.
    const flipped = body![4] === 'A' ? 'B' : 'A';
    const tampered = `${ORIGIN}/triage/${body!.slice(0, 4)}${flipped}${body!.slice(5)}.${mac}`;
    expect((await s.page(tampered)).statusCode).toBe(403);
    expect(s.triageStore.records.size).toBe(0);
    expect(s.notes).toEqual([]);
  });

  it('shows sender text and the destination name as text, never as markup', async () => {
    const s = setup();
    await s.send('storm', alert(1, { title: '<script>alert(1)</script> & "x"', account: '<b>acct</b>' }));
    await s.send('storm', alert(2));
    await s.close();
    const [link] = linksIn(s.slack.payloads[0]);
    const html = (await s.page(link!)).body;
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<b>acct');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;');
  });

  it("every chat kind's digest of 200 alerts carries its page's link within DIGEST_LINK_MAX and its limits; together the pages list every anomaly", async () => {
    const s = setup();
    const nasty = (i: number) =>
      alert(i, {
        title: `Alert ${i} ${'{&<'.repeat(15)} ${'\u00e9'.repeat(20)}`,
        message: `${'x'.repeat(200)}`,
        account: `${'&<'.repeat(6)}${i}`,
      });
    for (let i = 1; i <= 200; i++) for (const name of ['storm', 'teams', 'chat', 'app']) await s.send(name, nasty(i));
    await s.close();
    const received = { storm: s.slack.payloads, teams: s.teams.payloads, chat: s.chat.payloads, app: s.slackApp.payloads };
    const violations = {
      storm: s.slack.payloads.flatMap((p) => slackLimitViolations(p as ReceivedMessage)),
      teams: s.teams.payloads.flatMap((p) => teamsViolations(p)),
      chat: s.chat.payloads.flatMap((p) => googleChatViolations(p)),
      app: (s.slackApp.payloads as SlackAppPayload[]).flatMap((p) =>
        slackLimitViolations(
          formatSlackMessage(p.message, p.mention, undefined, [triageLinkBlock((p.triage as { link: string }).link)]) as ReceivedMessage,
        ),
      ),
    };
    expect(violations).toEqual({ storm: [], teams: [], chat: [], app: [] });
    for (const [name, payloads] of Object.entries(received)) {
      expect(payloads.length, name).toBeGreaterThan(1);
      const listed = new Set<string>();
      for (const payload of payloads) {
        const links = linksIn(payload);
        expect(links, name).toHaveLength(1);
        expect(links[0]!.length, name).toBeLessThanOrEqual(DIGEST_LINK_MAX);
        const reading = verifyTriageToken(KEY, links[0]!.split('/triage/')[1]!, s.clock.now());
        if (!reading.ok || !('digest' in reading)) throw new Error(`${name}: not a digest link`);
        expect(reading.digest.d).toBe(name);
        for (const a of reading.digest.anomalies) listed.add(a.anomalyId);
      }
      const expected = Array.from({ length: 200 }, (_, i) => anomalyRecordId(nasty(i + 1), name));
      expect(
        expected.filter((id) => !listed.has(id)),
        name,
      ).toEqual([]);
    }
  });

  it('a Slack app with buttons links its digest to the page; an action there threads its note under the digest', async () => {
    const s = setup();
    for (const n of [1, 2]) await s.send('app', alert(n));
    await s.close();
    const payload = s.slackApp.payloads[0] as SlackAppPayload;
    expect(payload.triage).toEqual({ link: expect.stringMatching(/^https:\/\/api\.example\.com\/triage\/g/) });
    const link = (payload.triage as { link: string }).link;
    expect((await s.page(link, 'action=snooze%3A0&name=Dana')).statusCode).toBe(200);
    expect(s.notes[0]?.anomalyId).toBe(anomalyRecordId(alert(1), 'app'));
    // The anomaly's item says where its first message is: the digest's, which the note threads under.
    expect(s.ledger.anomalies.get(anomalyRecordId(alert(1), 'app'))?.opening).toEqual({ channel: 'C0123ABCD', ts: '1700000000.1' });
    expect(await s.escalateDue()).toEqual(['Spend spike 2 in EC2']);
  });
});

describe('a Google Chat digest has a thread of its own', () => {
  it('its parts share one thread, the next storm starts another, and its page posts its notes there', async () => {
    const s = setup();
    const long = 'z'.repeat(300);
    for (let i = 1; i <= 60; i++) await s.send('chat', alert(i, { title: `Alert ${i} ${long}` }));
    await s.close();
    for (const n of [61, 62]) await s.send('chat', alert(n));
    await s.close();
    for (const n of [63, 64]) await s.send('chat', alert(n));
    await s.close();
    const threads = s.chat.payloads.map((p) => (p as { thread: { threadKey: string } }).thread.threadKey);
    const [first, second, third] = [threads.slice(0, -2), threads.at(-2), threads.at(-1)];
    expect(first.length).toBeGreaterThan(1);
    expect(new Set(first).size).toBe(1);
    // Two digests of two alerts each: not one thread, as one keyed by their like titles would be.
    expect(new Set([first[0], second, third]).size).toBe(3);
    expect(threads.every((t) => t.startsWith('cost-alert-digest-'))).toBe(true);

    const [link] = linksIn(s.chat.payloads.at(-1));
    expect((await s.page(link!, 'action=acknowledge%3Aall&name=Dana')).statusCode).toBe(200);
    expect(s.notes).toEqual([expect.objectContaining({ destination: 'chat', thread: third })]);
  });
});

describe('an anomaly escalates only from where someone could triage it', () => {
  it('a Slack app without buttons offers no way to triage a digest: its anomalies do not escalate; one posted alone still does', async () => {
    const s = setup({ app: { botToken: 'xoxb-digest-test' } });
    for (const n of [1, 2, 3]) await s.send('app', alert(n));
    await s.close();
    expect((s.slackApp.payloads[0] as SlackAppPayload).triage).toBeUndefined();
    expect(s.log.lines.join('\n')).toContain('escalation withdrawn: the digest offered no way to triage its anomalies');
    await s.send('app', alert(4));
    await s.close();
    expect(await s.escalateDue()).toEqual(['Spend spike 4 in EC2']);
  });

  it('without a link key, or without an origin to link to, a digest offers no link and nothing in it escalates', async () => {
    const keyless = setup({ key: false });
    for (const n of [1, 2]) await keyless.send('storm', alert(n));
    await keyless.close();
    expect(linksIn(keyless.slack.payloads[0])).toEqual([]);
    expect(await keyless.escalateDue()).toEqual([]);

    const nowhere = setup();
    for (const n of [1, 2]) await nowhere.send('teams', alert(n), null);
    await nowhere.close();
    expect(linksIn(nowhere.teams.payloads[0])).toEqual([]);
    expect(await nowhere.escalateDue()).toEqual([]);
  });

  it('a follow-up in a digest without a link leaves the escalation its opening set when it was posted with one', async () => {
    const s = setup();
    await s.send('storm', alert(1));
    await s.close();
    // Alone, with its own Triage link: it escalates unless someone acts.
    expect(linksIn(s.slack.payloads[0])).toHaveLength(1);
    await s.send('storm', alert(1, { message: 'Up 90% today' }), null);
    await s.send('storm', alert(2), null);
    await s.close();
    expect(linksIn(s.slack.payloads[1])).toEqual([]);
    expect(await s.escalateDue()).toEqual(['Spend spike 1 in EC2']);
  });
});

describe('an escalation due while its opening still waits in a group waits for the closing', () => {
  it('nothing escalates before the digest posts; once it posts with its Triage link and nobody acts, each anomaly escalates once', async () => {
    const s = setup();
    for (const n of [1, 2]) expect(await s.send('storm', alert(n))).toEqual({ kind: 'grouped' });
    // The chat holds the closing back past the escalation's due time: nobody at storm has seen either.
    expect(await s.escalateDue()).toEqual([]);
    expect(s.waiting).toHaveLength(4);
    await s.close();
    expect(linksIn(s.slack.payloads[0])).toHaveLength(1);
    expect(await s.escalateDue()).toEqual(['Spend spike 1 in EC2', 'Spend spike 2 in EC2']);
  });

  it("a Slack app's grouped alert posted with its buttons after the due time escalates then, once", async () => {
    const s = setup();
    await s.send('app', alert(1));
    expect(await s.escalateDue()).toEqual([]);
    await s.close();
    expect((s.slackApp.payloads[0] as SlackAppPayload).triage).toBeDefined();
    expect(await s.escalateDue()).toEqual(['Spend spike 1 in EC2']);
  });

  it('a closing after the due time whose digest offers no way to triage escalates nothing', async () => {
    const s = setup({ key: false });
    for (const n of [1, 2]) await s.send('storm', alert(n));
    expect(await s.escalateDue()).toEqual([]);
    await s.close();
    expect(linksIn(s.slack.payloads[0])).toEqual([]);
    expect(await s.escalateDue()).toEqual([]);
    expect(s.waiting).toEqual([]);
  });
});

describe('digest lines name cost centers', () => {
  it("names each alert's cost centers where the owner directory knew them, within the line", async () => {
    const s = setup();
    await s.send('storm', alert(1), ORIGIN, [{ id: 'cc-1', name: 'Data Platform' }]);
    await s.send('storm', alert(2), ORIGIN, [
      { id: 'cc-2', name: 'Web' },
      { id: 'cc-3', name: '' },
      { id: 'cc-4', name: 'x'.repeat(200) },
    ]);
    await s.send('storm', alert(3));
    await s.close();
    const text = JSON.stringify(s.slack.payloads[0]);
    expect(text).toContain('Spend spike 1 in EC2 · 123456789001 · cost center Data Platform · Up 1% today');
    expect(text).toMatch(/Spend spike 2 in EC2 · 123456789002 · cost centers Web, cc-3, x+… · Up 2% today/);
    expect(text).toContain('Spend spike 3 in EC2 · 123456789003 · Up 3% today');
  });
});

describe("a digest link's token", () => {
  const anomalies = [1, 2, 3].map((n) => ({
    anomalyId: anomalyRecordId(alert(n), 'storm'),
    title: `Spend spike ${n}`,
    account: 'Prod (1)',
  }));
  const fields = { destination: 'storm', anomalies };
  const NOW = Date.parse('2026-11-22T12:00:00Z');
  /** A token as the stack would sign this body, whatever it holds. */
  const signed = (body: string) => `${body}.${createHmac('sha256', KEY).update(body).digest('base64url')}`;
  const deflated = (json: unknown) => `g${deflateRawSync(Buffer.from(JSON.stringify(json))).toString('base64url')}`;

  it('carries each anomaly id whole in its 32 bytes, and what the page shows; it works 30 days', () => {
    const threaded = { ...fields, thread: 'cost-alert-digest-x' };
    const token = signDigestToken(KEY, threaded, NOW);
    expect(verifyTriageToken(KEY, token, NOW)).toEqual({
      ok: true,
      digest: { d: 'storm', anomalies, k: 'cost-alert-digest-x', e: Math.floor(NOW / 1000) + 30 * 86_400 },
    });
    expect(verifyTriageToken(KEY, token, NOW + 30 * 86_400_000)).toEqual({ ok: false, reason: 'expired' });
    // Measured as long as the link it makes, whatever its expiry, with a little room.
    const length = `https://api.example.com/triage/${token}`.length;
    expect(digestLinkLength('https://api.example.com', threaded)).toBeGreaterThanOrEqual(length);
    expect(digestLinkLength('https://api.example.com', threaded)).toBeLessThan(length + 32);
  });

  it('is malformed, though signed, when its body is no digest: not deflated, not its shape, or an id that is not 32 bytes', () => {
    const e = Math.floor(NOW / 1000) + 60;
    for (const body of [
      'gnot-deflate-data',
      deflated({ d: 'storm', n: [], e }),
      deflated({ d: 'storm', n: [['AAAA', 't', 'c']], e }),
      deflated({ d: 'storm', n: [[`${Buffer.alloc(32).toString('base64url')}x`, 't', 'c']], e }),
      deflated('just a string'),
    ]) {
      expect(verifyTriageToken(KEY, signed(body), NOW), body).toEqual({ ok: false, reason: 'malformed' });
    }
    expect(
      verifyTriageToken(KEY, signed(deflated({ d: 'storm', n: [[Buffer.alloc(32).toString('base64url'), 't', 'c']], e })), NOW),
    ).toMatchObject({
      ok: true,
    });
    expect(readDigestTokenBody('eyJhIjoiYiJ9')).toBeUndefined();
    expect(unpackId('AAAA')).toBeUndefined();
  });

  it('takes only anomaly record ids', () => {
    expect(() => digestTokenBody({ destination: 'storm', anomalies: [{ anomalyId: 'delivery#x', title: '', account: '' }] }, 1)).toThrow(
      TypeError,
    );
  });
});
