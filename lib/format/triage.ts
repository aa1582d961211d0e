import { isoSeconds } from './alert.js';
import { withoutControls } from './fit.js';
import { inertText, singleLine, truncate } from './text.js';

/** What each triage action did, as messages, follow-ups and the page say it. */
const DONE = {
  acknowledge: 'Acknowledged',
  acknowledged: 'Acknowledged',
  expected: 'Marked expected',
  snooze: 'Snoozed for 24 h',
  snoozed: 'Snoozed for 24 h',
  reopen: 'Reopened',
  open: 'Reopened',
} as const;

/** The longest name a triage line shows; the page takes no more either. */
export const TRIAGE_NAME_MAX = 80;

/** A typed name as every chat shows it: one line, inert like sender text, still unescaped for the chat's own syntax. */
export const triageName = (name: string): string => truncate(singleLine(inertText(withoutControls(name))), TRIAGE_NAME_MAX) || 'someone';

/**
 * "Acknowledged by Dana at 2026-…Z", for an action or the state it led to. `who` is used as
 * given: callers pass `triageName` of a typed name, or a mention they build themselves.
 */
export const triageLine = (what: keyof typeof DONE, who: string, atSeconds: number): string =>
  `${DONE[what]} by ${who} at ${isoSeconds(atSeconds)}`;
