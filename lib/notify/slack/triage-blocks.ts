// The Slack app's triage blocks: loaded with the Web API client (lazy-app-post.ts) and by the triage
// function, never on the relay's cold path.

import type { ClickSubject } from '../../chat/service.js';
import { OPEN_ACTIONS, REOPEN, TRIAGE, type TriageAction } from '../../vocabulary/triage.js';
import type { SlackBlock, SlackButton } from './format.js';

/** Block ids the triage function finds again in a clicked message, to replace them. */
export const TRIAGE_STATUS_BLOCK = 'triage_status';
export const TRIAGE_ACTIONS_BLOCK = 'triage_actions';
/** Action ids of the app buttons: this prefix and the action. */
export const TRIAGE_ACTION_PREFIX = 'triage_';

const button = (action: TriageAction, value: string): SlackButton => ({
  type: 'button',
  text: { type: 'plain_text', text: TRIAGE[action].label },
  action_id: `${TRIAGE_ACTION_PREFIX}${action}`,
  value,
});

/**
 * A button's value: the anomaly's id, and what a cost event needs of the alert (Slack sends the
 * value back with the click, and only the app can write it). Well within Slack's 2,000 characters.
 */
export const buttonValue = (anomalyId: string, about?: ClickSubject): string =>
  about ? JSON.stringify({ a: anomalyId, d: about.destination, t: about.title, i: about.accountId }) : anomalyId;

/** A clicked button's value: JSON as buttonValue writes it, or the bare id of a message posted before. */
export function readButtonValue(value: string): { anomalyId: string; about?: ClickSubject } | undefined {
  if (!value.startsWith('{')) return { anomalyId: value };
  try {
    const read = JSON.parse(value) as Record<string, unknown>;
    const { a, d, t, i } = read;
    if (typeof a !== 'string' || a === '') return undefined;
    if (typeof d !== 'string' || typeof t !== 'string' || typeof i !== 'string') return { anomalyId: a };
    return { anomalyId: a, about: { destination: d, title: t, accountId: i } };
  } catch {
    return undefined;
  }
}

/** The app buttons (`value` from buttonValue): every action but reopening while the anomaly is open, "Reopen" once one was used. */
export function triageButtons(value: string, open: boolean): SlackBlock {
  return {
    type: 'actions',
    block_id: TRIAGE_ACTIONS_BLOCK,
    elements: (open ? OPEN_ACTIONS : [REOPEN]).map((action) => button(action, value)),
  };
}

/** A line of our own under the alert, already escaped: what was decided about it, and by whom. */
export const triageStatus = (text: string): SlackBlock => ({
  type: 'context',
  block_id: TRIAGE_STATUS_BLOCK,
  elements: [{ type: 'mrkdwn', text, verbatim: true }],
});
