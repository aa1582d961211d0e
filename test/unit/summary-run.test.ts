// The summary function's decisions in process: its ports in memory (the ledger npm start uses, the
// weeks taken), its clock injected, and chats on loopback servers that answer as each service does.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RelayConfig, relayConfigSchema } from '../../lib/config/schema.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';
import { createLogger } from '../../lib/log/logger.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import { CATCH_UP_HOURS } from '../../lib/summary/due.js';
import { createSummaryRun, type DestinationSummary, type SummaryPorts } from '../../lib/summary/run.js';
import { memorySummaryRecords, memorySummaryWeeks, type SummaryRecords } from '../../lib/summary/store.js';
import { fetchOverNodeHttp } from '../../lib/transport/fetch-over-node-http.js';
import { verifyTriageToken } from '../../lib/triage-link/token.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakeChat, startFakeTeams } from '../helpers/chat-servers.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type FakeSlackApi, startFakeSlackApi } from '../helpers/slack-api-server.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const KEY = 'summary-run-key-0123456789abcdefghijklmnopqrstuv';
const BOT_TOKEN = 'xoxb-summary-run-token';
// Monday 2026-11-23, 09:00 in Berlin.
const MONDAY_NINE_BERLIN = Date.parse('2026-11-23T08:00:00Z');
const HOUR = 3_600_000;
const ORIGIN = 'https://api.example.com';

const alert = (title: string, account = '123456789012') =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert' },
    payload: { title, message: 'up 40%', account_id: account, account_name: 'Production payer' },
  });

