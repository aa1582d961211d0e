import { describe, expect, it } from 'vitest';
import { CATCH_UP_HOURS, dueWeek, instantOf, isoWeek, latestSlot, type SummarySchedule } from '../../lib/summary/due.js';

// When a weekly summary is due, on the destination's own clock: weekday and hour, across time
// zones, daylight saving time and the turn of a day or a year.
const at = (iso: string) => Date.parse(iso);
const schedule = (weekday: SummarySchedule['weekday'], hour: number, timeZone = 'UTC'): SummarySchedule => ({ weekday, hour, timeZone });

describe('a weekly summary is due', () => {
  it('from its weekday and hour on its own clock until the catch-up time has passed, and not before', () => {
    // Monday 2026-11-23, 09:00 in Berlin is 08:00 UTC (CET, UTC+1).
    const berlin = schedule('monday', 9, 'Europe/Berlin');
    expect(dueWeek(at('2026-11-23T07:59:59Z'), berlin)).toEqual({ due: false });
    expect(dueWeek(at('2026-11-23T08:00:00Z'), berlin)).toMatchObject({ due: true, week: '2026-W48' });
    expect(dueWeek(at('2026-11-23T08:00:00Z') + CATCH_UP_HOURS * 3_600_000 - 1, berlin)).toMatchObject({ due: true, week: '2026-W48' });
    expect(dueWeek(at('2026-11-23T08:00:00Z') + CATCH_UP_HOURS * 3_600_000, berlin)).toEqual({ due: false });
    // Another weekday, at the same hour: not due.
    expect(dueWeek(at('2026-11-24T08:00:00Z'), berlin)).toEqual({ due: false });
    // The same wall-clock hour in UTC is an hour off Berlin's.
    expect(dueWeek(at('2026-11-23T08:00:00Z'), schedule('monday', 9))).toEqual({ due: false });
  });

  it('in summer and winter alike: the zone’s offset, not a fixed one, decides', () => {
    const newYork = schedule('friday', 17, 'America/New_York');
    // EST (UTC-5) in November, EDT (UTC-4) in July.
    expect(dueWeek(at('2026-11-27T22:00:00Z'), newYork)).toMatchObject({ due: true });
    expect(dueWeek(at('2026-11-27T21:00:00Z'), newYork)).toEqual({ due: false });
    expect(dueWeek(at('2026-07-03T21:00:00Z'), newYork)).toMatchObject({ due: true });
    expect(dueWeek(at('2026-07-03T20:00:00Z'), newYork)).toEqual({ due: false });
  });

  it('in a zone off UTC by half an hour, the hourly run on the hour meets it half an hour late', () => {
    // Monday 09:00 in Kolkata (UTC+5:30) is 03:30 UTC; the runs come at 03:00 and 04:00 UTC.
    const kolkata = schedule('monday', 9, 'Asia/Kolkata');
    expect(latestSlot(at('2026-11-23T04:00:00Z'), kolkata)).toBe(at('2026-11-23T03:30:00Z'));
    expect(dueWeek(at('2026-11-23T03:00:00Z'), kolkata)).toEqual({ due: false });
    expect(dueWeek(at('2026-11-23T04:00:00Z'), kolkata)).toMatchObject({ due: true });
  });

  it('on its own weekday where UTC is still on the day before', () => {
    // Monday 09:00 in Auckland (NZDT, UTC+13) is Sunday 20:00 UTC.
    const auckland = schedule('monday', 9, 'Pacific/Auckland');
    expect(dueWeek(at('2026-11-22T20:00:00Z'), auckland)).toMatchObject({ due: true, week: '2026-W48' });
    expect(dueWeek(at('2026-11-23T20:00:00Z'), auckland)).toEqual({ due: false });
  });

  it('late in the evening, still after midnight within the catch-up time, for the week of its own day', () => {
    const sunday = schedule('sunday', 23);
    expect(dueWeek(at('2026-11-30T02:00:00Z'), sunday)).toMatchObject({ due: true, week: '2026-W48' });
    expect(dueWeek(at('2026-11-30T05:00:00Z'), sunday)).toEqual({ due: false });
  });

  it('when the clocks go forward past its hour: at the jump, not skipped for the week', () => {
    // Berlin, Sunday 2026-03-29: 02:00 CET never happens; the clocks jump from 01:59:59 to 03:00 CEST (01:00 UTC).
    const night = schedule('sunday', 2, 'Europe/Berlin');
    expect(instantOf({ year: 2026, month: 3, day: 29 }, 2, 'Europe/Berlin')).toBe(at('2026-03-29T01:00:00Z'));
    expect(dueWeek(at('2026-03-29T00:00:00Z'), night)).toEqual({ due: false });
    expect(dueWeek(at('2026-03-29T01:00:00Z'), night)).toMatchObject({ due: true, week: '2026-W13' });
  });

  it('when the clocks go back over its hour: at the first of the two, one week either way', () => {
    // Berlin, Sunday 2026-10-25: 02:00 happens at 00:00 UTC (CEST) and again at 01:00 UTC (CET).
    const night = schedule('sunday', 2, 'Europe/Berlin');
    expect(instantOf({ year: 2026, month: 10, day: 25 }, 2, 'Europe/Berlin')).toBe(at('2026-10-25T00:00:00Z'));
    expect(dueWeek(at('2026-10-24T23:00:00Z'), night)).toEqual({ due: false });
    expect(dueWeek(at('2026-10-25T00:00:00Z'), night)).toMatchObject({ due: true, week: '2026-W43' });
    expect(dueWeek(at('2026-10-25T01:00:00Z'), night)).toMatchObject({ due: true, week: '2026-W43' });
  });

  it('on every day the clocks change, in zones far from UTC and by half an hour: each hour at its own first minute, or at the jump', () => {
    // Auckland and Chatham are 12 to 14 hours ahead of UTC: a change of the clocks can lie between
    // the naive guess and the instant itself. Chatham jumps at 02:45, Lord Howe by half an hour.
    const zones = ['Pacific/Auckland', 'Pacific/Chatham', 'Australia/Lord_Howe', 'Europe/Berlin', 'America/New_York', 'America/St_Johns'];
    let checked = 0;
    for (const timeZone of zones) {
      const wallOf = new Intl.DateTimeFormat('en-US', {
        timeZone,
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        hourCycle: 'h23',
      });
      const wall = (t: number) =>
        Object.fromEntries(wallOf.formatToParts(t).map((p) => [p.type, Number(p.value)])) as Record<string, number>;
      const offset = (t: number) => {
        const w = wall(t);
        return Date.UTC(w['year'] as number, (w['month'] as number) - 1, w['day'], w['hour'], w['minute']) - t;
      };
      for (let noon = Date.UTC(2026, 0, 1, 12); noon < Date.UTC(2027, 0, 1); noon += 86_400_000) {
        if (offset(noon) === offset(noon - 86_400_000)) continue;
        // A day the clocks change, and the days either side of it.
        for (const day of [noon - 86_400_000, noon, noon + 86_400_000]) {
          const d = new Date(day);
          const date = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
          for (let hour = 0; hour < 24; hour++) {
            const instant = instantOf(date, hour, timeZone);
            const shown = wall(instant);
            const onDate = shown['year'] === date.year && shown['month'] === date.month && shown['day'] === date.day;
            const before = wall(instant - 60_000);
            const beforeHour = before['day'] !== date.day || (before['hour'] as number) < hour;
            if (shown['hour'] === hour && shown['minute'] === 0) {
              // The first time the clock shows it: an hour earlier it did not.
              const earlier = wall(instant - 3_600_000);
              expect(earlier['day'] === date.day && earlier['hour'] === hour, `${timeZone} ${JSON.stringify(date)} ${hour}:00`).toBe(false);
            } else {
              // It never shows: the clocks jump over it at this instant.
              expect(
                { onDate, later: (shown['hour'] as number) * 60 + (shown['minute'] as number) > hour * 60, beforeHour },
                `${timeZone} ${JSON.stringify(date)} ${hour}:00`,
              ).toEqual({
                onDate: true,
                later: true,
                beforeHour: true,
              });
            }
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(zones.length * 2 * 3 * 24 - 1);
    // The two reported: Monday 2026-04-06 09:00 in Auckland is due at 21:00 UTC the day before (NZST, UTC+12).
    expect(latestSlot(at('2026-04-05T21:00:00Z'), schedule('monday', 9, 'Pacific/Auckland'))).toBe(at('2026-04-05T21:00:00Z'));
  });

  it('names the slot before and its week, where a week with no recorded end starts: 7 d ± 1 h back across a change of the clocks', () => {
    const monday = schedule('monday', 9, 'Europe/Berlin');
    expect(dueWeek(at('2026-11-23T11:00:00Z'), monday)).toEqual({
      due: true,
      week: '2026-W48',
      slot: at('2026-11-23T08:00:00Z'),
      previousSlot: at('2026-11-16T08:00:00Z'),
      previousWeek: '2026-W47',
      closes: at('2026-11-23T08:00:00Z') + CATCH_UP_HOURS * 3_600_000,
    });
    expect(dueWeek(at('2026-03-30T07:00:00Z'), monday)).toMatchObject({
      slot: at('2026-03-30T07:00:00Z'),
      previousSlot: at('2026-03-23T08:00:00Z'),
      previousWeek: '2026-W13',
    });
    expect(dueWeek(at('2026-10-26T08:00:00Z'), monday)).toMatchObject({
      slot: at('2026-10-26T08:00:00Z'),
      previousSlot: at('2026-10-19T07:00:00Z'),
      previousWeek: '2026-W43',
    });
    // Across the turn of a year: the last ISO week of the one before.
    expect(dueWeek(at('2027-01-04T08:00:00Z'), monday)).toMatchObject({ week: '2027-W01', previousWeek: '2026-W53' });
  });

  it('a day has 23 or 25 hours across a change of the clocks, and the slot is still that weekday’s hour', () => {
    const monday = schedule('monday', 0, 'Europe/Berlin');
    // The Monday after the clocks went forward: midnight CEST is 22:00 UTC on Sunday.
    expect(latestSlot(at('2026-03-30T06:00:00Z'), monday)).toBe(at('2026-03-29T22:00:00Z'));
    expect(latestSlot(at('2026-10-26T06:00:00Z'), monday)).toBe(at('2026-10-25T23:00:00Z'));
  });
});

describe('the week a summary belongs to', () => {
  it('is the ISO week of its day on its own clock, across the turn of a year', () => {
    expect(isoWeek(at('2026-01-01T12:00:00Z'), 'UTC')).toBe('2026-W01');
    expect(isoWeek(at('2027-01-01T12:00:00Z'), 'UTC')).toBe('2026-W53');
    expect(isoWeek(at('2024-12-30T12:00:00Z'), 'UTC')).toBe('2025-W01');
    // Sunday evening in UTC is already Monday in Auckland: the next week there.
    expect(isoWeek(at('2026-11-29T20:00:00Z'), 'UTC')).toBe('2026-W48');
    expect(isoWeek(at('2026-11-29T20:00:00Z'), 'Pacific/Auckland')).toBe('2026-W49');
  });
});
