// PagerDuty's parts beyond posting an alert: what a triage action sends. Bundled on its own (a
// lazy-*.ts module) and loaded by triage when it needs it.
import { withoutControls } from '../../format/fit.js';
import { inertText, singleLine, truncate } from '../../format/text.js';
import type { TriageAction } from '../../vocabulary/triage.js';
import type { KindExtras, TriageNote } from '../kind.js';
import type { PagerDutyDestination } from './config.js';
import { inertForPagerDuty, PAGERDUTY_LIMITS, PAGERDUTY_SOURCE } from './format.js';
import type { PagerDutyAction, PagerDutyEvent } from './payload.js';

/**
 * What each triage action does to the anomaly's PagerDuty alert. The Events API has no snooze:
 * a snooze acknowledges the alert while the relay holds its follow-ups back (a service's own
 * acknowledgement timeout may trigger it again sooner). "Expected" resolves the alert; a reopen
 * triggers it again. A new action does not compile until it is given its event here.
 */
export const PAGERDUTY_TRIAGE_EVENTS: Readonly<Record<TriageAction, PagerDutyAction>> = {
  acknowledge: 'acknowledge',
  snooze: 'acknowledge',
  expected: 'resolve',
  reopen: 'trigger',
};

/** Sender text from a Triage link (the alert's title, its account) as PagerDuty shows it: one inert line. */
const inertLine = (text: string | undefined): string => inertForPagerDuty(singleLine(inertText(withoutControls(text ?? ''))));

/**
 * A reopen's trigger: when the alert was resolved, PagerDuty opens a new one from it, so it says
 * what the opening said as far as the Triage link knows it (the title, the account, the link
 * itself) and who reopened it. The table holds no alert text, so that is all there is.
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
  triageNote(destination, note): { event: PagerDutyEvent } {
    const action = PAGERDUTY_TRIAGE_EVENTS[note.action];
    return {
      event: {
        event_action: action,
        dedup_key: note.anomalyId,
        ...(action === 'trigger' ? reopenPayload(destination, note) : {}),
      },
    };
  },
};