describe('the summary function', () => {
  let teams: FakeChat;
  let hooks: FakeSlack;
  let api: FakeSlackApi;
  let clock: number;
  let ledger: ReturnType<typeof inMemoryLedger>;
  let weeks: ReturnType<typeof memorySummaryWeeks>;
  let metrics: ReturnType<typeof memoryMetrics>;
  let logs: string[];
  let config: RelayConfig;
  let keyReads: number;
  const hookPath = '/services/T0/B0/summary';

  beforeAll(async () => {
    [teams, hooks, api] = await Promise.all([startFakeTeams(), startFakeSlack(), startFakeSlackApi(BOT_TOKEN)]);
  });
  afterAll(async () => {
    await Promise.all([teams.close(), hooks.close(), api.close()]);
  });

  beforeEach(() => {
    // Before finops' and app's hour: anomalies opened now belong to the week their summaries sum up.
    clock = MONDAY_NINE_BERLIN - 50 * 60_000;
    ledger = inMemoryLedger(() => clock);
    weeks = memorySummaryWeeks(() => clock);
    metrics = memoryMetrics();
    logs = [];
    keyReads = 0;
    teams.requests.length = 0;
    hooks.reset();
    api.messages.length = 0;
    config = relayConfigSchema.parse({
      auth: { method: 'none' },
      slack: { botToken: BOT_TOKEN },
      destinations: {
        default: { url: hooks.url('/services/T0/B0/default') },
        finops: { type: 'teams', url: teams.url(), summary: { weekday: 'monday', hour: 9, timeZone: 'Europe/Berlin' } },
        friday: { url: hooks.url(hookPath), summary: { weekday: 'friday', hour: 17 } },
        app: { channel: 'C0SUMMARY1', summary: { weekday: 'monday', hour: 8 } },
      },
    });
  });

  const ports = (overrides: Partial<SummaryPorts> = {}): SummaryPorts => ({
    config: () => ({ config }),
    records: memorySummaryRecords(ledger),
    weeks,
    linkKey: async () => {
      keyReads++;
      return KEY;
    },
    services: createChatServices(fetchOverNodeHttp, { SLACK_API_URL: api.url }),
    postTimeoutMs: 2_000,
    logger: createLogger({ sink: (line) => logs.push(line) }),
    metrics,
    now: () => clock,
    ...overrides,
  });
  const open = async (destination: string, title: string) => {
    const message = alert(title);
    await ledger.startAnomaly(anomalyRecordId(message, destination), undefined, {
      destination,
      message,
      origin: ORIGIN,
      thread: 'thread-key-1',
    });
  };
  const scheduled = { kind: 'scheduled' } as const;
  const outcomeOf = (summaries: DestinationSummary[], name: string) => summaries.find((s) => s.destination === name);
  const cardText = (body: unknown) =>
    (body as { attachments: Array<{ content: { body: Array<{ text?: string }> } }> }).attachments[0]?.content.body
      .map((b) => b.text ?? '')
      .join('\n') ?? '';

  it('posts a due destination’s week once however often it runs; a destination whose hour has not come gets nothing', async () => {
    await open('finops', 'EC2 spend rose');
    await open('friday', 'Lambda spend rose');
    clock += 3 * HOUR;
    const run = createSummaryRun(ports());
    const first = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(first.summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'posted', anomalies: 1 });
    expect(outcomeOf(first.summaries, 'friday')).toEqual({ destination: 'friday', outcome: 'not_due' });
    expect(outcomeOf(first.summaries, 'app')).toEqual({ destination: 'app', outcome: 'quiet', anomalies: 0 });
    expect(outcomeOf(first.summaries, 'default')).toBeUndefined();
    expect(teams.accepted()).toHaveLength(1);
    expect(cardText(teams.accepted()[0]?.body)).toContain('EC2 spend rose · Production payer (123456789012) · open 3 h · no updates');
    expect(hooks.requests).toHaveLength(0);

    clock += 20 * 60_000;
    const again = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(again.summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'already_posted' });
    expect(teams.accepted()).toHaveLength(1);
    expect(metrics.points.map((p) => [p.name, p.dimensions['outcome'], p.dimensions['destinationType']])).toEqual([
      ['Summaries', 'posted', 'teams'],
      ['Summaries', 'quiet', 'slack'],
    ]);
  });

  it('a summary posted late names its week up to its hour; what was first seen after the hour comes in next week’s', async () => {
    clock = MONDAY_NINE_BERLIN - 24 * HOUR;
    await open('finops', 'Seen on Sunday');
    const run = createSummaryRun(ports());
    // The chat refuses the summary at its hour; a later run posts it.
    clock = MONDAY_NINE_BERLIN;
    teams.queue(new URL(teams.url()).pathname, { kind: 'error', status: 503, code: 'ServiceUnavailable' });
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'failed' });
    clock = MONDAY_NINE_BERLIN + HOUR;
    await open('finops', 'Seen after the hour');
    clock = MONDAY_NINE_BERLIN + 3 * HOUR;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
    const late = cardText(teams.accepted()[0]?.body);
    expect(late).toContain('Seen on Sunday');
    expect(late).not.toContain('Seen after the hour');

    clock = MONDAY_NINE_BERLIN + 7 * 24 * HOUR;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
    const next = cardText(teams.accepted()[1]?.body);
    expect(next).toContain('Seen after the hour');
    expect(next).not.toContain('Seen on Sunday');
  });

  it('across a change of the clocks, every anomaly is named in exactly one weekly summary', async () => {
    const run = createSummaryRun(ports());
    const summaryAt = async (iso: string) => {
      clock = Date.parse(iso);
      const before = teams.accepted().length;
      expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')?.outcome).toMatch(/^(posted|quiet)$/);
      return cardText(teams.accepted()[before]?.body);
    };
    // Spring: Monday 09:00 in Berlin is 08:00 UTC, and a week later 07:00 UTC (the slots are 7 d - 1 h apart).
    clock = Date.parse('2026-03-23T07:30:00Z');
    await open('finops', 'Seen before the spring hour');
    const spring = [await summaryAt('2026-03-23T08:00:00Z'), await summaryAt('2026-03-30T07:00:00Z')];
    expect(spring.filter((text) => text.includes('Seen before the spring hour'))).toHaveLength(1);
    // Autumn: 07:00 UTC, and a week later 08:00 UTC (7 d + 1 h apart).
    await summaryAt('2026-10-19T07:00:00Z');
    clock = Date.parse('2026-10-19T07:30:00Z');
    await open('finops', 'Seen after the autumn hour');
    expect(await summaryAt('2026-10-26T08:00:00Z')).toContain('Seen after the autumn hour');
  });

  it('a Slack app channel gets the quiet week in one line through the Web API, with the bot token and no link key read', async () => {
    clock = Date.parse('2026-11-23T08:00:00Z');
    const { summaries } = await createSummaryRun(ports())(scheduled, budgetOf(30_000));
    expect(outcomeOf(summaries, 'app')).toMatchObject({ outcome: 'quiet' });
    expect(api.messages).toHaveLength(1);
    expect(api.messages[0]).toMatchObject({
      channel: 'C0SUMMARY1',
      text: 'Weekly summary · app: no anomalies in the 7 days to 23 Nov 2026.',
    });
    expect(keyReads).toBe(0);
  });

  it('gives an open anomaly a Triage link signed with the stack’s key, naming it, its destination, account and thread', async () => {
    await open('finops', 'S3 spend rose');
    clock += HOUR;
    await createSummaryRun(ports())(scheduled, budgetOf(30_000));
    const link = /\[Triage\]\(([^)]+)\)/.exec(cardText(teams.accepted().at(-1)?.body))?.[1] ?? '';
    expect(link.startsWith(`${ORIGIN}/triage/`)).toBe(true);
    const reading = verifyTriageToken(KEY, link.slice(`${ORIGIN}/triage/`.length), clock);
    expect(reading).toMatchObject({
      ok: true,
      token: {
        a: anomalyRecordId(alert('S3 spend rose'), 'finops'),
        d: 'finops',
        t: 'S3 spend rose',
        c: 'Production payer (123456789012)',
        k: 'thread-key-1',
      },
    });
    // Without a key, no link, and the summary is posted all the same.
    teams.requests.length = 0;
    const run = createSummaryRun(ports({ linkKey: async () => undefined, weeks: memorySummaryWeeks(() => clock) }));
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted' });
    expect(cardText(teams.accepted()[0]?.body)).not.toContain('Triage');
  });

  it('a post the chat refuses gives the week back: the next hourly run posts it, and each is counted', async () => {
    await open('finops', 'EC2 spend rose');
    clock += HOUR;
    const run = createSummaryRun(ports());
    teams.queue(new URL(teams.url()).pathname, { kind: 'error', status: 503, code: 'ServiceUnavailable' });
    const failed = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(failed.summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'failed', reason: 'service_unavailable' });
    expect(logs.join('\n')).toContain('weekly summary not posted');
    clock += HOUR;
    const next = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(next.summaries, 'finops')).toMatchObject({ outcome: 'posted' });
    expect(teams.accepted()).toHaveLength(1);
    expect(metrics.count('Summaries', { outcome: 'failed', destinationType: 'teams' })).toBe(1);
    expect(metrics.count('Summaries', { outcome: 'posted', destinationType: 'teams' })).toBe(1);
  });

  it('a week whose summary went out is not posted again, though the table could not mark it posted', async () => {
    await open('finops', 'EC2 spend rose');
    const unmarked = { ...weeks, posted: () => Promise.reject(new Error('table unreachable')) };
    const run = createSummaryRun(ports({ weeks: unmarked }));
    clock = MONDAY_NINE_BERLIN + 10 * 60_000;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted' });
    // Every later hourly run within the catch-up time.
    for (let hour = 1; hour < CATCH_UP_HOURS; hour++) {
      clock = MONDAY_NINE_BERLIN + hour * HOUR;
      expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toEqual({
        destination: 'finops',
        outcome: 'already_posted',
      });
    }
    expect(teams.accepted()).toHaveLength(1);
  });

  it('a summary never posted in its hour is not posted once the catch-up time has passed', async () => {
    clock = MONDAY_NINE_BERLIN + 6 * HOUR;
    const { summaries } = await createSummaryRun(ports())(scheduled, budgetOf(30_000));
    expect(outcomeOf(summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'not_due' });
  });

  it('records that cannot be read give the week back; a run out of time takes nothing', async () => {
    clock += HOUR;
    const broken: SummaryRecords = { since: () => Promise.reject(new Error('table unreachable')) };
    const run = createSummaryRun(ports({ records: broken }));
    const { summaries } = await run(scheduled, budgetOf(30_000));
    expect(summaries.filter((s) => s.outcome === 'failed')).toEqual([
      { destination: 'finops', outcome: 'failed', reason: 'Error' },
      { destination: 'app', outcome: 'failed', reason: 'Error' },
    ]);
    expect(weeks.weeks.size).toBe(0);
    const late = await createSummaryRun(ports({ weeks: memorySummaryWeeks(() => clock) }))(scheduled, budgetOf(3_000));
    expect(late.summaries.filter((s) => s.outcome === 'failed').map((s) => s.reason)).toEqual(['out_of_time', 'out_of_time']);
    expect(teams.requests).toHaveLength(0);
  });

  it('{"summaryFor": [...]} posts now, whatever the day, and leaves the week’s scheduled summary to come', async () => {
    await open('friday', 'Lambda spend rose');
    const run = createSummaryRun(ports());
    const now = await run({ kind: 'now', destinations: ['friday'] }, budgetOf(30_000));
    expect(now).toEqual({ summaries: [{ destination: 'friday', outcome: 'posted', anomalies: 1 }] });
    expect(hooks.accepted(hookPath)).toHaveLength(1);
    expect(JSON.stringify(hooks.accepted(hookPath)[0]?.body)).toContain('Lambda spend rose');
    expect(weeks.weeks.size).toBe(0);
    // Friday 17:00 UTC: the scheduled one still comes.
    clock = Date.parse('2026-11-27T17:00:00Z');
    const friday = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(friday.summaries, 'friday')).toMatchObject({ outcome: 'posted' });
    expect(hooks.accepted(hookPath)).toHaveLength(2);
  });

  it('asked for a destination without a summary, or none at all, says so and posts nothing', async () => {
    const run = createSummaryRun(ports());
    const answer = await run({ kind: 'now', destinations: ['finops', 'default', 'nope'] }, budgetOf(30_000));
    expect(answer).toEqual({
      summaries: [],
      error: 'summaryFor: "default" has no "summary" option; "nope" is not a destination. Nothing was posted.',
    });
    expect(teams.requests.length + hooks.requests.length + api.messages.length).toBe(0);
  });

  it('without a readable configuration, posts nothing and says why', async () => {
    const run = createSummaryRun(ports({ config: () => Promise.reject(new Error('no secret')) }));
    expect(await run(scheduled, budgetOf(30_000))).toEqual({
      summaries: [],
      error: 'The relay configuration cannot be read; nothing was posted.',
    });
  });
});
