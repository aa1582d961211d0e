import { doneLabel, type TriageAction, type TriageStateName } from '../vocabulary/triage.js';
import { isoSeconds } from './alert.js';
import { withoutControls } from './fit.js';
import { inertText, singleLine, truncate } from './text.js';

/** The longest name a triage line shows; the page takes no more either. */
export const TRIAGE_NAME_MAX = 80;

/** A typed name as every chat shows it: one line, inert like sender text, still unescaped for the chat's own syntax. */
export const triageName = (name: string): string => truncate(singleLine(inertText(withoutControls(name))), TRIAGE_NAME_MAX) || 'someone';

/**
 * "Acknowledged by Dana at 2026-…Z", for an action or the state it led to. `who` is used as
 * given: callers pass `triageName` of a typed name, or a mention they build themselves.
 */
export const triageLine = (what: TriageAction | TriageStateName, who: string, atSeconds: number): string =>
  `${doneLabel(what)} by ${who} at ${isoSeconds(atSeconds)}`;
