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
    // In finops' and app's hour, before their runs: anomalies opened now are named by their summaries.
    clock = MONDAY_NINE_BERLIN + 10 * 60_000;
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
    clock += 2 * HOUR;
    const run = createSummaryRun(ports());
    const first = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(first.summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'posted', anomalies: 1 });
    expect(outcomeOf(first.summaries, 'friday')).toEqual({ destination: 'friday', outcome: 'not_due' });
    expect(outcomeOf(first.summaries, 'app')).toEqual({ destination: 'app', outcome: 'quiet', anomalies: 0 });
    expect(outcomeOf(first.summaries, 'default')).toBeUndefined();
    expect(teams.accepted()).toHaveLength(1);
    expect(cardText(teams.accepted()[0]?.body)).toContain('EC2 spend rose · Production payer (123456789012) · open 2 h · no updates');
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

  it('names an anomaly first seen in the summary’s hour a few minutes before its run', async () => {
    clock = MONDAY_NINE_BERLIN - 2 * HOUR;
    await open('finops', 'Seen before the hour');
    clock = MONDAY_NINE_BERLIN + 25 * 60_000;
    await open('finops', 'Seen five minutes before the run');
    clock = MONDAY_NINE_BERLIN + 30 * 60_000;
    expect(outcomeOf((await createSummaryRun(ports())(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({
      outcome: 'posted',
      anomalies: 2,
    });
    const text = cardText(teams.accepted()[0]?.body);
    expect(text).toContain('Seen before the hour');
    expect(text).toContain('Seen five minutes before the run · Production payer (123456789012) · open 5 min');
  });

  it('a summary posted late names what was first seen up to its run; next week’s starts where it ended', async () => {
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
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 2 });
    const late = cardText(teams.accepted()[0]?.body);
    expect(late).toContain('Seen on Sunday');
    expect(late).toContain('Seen after the hour');
    clock = MONDAY_NINE_BERLIN + 3 * HOUR + 1_000;
    await open('finops', 'Seen after the late run');

    // On time a week later: from the late run on, not from last week's hour.
    clock = MONDAY_NINE_BERLIN + 7 * 24 * HOUR;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
    const next = cardText(teams.accepted()[1]?.body);
    expect(next).toContain('Seen after the late run');
    expect(next).not.toContain('Seen on Sunday');
    expect(next).not.toContain('Seen after the hour');
  });

  it('a week after none recorded (the first, or one whose end was not recorded) starts at the previous week’s hour', async () => {
    clock = MONDAY_NINE_BERLIN - 7 * 24 * HOUR - 60_000;
    await open('finops', 'Seen before last week’s hour');
    clock = MONDAY_NINE_BERLIN - 7 * 24 * HOUR + 60_000;
    await open('finops', 'Seen after last week’s hour');
    clock = MONDAY_NINE_BERLIN + 10 * 60_000;
    expect(outcomeOf((await createSummaryRun(ports())(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({
      outcome: 'posted',
      anomalies: 1,
    });
    const text = cardText(teams.accepted()[0]?.body);
    expect(text).toContain('Seen after last week’s hour');
    expect(text).not.toContain('Seen before last week’s hour');
  });

  it('where last week’s summary ended cannot be read, the week is given back and the next hourly run posts it', async () => {
    await open('finops', 'EC2 spend rose');
    const unreadable = { ...weeks, coveredTo: () => Promise.reject(new Error('table unreachable')) };
    const failed = await createSummaryRun(ports({ weeks: unreadable }))(scheduled, budgetOf(30_000));
    expect(outcomeOf(failed.summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'failed', reason: 'Error' });
    expect(teams.requests).toHaveLength(0);
    clock += HOUR;
    const next = await createSummaryRun(ports())(scheduled, budgetOf(30_000));
    expect(outcomeOf(next.summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
  });

  it('across a change of the clocks, every anomaly is named in exactly one weekly summary: the first after it was seen', async () => {
    const run = createSummaryRun(ports());
    // Monday 09:00 in Berlin: 08:00 UTC before the clocks go forward on 29 March and after they go
    // back on 25 October, 07:00 UTC between; those weeks are 7 d - 1 h and 7 d + 1 h long.
    const timeline: Array<[string, string | undefined]> = [
      ['2026-03-23T07:30:00Z', 'Seen 23 Mar 07:30'],
      ['2026-03-23T08:05:00Z', 'Seen 23 Mar 08:05'],
      ['2026-03-23T08:10:00Z', undefined],
      ['2026-03-23T08:15:00Z', 'Seen 23 Mar 08:15'],
      ['2026-03-30T06:55:00Z', 'Seen 30 Mar 06:55'],
      ['2026-03-30T07:20:00Z', undefined],
      ['2026-03-30T07:40:00Z', 'Seen 30 Mar 07:40'],
      ['2026-04-06T07:00:00Z', undefined],
      ['2026-10-19T07:05:00Z', 'Seen 19 Oct 07:05'],
      ['2026-10-19T07:10:00Z', undefined],
      ['2026-10-19T07:30:00Z', 'Seen 19 Oct 07:30'],
      ['2026-10-26T07:30:00Z', 'Seen 26 Oct 07:30'],
      ['2026-10-26T09:00:00Z', 'Seen 26 Oct 09:00'],
      // Posted late, within the catch-up time.
      ['2026-10-26T10:30:00Z', undefined],
      ['2026-10-26T11:00:00Z', 'Seen 26 Oct 11:00'],
      ['2026-11-02T07:57:00Z', 'Seen 2 Nov 07:57'],
      ['2026-11-02T08:00:00Z', undefined],
    ];
    const summaries: string[] = [];
    const namedBy = new Map<string, number>();
    for (const [iso, title] of timeline) {
      clock = Date.parse(iso);
      if (title !== undefined) {
        await open('finops', title);
        namedBy.set(title, summaries.length);
        continue;
      }
      const before = teams.accepted().length;
      expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')?.outcome, iso).toBe('posted');
      summaries.push(cardText(teams.accepted()[before]?.body));
    }
    expect(summaries).toHaveLength(6);
    for (const [title, index] of namedBy) {
      expect(
        summaries.flatMap((text, i) => (text.includes(title) ? [i] : [])),
        title,
      ).toEqual([index]);
    }
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
    clock += 5 * 60_000;
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

  it('a post whose answer comes after the post timeout is not posted again by the hourly runs after it', async () => {
    await open('finops', 'EC2 spend rose');
    clock += 5 * 60_000;
    // The chat takes the post and answers too late: it shows the summary, the run cannot know.
    teams.queue(new URL(teams.url()).pathname, { kind: 'hang' });
    const run = createSummaryRun(ports({ postTimeoutMs: 300 }));
    const late = await run(scheduled, budgetOf(30_000));
    expect(outcomeOf(late.summaries, 'finops')).toEqual({ destination: 'finops', outcome: 'unconfirmed', reason: 'timeout' });
    for (let hour = 1; hour < CATCH_UP_HOURS; hour++) {
      clock += HOUR;
      expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toEqual({
        destination: 'finops',
        outcome: 'already_posted',
      });
    }
    expect(teams.requests).toHaveLength(1);
    expect(metrics.count('Summaries', { outcome: 'unconfirmed', destinationType: 'teams' })).toBe(1);
    expect(metrics.count('Summaries', { outcome: 'failed', destinationType: 'teams' })).toBe(0);
    expect(logs.join('\n')).toContain('its answer came too late; it is not posted again');
    // Next week starts where this one ended, as after a summary that was answered.
    clock += 7 * 24 * HOUR - (CATCH_UP_HOURS - 1) * HOUR;
    await open('finops', 'S3 spend rose');
    clock += 10 * 60_000;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
  });

  it('a late answer whose week the table cannot mark posted still keeps the week taken: no second copy', async () => {
    await open('finops', 'EC2 spend rose');
    clock += 5 * 60_000;
    teams.queue(new URL(teams.url()).pathname, { kind: 'hang' });
    const unmarked = { ...weeks, posted: () => Promise.reject(new Error('table unreachable')) };
    const run = createSummaryRun(ports({ weeks: unmarked, postTimeoutMs: 300 }));
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'unconfirmed' });
    expect(logs.join('\n')).toContain('could not mark the week posted');
    clock += HOUR;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'already_posted' });
    expect(teams.requests).toHaveLength(1);
  });

  it('an anomaly the summaries index does not show yet at the run is named by next week’s summary, not lost', async () => {
    // An index that shows an item a minute after it was written, as a lagging GSI may.
    const lagging: SummaryRecords = {
      since: async (destination, from) =>
        (await memorySummaryRecords(ledger).since(destination, from)).filter((r) => r.firstSeen <= clock / 1000 - 60),
    };
    const run = createSummaryRun(ports({ records: lagging }));
    clock = MONDAY_NINE_BERLIN + 20 * 60_000;
    await open('finops', 'Seen well before the run');
    clock += 10 * 60_000 - 30_000;
    await open('finops', 'Seen half a minute before the run');
    clock += 30_000;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
    clock = MONDAY_NINE_BERLIN + 7 * 24 * HOUR + 5 * 60_000;
    expect(outcomeOf((await run(scheduled, budgetOf(30_000))).summaries, 'finops')).toMatchObject({ outcome: 'posted', anomalies: 1 });
    expect(cardText(teams.accepted()[1]?.body)).toContain('Seen half a minute before the run');
    expect(cardText(teams.accepted()[0]?.body)).not.toContain('Seen half a minute before the run');
  });

  it('a week whose summary went out is not posted again, though the table could not mark it posted', async () => {
    await open('finops', 'EC2 spend rose');
    const unmarked = { ...weeks, posted: () => Promise.reject(new Error('table unreachable')) };
    const run = createSummaryRun(ports({ weeks: unmarked }));
    clock = MONDAY_NINE_BERLIN + 15 * 60_000;
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

  it('without a readable configuration, posts nothing, says why and counts a failure for the alarm', async () => {
    const run = createSummaryRun(ports({ config: () => Promise.reject(new Error('no secret')) }));
    expect(await run(scheduled, budgetOf(30_000))).toEqual({
      summaries: [],
      error: 'The relay configuration cannot be read; nothing was posted.',
    });
    expect(metrics.count('Summaries', { outcome: 'failed', destinationType: 'unknown' })).toBe(1);
  });
});
