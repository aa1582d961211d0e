import { isoSeconds } from '../format/alert.js';
import { escapeHtml } from '../format/html.js';
import { TRIAGE, TRIAGE_ACTIONS } from '../vocabulary/triage.js';
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
  record: TriageRecord | undefined;
  nowSeconds: number;
  /** Shown after a POST: what was done. */
  notice?: string;
}

function stateLine(view: TriagePageView): string {
  const state = effectiveState(view.record?.triage ?? { state: 'open' }, view.nowSeconds);
  const who = state.by ? ` by ${state.by}` : '';
  if (state.state === TRIAGE.snooze.state) return `Snoozed${who} until ${isoSeconds(state.until ?? 0)}`;
  return `${state.state[0]?.toUpperCase()}${state.state.slice(1)}${who}`;
}

/** A small page that works without JavaScript and reads on a phone. */
export function renderTriagePage(view: TriagePageView): string {
  const history = (view.record?.audit ?? [])
    .map((entry) => `<li>${escapeHtml(isoSeconds(entry.at))}: ${escapeHtml(entry.action)} by ${escapeHtml(entry.who)}</li>`)
    .join('');
  const button = (action: string, label: string) => `<button type="submit" name="action" value="${action}">${label}</button>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Triage: ${escapeHtml(view.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:1rem auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.5rem 1rem;margin:.25rem .25rem .25rem 0}input{font-size:1rem;padding:.4rem;width:100%;box-sizing:border-box}</style>
</head><body><main>
<h1>${escapeHtml(view.title)}</h1>
${view.notice ? `<p role="status"><strong>${escapeHtml(view.notice)}</strong></p>` : ''}
<dl><dt>Account</dt><dd>${escapeHtml(view.account)}</dd><dt>State</dt><dd id="state">${escapeHtml(stateLine(view))}</dd></dl>
<form method="post"><p><label for="name">Your name (optional)</label><br><input id="name" name="name" maxlength="80" autocomplete="name"></p>
<p>${TRIAGE_ACTIONS.map((action) => button(action, TRIAGE[action].label)).join('')}</p></form>
<h2>History</h2>${history ? `<ul>${history}</ul>` : '<p>No actions yet.</p>'}
</main></body></html>`;
}
