// What the triage pages show (lib/triage/page.ts): the state line, the buttons offered, the
// history and the notice, for one anomaly and for a digest. Rendered as the handler renders them.

import { describe, expect, it } from 'vitest';
import { renderDigestPage, renderTriagePage } from '../../lib/triage/page.js';

const NOW = 1_800_000_000;

/** The element with this id's text, or the first match of a pattern's group. */
const stateOf = (html: string) => html.match(/<dd id="state">(.*?)<\/dd>/)?.[1];
/** The values of the page's buttons, in order. */
const buttons = (html: string) =>
  [...html.matchAll(/<button type="submit" name="action" value="([^"]*)">([^<]*)<\/button>/g)].map((m) => `${m[1]}=${m[2]}`);

describe('the triage page of one anomaly', () => {
  const view = (record: Parameters<typeof renderTriagePage>[0]['record'], notice?: string) =>
    renderTriagePage({
      title: 'EC2 spend up',
      account: 'Analytics (123456789012)',
      destination: 'finops',
      record,
      nowSeconds: NOW,
      ...(notice ? { notice } : {}),
    });

  it('untriaged: Open, the four actions side by side, no notice, no history yet', () => {
    const html = view(undefined);
    expect(stateOf(html)).toBe('Open');
    expect(html).toContain(
      '<p><button type="submit" name="action" value="acknowledge">Acknowledge</button><button type="submit" name="action" value="expected">Expected</button><button type="submit" name="action" value="snooze">Snooze 24 h</button><button type="submit" name="action" value="reopen">Reopen</button></p>',
    );
    expect(html).not.toContain('role="status"');
    expect(html).toContain('</h1>\n\n<dl>');
    expect(html).toContain('<h2>History</h2><p>No actions yet.</p>');
    // Without cost events the form asks only for a name.
    expect(html).toMatch(/<form method="post"><p><label for="name">[\s\S]*?<\/p>\n<p><button/);
  });

  it('a decision shows capitalised with who made it; the history lists each action in order', () => {
    const html = view(
      {
        triage: { state: 'acknowledged', by: 'Lee', at: NOW - 60 },
        audit: [
          { who: 'Dana', action: 'snooze', at: NOW - 120 },
          { who: 'Lee', action: 'acknowledge', at: NOW - 60 },
        ],
      },
      'Acknowledged by Lee',
    );
    expect(stateOf(html)).toBe('Acknowledged by Lee');
    expect(html).toContain('<p role="status"><strong>Acknowledged by Lee</strong></p>');
    expect(html).toContain(
      '<h2>History</h2><ul><li>2027-01-15T07:58:00Z: snooze by Dana</li><li>2027-01-15T07:59:00Z: acknowledge by Lee</li></ul>',
    );
    expect(stateOf(view({ triage: { state: 'expected' }, audit: [] }))).toBe('Expected');
  });
});

describe('the triage page of a digest', () => {
  const digest = (
    records: Array<Parameters<typeof renderDigestPage>[0]['anomalies'][number]['record']>,
    account = (i: number) => `12345678901${i}`,
  ) =>
    renderDigestPage({
      destination: 'storm',
      nowSeconds: NOW,
      anomalies: records.map((record, i) => ({ title: `Spend spike ${i}`, account: account(i), record })),
    });

  it('is titled by how many anomalies it names', () => {
    expect(digest([undefined])).toContain('<title>Triage: 1 anomaly of a digest</title>');
    expect(digest([undefined])).toContain('<h1>1 anomaly of a digest</h1>');
    expect(digest([undefined, undefined])).toContain('<h1>2 anomalies of a digest</h1>');
  });

  it('each anomaly shows its state and its own actions: three while open, Reopen once decided; the actions for all name how many are open', () => {
    const html = digest([undefined, { triage: { state: 'acknowledged', by: 'Dana', at: NOW - 60 }, audit: [] }], (i) =>
      i === 0 ? '' : '123456789011',
    );
    const items = html.match(/<ol>(.*)<\/ol>/s)?.[1] ?? '';
    // One item after the other, nothing between them, and buttons side by side.
    expect(items.split('</li>').map((part) => part.slice(0, 4))).toEqual(['<li>', '<li>', '']);
    expect(html.match(/<\/button>(?!<button|<\/p>|<\/li>)/)).toBeNull();
    expect(items).toContain('<span class="meta">unknown account · <span class="state">Open</span></span>');
    expect(items).toContain('<span class="meta">123456789011 · <span class="state">Acknowledged by Dana</span></span>');
    expect(buttons(html)).toEqual([
      'acknowledge:all=Acknowledge all open',
      'expected:all=All open expected',
      'snooze:all=Snooze all open 24 h',
      'acknowledge:0=Acknowledge',
      'expected:0=Expected',
      'snooze:0=Snooze 24 h',
      'reopen:1=Reopen',
    ]);
    expect(html).toContain('<p>Every anomaly still open (1 of 2): <button');
  });

  it('an anomaly whose link carries no title is named Anomaly', () => {
    const html = renderDigestPage({ destination: 'storm', nowSeconds: NOW, anomalies: [{ title: '', account: '1', record: undefined }] });
    expect(html).toContain('<li><strong>Anomaly</strong>');
  });
});
