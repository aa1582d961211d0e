import { isoSeconds } from '../format/alert.js';
import { escapeHtml } from '../format/html.js';
import { OPEN_ACTIONS, REOPEN, TRIAGE, TRIAGE_ACTIONS, type TriageAction } from '../vocabulary/triage.js';
import { effectiveState } from './state.js';
import type { TriageRecord } from './store.js';

// Everything the page shows passes through escapeHtml: alert text and typed names are untrusted.

/**
 * No script, no style from elsewhere, forms only to this page: the page needs none of it and
 * a token in the URL must not leak (no referrer) nor be cached with a state that changes.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

export interface TriagePageView {
  title: string;
  account: string;
  /** The destination's name in the relay configuration: whose triage this is (the operator's text, escaped like any). */
  destination: string;
  record: TriageRecord | undefined;
  nowSeconds: number;
  /** Shown after a POST: what was done. */
  notice?: string;
  /** The configuration writes "Expected" as a cost event: the form asks why. */
  noteField?: boolean;
}

function stateLine(view: Pick<TriagePageView, 'record' | 'nowSeconds'>): string {
  const state = effectiveState(view.record?.triage ?? { state: 'open' }, view.nowSeconds);
  const who = state.by ? ` by ${state.by}` : '';
  if (state.state === TRIAGE.snooze.state) return `Snoozed${who} until ${isoSeconds(state.until ?? 0)}`;
  return `${state.state[0]?.toUpperCase()}${state.state.slice(1)}${who}`;
}

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:1rem auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.5rem 1rem;margin:.25rem .25rem .25rem 0}input{font-size:1rem;padding:.4rem;width:100%;box-sizing:border-box}li{margin-bottom:1rem}.meta{color:#555}';

const button = (value: string, label: string) =>
  `<button type="submit" name="action" value="${escapeHtml(value)}">${escapeHtml(label)}</button>`;

const nameField =
  '<p><label for="name">Your name (optional)</label><br><input id="name" name="name" maxlength="80" autocomplete="name"></p>';

function page(title: string, main: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Triage: ${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head><body><main>
${main}
</main></body></html>`;
}

const noticeOf = (notice: string | undefined) => (notice ? `<p role="status"><strong>${escapeHtml(notice)}</strong></p>` : '');

/** A small page that works without JavaScript and reads on a phone. */
export function renderTriagePage(view: TriagePageView): string {
  const history = (view.record?.audit ?? [])
    .map((entry) => `<li>${escapeHtml(isoSeconds(entry.at))}: ${escapeHtml(entry.action)} by ${escapeHtml(entry.who)}</li>`)
    .join('');
  return page(
    view.title,
    `<h1>${escapeHtml(view.title)}</h1>
${noticeOf(view.notice)}
<dl><dt>Account</dt><dd>${escapeHtml(view.account)}</dd><dt>Destination</dt><dd id="destination">${escapeHtml(view.destination)}</dd><dt>State</dt><dd id="state">${escapeHtml(stateLine(view))}</dd></dl>
<form method="post">${nameField}${view.noteField ? noteField : ''}
<p>${TRIAGE_ACTIONS.map((action) => button(action, TRIAGE[action].label)).join('')}</p></form>
<h2>History</h2>${history ? `<ul>${history}</ul>` : '<p>No actions yet.</p>'}`,
  );
}

/** Why it is expected, in a few words, for the cost event "Expected" writes on the platform's charts. */
const noteField =
  '<p><label for="note">Why it is expected (optional; shown on the cost platform\'s charts)</label><br><textarea id="note" name="note" maxlength="500" rows="2" cols="40"></textarea></p>';

/** One anomaly of a digest's page: what its link carries, and its record now. */
export interface DigestPageItem {
  title: string;
  account: string;
  record: TriageRecord | undefined;
}

export interface DigestPageView {
  destination: string;
  anomalies: readonly DigestPageItem[];
  nowSeconds: number;
  notice?: string;
}

/** What a digest page's button posts as `action`: the action, and which anomaly (its place on the page) or `all`. */
export const digestActionValue = (action: TriageAction, which: number | 'all'): string => `${action}:${which}`;

/** How a button for every open anomaly is labelled. */
const ALL_LABELS: Readonly<Partial<Record<TriageAction, string>>> = {
  acknowledge: 'Acknowledge all open',
  expected: 'All open expected',
  snooze: 'Snooze all open 24 h',
};

/**
 * The page of a digest: each anomaly it names with its state and its own actions (the three while
 * it is open, "Reopen" once one was used, as an app's buttons), and the actions for every one still
 * open at once. One form, so that one name goes with whichever button is pressed.
 */
export function renderDigestPage(view: DigestPageView): string {
  const isOpen = (item: DigestPageItem) => effectiveState(item.record?.triage ?? { state: 'open' }, view.nowSeconds).state === 'open';
  const open = view.anomalies.filter(isOpen).length;
  const count = view.anomalies.length;
  const title = `${count} ${count === 1 ? 'anomaly' : 'anomalies'} of a digest`;
  const items = view.anomalies
    .map((item, i) => {
      const actions = isOpen(item) ? OPEN_ACTIONS : [REOPEN];
      return `<li><strong>${escapeHtml(item.title || 'Anomaly')}</strong><br><span class="meta">${escapeHtml(item.account || 'unknown account')} · <span class="state">${escapeHtml(stateLine({ record: item.record, nowSeconds: view.nowSeconds }))}</span></span><br>${actions.map((action) => button(digestActionValue(action, i), TRIAGE[action].label)).join('')}</li>`;
    })
    .join('');
  const all =
    open > 0
      ? `<p>Every anomaly still open (${open} of ${count}): ${OPEN_ACTIONS.map((action) => button(digestActionValue(action, 'all'), ALL_LABELS[action] ?? TRIAGE[action].label)).join('')}</p>`
      : `<p>No anomaly of this digest is open.</p>`;
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
${noticeOf(view.notice)}
<dl><dt>Destination</dt><dd id="destination">${escapeHtml(view.destination)}</dd></dl>
<form method="post">${nameField}
${all}
<ol>${items}</ol></form>`,
  );
}
