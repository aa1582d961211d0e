// What every kind's weekly summary shows (lib/summary builds the week; each kind lays it out in
// its own service's form and limits, lib/notify/<kind>/summary.ts). Texts here are unescaped:
// sender text (titles, account names) and typed names are made inert, and each kind escapes
// the whole line for its own syntax on top.
import { doneLabel, TRIAGE_STATES, type TriageStateName } from '../vocabulary/triage.js';
import { withoutControls } from './fit.js';
import { inertText, singleLine, truncate } from './text.js';
import { zonedFormat } from './time.js';
import { triageName } from './triage.js';

/** One anomaly as a summary names it; its texts came from a sender or a person and are shown inert. */
export interface SummaryAnomaly {
  /** Its record id (`anomaly#…`): the `anomaly.id` its alerts carried where they are data (EventBridge, webhook). */
  id: string;
  title: string;
  /** "Name (id)", or whichever of the two is known. */
  account: string;
  /** The cloud account's id as the platform sent it, and its name where it sent one: for layouts that are data. */
  accountId: string;
  accountName?: string | undefined;
  /** Epoch seconds. */
  firstSeen: number;
  /** Follow-ups delivered after its opening. */
  updates: number;
  /** Its state now: a snooze that has ended is open again. */
  state: TriageStateName;
  /** Who changed its state last, and when (epoch seconds); a snooze's end. */
  by?: string | undefined;
  at?: number | undefined;
  until?: number | undefined;
  /** Its Triage link, where the destination's messages carry links and the anomaly is open. */
  link?: string | undefined;
}

/** One destination's week: what each kind's summary layout receives. */
export interface SummaryWeek {
  /** The destination's name in the relay configuration. */
  destination: string;
  /** Epoch seconds: anomalies first seen after `from` until `to` (the run's time; a scheduled week starts where the last one ended). */
  from: number;
  to: number;
  /** Epoch seconds: when the summary was made; an open anomaly's age is told up to then, not up to `to`. */
  asOf: number;
  /** The destination's IANA time zone: every time is shown in it. */
  timeZone: string;
  counts: Readonly<Record<TriageStateName, number>>;
  /** Open ones first, the longest open first; then the others. */
  anomalies: readonly SummaryAnomaly[];
}

/** The states as a summary counts them: open first, as its lines come. */
const SHOWN_STATES: readonly TriageStateName[] = ['open', ...TRIAGE_STATES.filter((state) => state !== 'open')];

/** How long a summary line's sender texts may be; the rest of the line is ours. */
const SHOWN = { title: 120, account: 60 } as const;

const inert = (text: string, max: number) => truncate(singleLine(inertText(withoutControls(text))), max);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const timeIn = zonedFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
});
const dateIn = zonedFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });

/** `24 Nov 10:00 CET`, in the destination's time zone. */
export function summaryTime(epochSeconds: number, timeZone: string): string {
  return timeIn(timeZone)
    .format(epochSeconds * 1000)
    .replace(',', '');
}

const summaryDate = (epochSeconds: number, timeZone: string) => dateIn(timeZone).format(epochSeconds * 1000);

/** `3 d 4 h`, `5 h 10 min`, `40 min`: how long an anomaly has been open. */
export function summaryAge(seconds: number): string {
  const minutes = Math.max(0, Math.floor(seconds / 60));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  if (days > 0) return hours > 0 ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return minutes % 60 > 0 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${minutes} min`;
}

/** The title of every summary: whose week it is. */
export const summaryHeading = (week: SummaryWeek): string => `Weekly summary · ${inert(week.destination, 80)}`;

/** The week's counts by state: `12 anomalies first seen 18 Nov – 25 Nov 2026: 5 open, 4 acknowledged, 2 expected, 1 snoozed`. */
export function summaryCounts(week: SummaryWeek): string {
  const total = week.anomalies.length;
  const states = SHOWN_STATES.map((state) => `${week.counts[state]} ${state}`).join(', ');
  return `${plural(total, 'anomaly', 'anomalies')} first seen ${summaryDate(week.from, week.timeZone)} – ${summaryDate(week.to, week.timeZone)}: ${states}`;
}

/** A week without anomalies, in one line. */
export const quietLine = (week: SummaryWeek): string =>
  `Weekly summary · ${inert(week.destination, 80)}: no anomalies in the 7 days to ${summaryDate(week.to, week.timeZone)}.`;

/** The open anomalies come first, then the ones someone triaged. */
export const isOpen = (anomaly: SummaryAnomaly): boolean => anomaly.state === 'open';

/**
 * The first `shown` anomalies of a week as every layout shows them: the open ones, then the
 * triaged ones, each made by `line` from its index; and how many are left out.
 */
export function summaryParts<Line>(
  week: SummaryWeek,
  shown: number,
  line: (index: number) => Line,
): { open: Line[]; triaged: Line[]; hidden: number } {
  const open: Line[] = [];
  const triaged: Line[] = [];
  for (let i = 0; i < shown; i++) (isOpen(week.anomalies[i]!) ? open : triaged).push(line(i));
  return { open, triaged, hidden: week.anomalies.length - shown };
}

/**
 * One anomaly's line, inert and unescaped: title and account, then for an open one its age and
 * updates, for any other who changed its state and when (a snooze also until when).
 */
export function summaryLine(anomaly: SummaryAnomaly, week: Pick<SummaryWeek, 'asOf' | 'timeZone'>): string {
  const head = `${inert(anomaly.title, SHOWN.title) || 'Anomaly'} · ${inert(anomaly.account, SHOWN.account) || 'unknown account'}`;
  if (isOpen(anomaly)) {
    const updates = anomaly.updates > 0 ? plural(anomaly.updates, 'update') : 'no updates';
    return `${head} · open ${summaryAge(week.asOf - anomaly.firstSeen)} · ${updates}`;
  }
  const when = anomaly.at === undefined ? '' : `, ${summaryTime(anomaly.at, week.timeZone)}`;
  const until = anomaly.state === 'snoozed' && anomaly.until !== undefined ? ` (until ${summaryTime(anomaly.until, week.timeZone)})` : '';
  return `${head} · ${doneLabel(anomaly.state)} by ${triageName(anomaly.by ?? '')}${when}${until}`;
}

/** What a summary cut short says at its end, so that no anomaly is left out silently. */
export const notShownLine = (hidden: number): string => `… and ${hidden} more not shown`;

/**
 * The most lines, of `count`, that a layout fits within its service's limits: `fits(n)` builds
 * the message with the first `n` lines (and the note on the rest) and measures it. A message
 * with fewer lines is never larger, so the search halves.
 */
export function mostThatFit(count: number, fits: (shown: number) => boolean): number {
  if (fits(count)) return count;
  let low = 0;
  let high = count;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return low;
}
