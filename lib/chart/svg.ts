import { withoutControls } from '../format/fit.js';
import { escapeHtml } from '../format/html.js';
import { singleLine, truncate } from '../format/text.js';

/** One day of an account's cost; `cost` undefined where the platform has no figure for it. */
export interface DayCost {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  cost: number | undefined;
}

/** What a picture shows: whose cost, over which days, which one the alert is about, in which currency. */
export interface TrendPicture {
  /** Who the account is, as messages name it: an outside string, shown as text. */
  title: string;
  days: readonly DayCost[];
  /** The anomaly's day (`YYYY-MM-DD`), marked. */
  marked: string;
  /** ISO 4217 code, as the platform reports it (`USD`). */
  currency: string;
}

/**
 * The picture's size in points, small so that its labels stay readable where a phone's chat
 * shrinks it to the screen's width; it is drawn at CHART_SCALE times that, for dense screens.
 */
export const CHART_WIDTH = 480;
export const CHART_HEIGHT = 220;
export const CHART_SCALE = 2.5;
/** The labels' size in points: about a thirty-fifth of the width, so a phone shows them at a readable size. */
const LABEL = 14;

const FONT = 'Inter';
const COLOURS = {
  background: '#ffffff',
  bar: '#4c6ef5',
  marked: '#d9480f',
  axis: '#adb5bd',
  grid: '#e9ecef',
  text: '#343a40',
  muted: '#6c757d',
};
const PLOT = { left: 58, right: 10, top: 60, bottom: 34 };
const TITLE_CHARS = 42;

const SYMBOLS: Readonly<Record<string, string>> = { USD: '$', EUR: '€', GBP: '£', JPY: '¥', ILS: '₪', INR: '₹', CAD: 'CA$', AUD: 'A$' };

/** `$1.2k`, `€850`, `12 345 CHF`: short enough for an axis, in the currency the platform reports. */
export function money(value: number, currency: string): string {
  const code = /^[A-Z]{3}$/.test(currency) ? currency : 'USD';
  const abs = Math.abs(value);
  const [scaled, suffix] = abs >= 1e9 ? [abs / 1e9, 'B'] : abs >= 1e6 ? [abs / 1e6, 'M'] : abs >= 1e3 ? [abs / 1e3, 'k'] : [abs, ''];
  const digits = scaled >= 100 || suffix === '' ? (scaled >= 10 || Number.isInteger(scaled) ? 0 : 1) : 1;
  const number = `${value < 0 ? '-' : ''}${scaled.toFixed(digits).replace(/\.0$/, '')}${suffix}`;
  const symbol = SYMBOLS[code];
  return symbol ? `${number.startsWith('-') ? '-' : ''}${symbol}${number.replace(/^-/, '')}` : `${number} ${code}`;
}

