import { describe, expect, it } from 'vitest';
import { mostThatFit, notShownLine, quietLine, summaryAge, summaryCounts, summaryLine, summaryTime } from '../../lib/format/summary.js';
import { accountOf, daysBefore, type SummaryRecord, stateOf, summaryWeek } from '../../lib/summary/view.js';

// A destination's week as every kind's layout receives it: counts by state, the open anomalies
// first with their age and updates, then the triaged ones with who and when.
const NOW = Date.parse('2026-11-23T08:00:00Z') / 1000;
const HOUR = 3_600;
const DAY = 24 * HOUR;

const record = (id: string, firstSeen: number, extra: Partial<SummaryRecord> = {}): SummaryRecord => ({
  id,
  title: `Spend rose ${id}`,
  accountId: '123456789012',
  accountName: 'Production payer',
  origin: 'https://api.example.com',
  firstSeen,
  followUps: 0,
  ...extra,
});

describe('the week of one destination', () => {
  const records = [
    record('acked', NOW - 5 * DAY, { triage: { state: 'acknowledged', by: 'Dana', at: NOW - 4 * DAY } }),
    record('newer-open', NOW - 2 * HOUR, { followUps: 1 }),
    record('lapsed', NOW - 3 * DAY, { triage: { state: 'snoozed', by: 'Lee', at: NOW - 2 * DAY, until: NOW - DAY } }),
    record('snoozed', NOW - DAY, { triage: { state: 'snoozed', by: 'Lee', at: NOW - HOUR, until: NOW + 23 * HOUR } }),
    record('expected', NOW - 6 * DAY, { triage: { state: 'expected', by: 'Sam', at: NOW - 6 * DAY + HOUR } }),
    record('reopened', NOW - 4 * DAY, { followUps: 3, triage: { state: 'open', by: 'Kim', at: NOW - 3 * DAY } }),
    record('too-old', NOW - 7 * DAY - 1),
    record('in-the-future', NOW + 60),
  ];
  const week = summaryWeek('finops', 'Europe/Berlin', records, daysBefore(NOW), NOW, (r) => `https://api.example.com/triage/${r.id}`);

  it('counts the anomalies first seen in the 7 days before, by state; a snooze that has ended counts as open', () => {
    expect(week.anomalies).toHaveLength(6);
    expect(week.counts).toEqual({ open: 3, acknowledged: 1, expected: 1, snoozed: 1 });
    expect(week).toMatchObject({ destination: 'finops', from: NOW - 7 * DAY, to: NOW, timeZone: 'Europe/Berlin' });
    expect(stateOf(undefined, NOW)).toBe('open');
    expect(stateOf({ state: 'snoozed', until: NOW }, NOW)).toBe('open');
    expect(stateOf({ state: 'snoozed', until: NOW + 1 }, NOW)).toBe('snoozed');
  });

  it('lists the open ones first, the longest open first, then the triaged ones, the earliest first', () => {
    expect(week.anomalies.map((a) => a.title.replace('Spend rose ', ''))).toEqual([
      'reopened',
      'lapsed',
      'newer-open',
      'expected',
      'acked',
      'snoozed',
    ]);
  });

  it('gives the open ones their Triage link and their updates; the triaged ones who and when, no link', () => {
    const open = week.anomalies.filter((a) => a.state === 'open');
    expect(open.map((a) => a.link)).toEqual([
      'https://api.example.com/triage/reopened',
      'https://api.example.com/triage/lapsed',
      'https://api.example.com/triage/newer-open',
    ]);
    // Who reopened or snoozed an anomaly that is open now is not what its line tells.
    expect(open.every((a) => a.by === undefined && a.at === undefined)).toBe(true);
    expect(week.anomalies.find((a) => a.state === 'snoozed')).toMatchObject({ by: 'Lee', at: NOW - HOUR, until: NOW + 23 * HOUR });
    expect(week.anomalies.filter((a) => a.state !== 'open').every((a) => a.link === undefined)).toBe(true);
  });

  it('a scheduled week: first seen after where the last one ended, up to and with its run; the next starts where it ends', () => {
    // Last week's summary went out 3 h after its hour; this week's runs 10 min after its own.
    const window = { from: NOW - 7 * DAY + 3 * HOUR, to: NOW + 10 * 60 };
    const edges = [
      record('at-start', window.from),
      record('before-run', NOW + 5 * 60),
      record('at-run', window.to),
      record('after-run', window.to + 1),
    ];
    const titles = (from: number, to: number, nowSeconds: number) =>
      summaryWeek('finops', 'UTC', edges, { from, to }, nowSeconds).anomalies.map((a) => a.title.replace('Spend rose ', ''));
    const week = summaryWeek('finops', 'UTC', edges, window, window.to);
    expect(week).toMatchObject({ from: window.from, to: window.to, asOf: window.to });
    expect(week.anomalies.map((a) => summaryLine(a, week))).toEqual([
      expect.stringContaining('Spend rose before-run · Production payer (123456789012) · open 5 min ·'),
      expect.stringContaining('Spend rose at-run · Production payer (123456789012) · open 0 min ·'),
    ]);
    // The week before ended where this one starts, and the next starts where it ends: each anomaly is in one of them.
    expect(titles(window.from - 7 * DAY, window.from, window.from)).toEqual(['at-start']);
    expect(titles(window.to, window.to + 7 * DAY, window.to + 7 * DAY)).toEqual(['after-run']);
  });

  it('names the account by name and id, or whichever is known', () => {
    expect(week.anomalies[0]?.account).toBe('Production payer (123456789012)');
    expect(accountOf({ accountId: '1', accountName: '' })).toBe('1');
    expect(accountOf({ accountId: '', accountName: 'Payer' })).toBe('Payer');
  });
});

