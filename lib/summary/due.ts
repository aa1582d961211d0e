// When a destination's weekly summary is due, in its own time zone, with nothing but Intl: the
// runtime's time zone data decides offsets and daylight saving time.
import { zonedFormat } from '../format/time.js';
import { WEEKDAYS, type Weekday } from '../notify/options.js';

/** A destination's `summary` option, as the configuration reads it. */
export interface SummarySchedule {
  weekday: Weekday;
  hour: number;
  timeZone: string;
}

/**
 * How long after its hour a summary is still posted. The function runs every hour, so a summary
 * that could not be posted at its hour (a chat that refused, a run that failed) is tried again
 * by the next runs within this time; later than that it waits for the next week.
 */
export const CATCH_UP_HOURS = 6;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface Wall {
  year: number;
  month: number;
  day: number;
  /** 0 for Monday, as WEEKDAYS counts. */
  weekday: number;
  hour: number;
  minute: number;
}

const formatterFor = zonedFormat('en-US', {
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  weekday: 'long',
  hour: 'numeric',
  minute: 'numeric',
  hourCycle: 'h23',
});

/** The wall clock in `timeZone` at `epochMs`. */
function wallClock(epochMs: number, timeZone: string): Wall {
  const parts = Object.fromEntries(
    formatterFor(timeZone)
      .formatToParts(epochMs)
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts['year']),
    month: Number(parts['month']),
    day: Number(parts['day']),
    weekday: WEEKDAYS.indexOf(String(parts['weekday']).toLowerCase() as Weekday),
    hour: Number(parts['hour']),
    minute: Number(parts['minute']),
  };
}

/** How far the zone's clock is ahead of UTC at `epochMs`. */
const offsetAt = (epochMs: number, timeZone: string): number => {
  const wall = wallClock(epochMs, timeZone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  return asUtc - Math.floor(epochMs / 60_000) * 60_000;
};

/**
 * The instant the zone's clock shows `hour`:00 on a date. Of an hour that happens twice (the
 * clocks go back) the first; an hour that never happens (the clocks go forward, by an hour or by
 * half of one) is taken to be the moment the clocks jump, as the wall clock reads a later time from then.
 */
export function instantOf(date: { year: number; month: number; day: number }, hour: number, timeZone: string): number {
  const guess = Date.UTC(date.year, date.month - 1, date.day, hour);
  // The instant lies within a zone's largest offsets of the wall time (UTC-12 to UTC+14): every
  // offset the zone has in that span is a candidate. Sampling only near the guess missed a change
  // of the clocks that lay between it and the instant, as in Auckland and Chatham.
  const offsets = new Set<number>();
  for (let h = -15; h <= 13; h++) offsets.add(offsetAt(guess + h * HOUR_MS, timeZone));
  const matching = [...offsets]
    .map((offset) => guess - offset)
    .filter((instant) => {
      const wall = wallClock(instant, timeZone);
      return wall.year === date.year && wall.month === date.month && wall.day === date.day && wall.hour === hour && wall.minute === 0;
    });
  if (matching.length > 0) return Math.min(...matching);
  // In the gap: the first minute whose wall clock reads the hour or later is the jump (Chatham's
  // clocks jump from 02:45 to 03:45, Lord Howe's by half an hour).
  const wallAt = (instant: number) => instant + offsetAt(instant, timeZone);
  let early = guess - Math.max(...offsets);
  let late = guess - Math.min(...offsets);
  while (late - early > 60_000) {
    const middle = early + Math.floor((late - early) / 120_000) * 60_000;
    if (wallAt(middle) >= guess) late = middle;
    else early = middle;
  }
  return late;
}

/** The latest time at or before `nowMs` that the schedule names: its weekday and hour on the zone's clock. */
export function latestSlot(nowMs: number, schedule: SummarySchedule): number {
  const wall = wallClock(nowMs, schedule.timeZone);
  const target = WEEKDAYS.indexOf(schedule.weekday);
  for (const extraWeek of [0, 7]) {
    const back = ((wall.weekday - target + 7) % 7) + extraWeek;
    // Calendar arithmetic on the zone's date, in UTC, where every day has 24 hours.
    const day = new Date(Date.UTC(wall.year, wall.month - 1, wall.day - back));
    const slot = instantOf(
      { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() },
      schedule.hour,
      schedule.timeZone,
    );
    if (slot <= nowMs) return slot;
  }
  // Unreachable: a week earlier than a slot still to come is past.
  throw new Error('no past slot');
}

/** The ISO week (`2026-W48`) of the zone's date at `epochMs`: the key of the one summary a week. */
export function isoWeek(epochMs: number, timeZone: string): string {
  const wall = wallClock(epochMs, timeZone);
  const date = Date.UTC(wall.year, wall.month - 1, wall.day);
  // The ISO week belongs to the year of its Thursday.
  const thursday = new Date(date + (3 - wall.weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** A summary due now: its week's key, the slot it is due from, and the slot and week before it. */
export interface DueSummary {
  due: true;
  week: string;
  /** Epoch ms: the hour it is due from; the run that posts it may come later, within its catch-up time. */
  slot: number;
  /**
   * Epoch ms: the slot a week earlier (7 days ± an hour of clock change). The week it sums up
   * starts where the previous week's summary ended, or here when that is not known.
   */
  previousSlot: number;
  /** The previous week's key (`isoWeek` of `previousSlot`), whose item tells where its summary ended. */
  previousWeek: string;
  /** Epoch ms: the end of its catch-up time, after which no run posts this week's summary. */
  closes: number;
}

/** Whether the schedule's summary is due at `nowMs`, and the week it belongs to (its slot's week). */
export function dueWeek(nowMs: number, schedule: SummarySchedule): DueSummary | { due: false } {
  const slot = latestSlot(nowMs, schedule);
  const closes = slot + CATCH_UP_HOURS * HOUR_MS;
  if (nowMs >= closes) return { due: false };
  const previousSlot = latestSlot(slot - 1, schedule);
  return {
    due: true,
    week: isoWeek(slot, schedule.timeZone),
    slot,
    previousSlot,
    previousWeek: isoWeek(previousSlot, schedule.timeZone),
    closes,
  };
}
