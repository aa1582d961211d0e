// PagerDuty's parts beyond posting an alert: what a triage action sends. Bundled on its own (a
// lazy-*.ts module) and loaded by triage when it needs it.
import { withoutControls } from '../../format/fit.js';
import { inertText, singleLine, truncate } from '../../format/text.js';
import type { TriageAction } from '../../vocabulary/triage.js';
import type { KindExtras, TriageNote } from '../kind.js';
import type { PagerDutyDestination } from './config.js';
import { inertForPagerDuty, PAGERDUTY_LIMITS, PAGERDUTY_SOURCE } from './format.js';
import type { PagerDutyAction, PagerDutyEvent, PagerDutyPost } from './payload.js';

/**
 * The events each triage action sends, in order. The Events API has no snooze: a snooze
 * acknowledges the alert while the relay holds its follow-ups back (a service's own
 * acknowledgement timeout may trigger it again sooner), and the first follow-up after it pages
 * again (format.ts). "Expected" resolves the alert. PagerDuty merges a trigger into an open alert,
 * acknowledged or not, without notifying anyone, so a reopen resolves it first: its trigger then
 * opens a new alert, which pages. A new action does not compile until it is given its events here.
 */
export const PAGERDUTY_TRIAGE_EVENTS: Readonly<Record<TriageAction, readonly [PagerDutyAction, ...PagerDutyAction[]]>> = {
  acknowledge: ['acknowledge'],
  snooze: ['acknowledge'],
  expected: ['resolve'],
  reopen: ['resolve', 'trigger'],
};

/** Sender text from a Triage link (the alert's title, its account) as PagerDuty shows it: one inert line. */
const inertLine = (text: string | undefined): string => inertForPagerDuty(singleLine(inertText(withoutControls(text ?? ''))));

/**
 * A reopen's trigger, which opens a new alert: it says what the opening said as far as the Triage
 * link knows it (the title, the account, the link itself) and who reopened it. The table holds no
 * alert text, so that is all there is.
 */
function reopenPayload(destination: PagerDutyDestination, note: TriageNote): Pick<PagerDutyEvent, 'payload' | 'links'> {
  const title = inertLine(note.title);
  const account = truncate(inertLine(note.account), PAGERDUTY_LIMITS.field);
  const details: Record<string, string> = {
    triage: truncate(inertForPagerDuty(note.line), PAGERDUTY_LIMITS.field),
    ...(account ? { account } : {}),
  };
  return {
    payload: {
      summary: truncate(title || inertForPagerDuty(note.line), PAGERDUTY_LIMITS.summary),
      source: PAGERDUTY_SOURCE,
      severity: destination.severity ?? 'warning',
      custom_details: details,
    },
    ...(note.link ? { links: [{ href: note.link, text: 'Triage' }] } : {}),
  };
}

export const extras: KindExtras<PagerDutyDestination> = {
  // The same key as the anomaly's alert: the action lands on that alert. A trigger needs a payload.
  triageNote(destination, note): PagerDutyPost {
    return {
      events: PAGERDUTY_TRIAGE_EVENTS[note.action].map((action) => ({
        event_action: action,
        dedup_key: note.anomalyId,
        ...(action === 'trigger' ? reopenPayload(destination, note) : {}),
      })),
    };
  },
};
