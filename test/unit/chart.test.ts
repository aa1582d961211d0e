import { describe, expect, it } from 'vitest';
import { renderNotice, renderTrend } from '../../lib/chart/lazy-chart-render.js';
import { CHART_HEIGHT, CHART_SCALE, CHART_WIDTH, type DayCost, money, trendSvg } from '../../lib/chart/svg.js';
import { decodePng, type Image } from '../helpers/png.js';

// The picture a message carries: drawn from a series, checked as a person would look at it.

const days = (count: number, cost: (i: number) => number | undefined, last = '2026-11-21'): DayCost[] =>
  Array.from({ length: count }, (_, i) => {
    const day = new Date(Date.parse(`${last}T00:00:00Z`) - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    return { day, cost: cost(i) };
  });

/** The marked day's orange (#d9480f), within antialiasing. */
const isMarked = ([r, g, b]: readonly [number, number, number, number]) => r > 190 && g > 50 && g < 110 && b < 50;
/** The bars' blue (#4c6ef5). */
const isBar = ([r, g, b]: readonly [number, number, number, number]) => b > 200 && r < 110 && g > 90 && g < 130;

/** Columns (in image pixels) where a colour appears, and how tall it stands there. */
function columns(image: Image, colour: (rgba: readonly [number, number, number, number]) => boolean): Map<number, number> {
  const found = new Map<number, number>();
  for (let x = 0; x < image.width; x++) {
    let count = 0;
    for (let y = 0; y < image.height; y++) if (colour(image.pixel(x, y))) count++;
    if (count > 0) found.set(x, count);
  }
  return found;
}

const highest = (found: Map<number, number>) => Math.max(...found.values());
const centre = (found: Map<number, number>) => {
  const xs = [...found.entries()].filter(([, n]) => n > 20).map(([x]) => x);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
};

describe('the cost-trend picture', () => {
  it('is a PNG of at least 600 x 200 pixels and under 200 KB, the marked day in its own colour', async () => {
    const series = days(30, (i) => 100 + (i % 7) * 5);
    const image = decodePng(
      await renderTrend({ title: 'Production payer (123456789012)', days: series, marked: '2026-11-21', currency: 'USD' }),
    );
    expect([image.width, image.height]).toEqual([CHART_WIDTH * CHART_SCALE, CHART_HEIGHT * CHART_SCALE]);
    expect(image.width).toBeGreaterThanOrEqual(600);
    expect(image.height).toBeGreaterThanOrEqual(200);
    const png = await renderTrend({ title: 'x', days: series, marked: '2026-11-21', currency: 'USD' });
    expect(png.length).toBeLessThan(200 * 1024);
    expect(columns(image, isMarked).size).toBeGreaterThan(0);
  });

  it('shows a spike where it is: the tallest bar is the marked day’s, and it moves with the day', async () => {
    const spikeOn = (i: number) => days(30, (d) => (d === i ? 900 : 100));
    const early = decodePng(await renderTrend({ title: 'a', days: spikeOn(9), marked: spikeOn(9)[9]?.day ?? '', currency: 'USD' }));
    const late = decodePng(await renderTrend({ title: 'a', days: spikeOn(24), marked: spikeOn(24)[24]?.day ?? '', currency: 'USD' }));
    for (const image of [early, late]) {
      // The marked bar stands about nine times as tall as the others.
      const marked = highest(columns(image, isMarked));
      const others = highest(columns(image, isBar));
      expect(marked / others).toBeGreaterThan(6);
    }
    // The spike on day 25 is far right of the spike on day 10.
    expect(centre(columns(late, isMarked)) - centre(columns(early, isMarked))).toBeGreaterThan(CHART_WIDTH * CHART_SCALE * 0.35);
  });

  it('two series give two pictures; the same series the same picture', async () => {
    const a = await renderTrend({ title: 'a', days: days(30, (i) => 100 + i), marked: '2026-11-21', currency: 'USD' });
    const b = await renderTrend({ title: 'a', days: days(30, (i) => 200 - i), marked: '2026-11-21', currency: 'USD' });
    const again = await renderTrend({ title: 'a', days: days(30, (i) => 100 + i), marked: '2026-11-21', currency: 'USD' });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    expect(Buffer.from(a).equals(Buffer.from(again))).toBe(true);
  });

  it('draws days without figures as gaps, zeros and huge figures, and credits below the line', async () => {
    for (const series of [
      days(30, () => undefined),
      days(30, () => 0),
      days(30, (i) => (i === 29 ? 9.5e12 : 1)),
      days(30, (i) => (i % 2 ? -40 : 120)),
      days(3, (i) => i),
    ]) {
      const image = decodePng(await renderTrend({ title: 'edge', days: series, marked: series.at(-1)?.day ?? '', currency: 'EUR' }));
      expect(image.width).toBe(CHART_WIDTH * CHART_SCALE);
    }
    const svg = trendSvg({ title: 't', days: days(30, (i) => (i % 2 ? -40 : 120)), marked: '2026-11-21', currency: 'EUR' });
    expect(svg).toContain('-€40');
  });

  it('shows an outside title as text only: markup, quotes and controls stay inside the picture as characters', async () => {
    const title = '</text><script>alert(1)</script>"\u202e\u0007 <!channel> & more '.repeat(5);
    const svg = trendSvg({ title, days: days(30, () => 1), marked: '2026-11-21', currency: 'USD' });
    expect(svg).not.toContain('<script>');
    expect(svg).not.toContain('\u202e');
    expect(svg.match(/<text/g)?.length).toBe(svg.match(/<\/text>/g)?.length);
    const image = decodePng(await renderTrend({ title, days: days(30, () => 1), marked: '2026-11-21', currency: 'USD' }));
    expect(image.width).toBe(CHART_WIDTH * CHART_SCALE);
  });

  it('labels the axis in the currency the platform reports, compactly', () => {
    expect(money(1_250, 'USD')).toBe('$1.3k');
    expect(money(850, 'EUR')).toBe('€850');
    expect(money(12_000_000, 'GBP')).toBe('£12M');
    expect(money(-40, 'USD')).toBe('-$40');
    expect(money(1500, 'CHF')).toBe('1.5k CHF');
    expect(money(3, 'not a code')).toBe('$3');
  });

  it('says in words, in a PNG too, when there is nothing to draw', async () => {
    const png = await renderNotice('Production payer', 'The cost platform did not answer in time.');
    const image = decodePng(png);
    expect(image.width).toBe(CHART_WIDTH * CHART_SCALE);
    expect(png.length).toBeLessThan(200 * 1024);
  });
});
