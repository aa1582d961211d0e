// PagerDuty's parts beyond posting an alert: what a triage action sends. Bundled on its own (a
// lazy-*.ts module) and loaded by triage when it needs it.
import { truncate } from '../../format/text.js';
import type { TriageAction } from '../../vocabulary/triage.js';
import type { KindExtras } from '../kind.js';
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

export const extras: KindExtras<PagerDutyDestination> = {
  // The same key as the anomaly's alert: the action lands on that alert. A trigger needs a
  // payload, so a reopen says who reopened it; the note's name is untrusted text.
  triageNote(destination, note): { event: PagerDutyEvent } {
    const action = PAGERDUTY_TRIAGE_EVENTS[note.action];
    return {
      event: {
        event_action: action,
        dedup_key: note.anomalyId,
        ...(action === 'trigger'
          ? {
              payload: {
                summary: truncate(inertForPagerDuty(note.line), PAGERDUTY_LIMITS.summary),
                source: PAGERDUTY_SOURCE,
                severity: destination.severity ?? 'warning',
              },
            }
          : {}),
      },
    };
  },
};
