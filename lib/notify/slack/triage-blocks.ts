// The Slack app's triage blocks: loaded with the Web API client (lazy-app-post.ts) and by the triage
// function, never on the relay's cold path.
import { OPEN_ACTIONS, REOPEN, TRIAGE, type TriageAction } from '../../vocabulary/triage.js';
import type { SlackBlock, SlackButton } from './format.js';

/** Block ids the triage function finds again in a clicked message, to replace them. */
export const TRIAGE_STATUS_BLOCK = 'triage_status';
export const TRIAGE_ACTIONS_BLOCK = 'triage_actions';
/** Action ids of the app buttons: this prefix and the action. */
export const TRIAGE_ACTION_PREFIX = 'triage_';

const button = (action: TriageAction, anomalyId: string): SlackButton => ({
  type: 'button',
  text: { type: 'plain_text', text: TRIAGE[action].label },
  action_id: `${TRIAGE_ACTION_PREFIX}${action}`,
  value: anomalyId,
});

/** The app buttons: every action but reopening while the anomaly is open, "Reopen" once one was used. */
export function triageButtons(anomalyId: string, open: boolean): SlackBlock {
  return {
    type: 'actions',
    block_id: TRIAGE_ACTIONS_BLOCK,
    elements: (open ? OPEN_ACTIONS : [REOPEN]).map((action) => button(action, anomalyId)),
  };
}

/** A line of our own under the alert, already escaped: what was decided about it, and by whom. */
export const triageStatus = (text: string): SlackBlock => ({
  type: 'context',
  block_id: TRIAGE_STATUS_BLOCK,
  elements: [{ type: 'mrkdwn', text, verbatim: true }],
});