describe('what a summary says, in words', () => {
  const week = { asOf: NOW, timeZone: 'Europe/Berlin' };
  const base = {
    id: 'anomaly#ec2',
    title: 'EC2 spend rose',
    account: 'Production payer (123456789012)',
    accountId: '123456789012',
    firstSeen: NOW - 2 * DAY - 3 * HOUR,
    updates: 0,
  };

  it('an open anomaly: title, account, how long open and its updates', () => {
    expect(summaryLine({ ...base, state: 'open' }, week)).toBe(
      'EC2 spend rose · Production payer (123456789012) · open 2 d 3 h · no updates',
    );
    expect(summaryLine({ ...base, state: 'open', updates: 1 }, week)).toMatch(/· 1 update$/);
    expect(summaryLine({ ...base, state: 'open', updates: 4 }, week)).toMatch(/· 4 updates$/);
  });

  it('a triaged one: who, and when on the destination’s clock; a snooze also until when', () => {
    expect(summaryLine({ ...base, state: 'acknowledged', by: 'Dana', at: NOW - DAY }, week)).toBe(
      'EC2 spend rose · Production payer (123456789012) · Acknowledged by Dana, 22 Nov 09:00 CET',
    );
    expect(summaryLine({ ...base, state: 'expected', by: 'Sam', at: NOW }, week)).toMatch(/· Marked expected by Sam, 23 Nov 09:00 CET$/);
    expect(summaryLine({ ...base, state: 'snoozed', by: 'Lee', at: NOW, until: NOW + DAY }, week)).toMatch(
      /· Snoozed for 24 h by Lee, 23 Nov 09:00 CET \(until 24 Nov 09:00 CET\)$/,
    );
    expect(summaryLine({ ...base, state: 'acknowledged' }, week)).toMatch(/· Acknowledged by someone$/);
  });

  it('sender and typed text inert, on one line, and short; a missing title or account still reads', () => {
    const line = summaryLine(
      {
        ...base,
        title: `<!channel> *bold*\n[x](https://evil.example) ${'long '.repeat(60)}`,
        account: '@here',
        state: 'acknowledged',
        by: '_Dana_',
      },
      week,
    );
    expect(line).not.toMatch(/\*bold\*|\n|https:\/\/evil|_Dana_|@here/);
    expect(line).toContain('…');
    expect(summaryLine({ ...base, title: '', account: '', state: 'open' }, week)).toMatch(/^Anomaly · unknown account · open/);
  });

  it('ages, times, counts, a cut and a quiet week', () => {
    expect([summaryAge(40 * 60), summaryAge(5 * HOUR + 600), summaryAge(5 * HOUR), summaryAge(3 * DAY), summaryAge(-5)]).toEqual([
      '40 min',
      '5 h 10 min',
      '5 h',
      '3 d',
      '0 min',
    ]);
    expect(summaryTime(NOW, 'America/New_York')).toBe('23 Nov 03:00 GMT-5');
    const summary = summaryWeek('finops', 'UTC', [record('a', NOW - HOUR)], daysBefore(NOW), NOW);
    expect(summaryCounts(summary)).toBe('1 anomaly first seen 16 Nov 2026 – 23 Nov 2026: 1 open, 0 acknowledged, 0 expected, 0 snoozed');
    expect(notShownLine(37)).toBe('… and 37 more not shown');
    const line = quietLine(summaryWeek('finops', 'UTC', [], daysBefore(NOW), NOW));
    expect(line).toBe('Weekly summary · finops: no anomalies in the 7 days to 23 Nov 2026.');
  });

  it('finds the most lines that fit, all of them when they do', () => {
    expect(mostThatFit(500, (n) => n <= 137)).toBe(137);
    expect(mostThatFit(10, () => true)).toBe(10);
    expect(mostThatFit(10, (n) => n === 0)).toBe(0);
  });
});