/** 1, 2 or 5 times a power of ten: a step that gives round axis labels. */
function niceStep(span: number, ticks: number): number {
  const raw = span / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

const dayLabel = (day: string): string => {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? day : date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
};

/** Text an outside party wrote (an account's name), for the picture: one line, no controls, cut, escaped. */
const shown = (text: string, max: number): string => escapeHtml(truncate(singleLine(withoutControls(text)), max));

/**
 * The account's daily cost as bars, the anomaly's day in another colour and named under its bar,
 * a zero line and round gridlines labelled in the currency. Days without a figure stay empty; a
 * credit (a negative cost) goes below the zero line.
 */
export function trendSvg(picture: TrendPicture): string {
  const { days, marked, currency } = picture;
  const width = CHART_WIDTH;
  const height = CHART_HEIGHT;
  const plotWidth = width - PLOT.left - PLOT.right;
  const plotHeight = height - PLOT.top - PLOT.bottom;
  const costs = days.map((d) => d.cost).filter((c): c is number => c !== undefined && Number.isFinite(c));
  const high = Math.max(0, ...costs);
  const low = Math.min(0, ...costs);
  const step = niceStep(high - low || 1, 4);
  const top = Math.ceil(high / step) * step || step;
  const bottom = Math.floor(low / step) * step;
  const y = (value: number) => PLOT.top + ((top - value) / (top - bottom)) * plotHeight;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.72);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
    `<rect width="${width}" height="${height}" fill="${COLOURS.background}"/>`,
    `<text x="10" y="24" font-size="18" font-weight="600" fill="${COLOURS.text}">${shown(picture.title, TITLE_CHARS)}</text>`,
    `<text x="10" y="42" font-size="13" fill="${COLOURS.muted}">Daily cost, ${days.length} days to ${escapeHtml(dayLabel(days.at(-1)?.day ?? marked))}</text>`,
  ];
  for (let value = bottom; value <= top + step / 2; value += step) {
    const at = y(value).toFixed(1);
    parts.push(
      `<line x1="${PLOT.left}" y1="${at}" x2="${width - PLOT.right}" y2="${at}" stroke="${value === 0 ? COLOURS.axis : COLOURS.grid}" stroke-width="${value === 0 ? 1.5 : 1}"/>`,
      `<text x="${PLOT.left - 6}" y="${(y(value) + 5).toFixed(1)}" font-size="${LABEL}" text-anchor="end" fill="${COLOURS.muted}">${escapeHtml(money(value, currency))}</text>`,
    );
  }
  for (const [i, { day, cost }] of days.entries()) {
    if (cost === undefined || !Number.isFinite(cost)) continue;
    const x = PLOT.left + i * slot + (slot - barWidth) / 2;
    const [from, to] = cost >= 0 ? [y(cost), y(0)] : [y(0), y(cost)];
    const isMarked = day === marked;
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${from.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${Math.max(0.5, to - from).toFixed(1)}" rx="1.5" fill="${isMarked ? COLOURS.marked : COLOURS.bar}"/>`,
    );
  }
  const markedAt = days.findIndex((d) => d.day === marked);
  if (markedAt >= 0) {
    const x = PLOT.left + markedAt * slot + slot / 2;
    const anchor = markedAt > days.length - 6 ? 'end' : markedAt < 5 ? 'start' : 'middle';
    const cost = days[markedAt]?.cost;
    const label = `${dayLabel(marked)}${cost !== undefined ? `: ${money(cost, currency)}` : ''}`;
    parts.push(
      `<text x="${x.toFixed(1)}" y="${height - 10}" font-size="${LABEL}" font-weight="600" text-anchor="${anchor}" fill="${COLOURS.marked}">${escapeHtml(label)}</text>`,
    );
  }
  const first = days[0]?.day;
  if (first && markedAt > 12)
    parts.push(
      `<text x="${PLOT.left}" y="${height - 10}" font-size="${LABEL}" fill="${COLOURS.muted}">${escapeHtml(dayLabel(first))}</text>`,
    );
  parts.push('</svg>');
  return parts.join('');
}

/** Words in lines of at most `max` characters (a word longer than that has a line of its own). */
function wrapped(text: string, max: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= max) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** A picture that says in words why there is no chart: no data, or a platform that did not answer in time. */
export function noticeSvg(title: string, notice: string): string {
  const lines = wrapped(notice, 44).slice(0, 4);
  const firstLine = CHART_HEIGHT / 2 + 24 - ((lines.length - 1) * 20) / 2;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" font-family="${FONT}">`,
    `<rect width="${CHART_WIDTH}" height="${CHART_HEIGHT}" fill="${COLOURS.background}"/>`,
    `<text x="10" y="24" font-size="18" font-weight="600" fill="${COLOURS.text}">${shown(title, TITLE_CHARS)}</text>`,
    `<rect x="10" y="48" width="${CHART_WIDTH - 20}" height="${CHART_HEIGHT - 60}" rx="8" fill="#f8f9fa" stroke="${COLOURS.grid}"/>`,
    ...lines.map(
      (line, i) =>
        `<text x="${CHART_WIDTH / 2}" y="${firstLine + i * 20}" font-size="15" text-anchor="middle" fill="${COLOURS.muted}">${escapeHtml(line)}</text>`,
    ),
    '</svg>',
  ].join('');
}
