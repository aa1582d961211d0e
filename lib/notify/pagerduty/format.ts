import type { AnomalyPost } from '../../chat/service.js';
import { alertView, isoSeconds } from '../../format/alert.js';
import { escalationLine } from '../../format/escalation.js';
import { withoutControls } from '../../format/fit.js';
import { inertText, passedOnText, singleLine, truncate } from '../../format/text.js';
import { triageLine, triageName } from '../../format/triage.js';
import { TRIAGE } from '../../vocabulary/triage.js';
import type { PagerDutyAlert, PagerDutyEvent, PagerDutyEventPayload } from './payload.js';

/** Every event names the relay as its source, so PagerDuty's event rules can tell its alerts apart. */
export const PAGERDUTY_SOURCE = 'cost-alert-relay';

/**
 * PagerDuty's own limits (the summary, and the event's size in bytes), and ours: the fields its
 * event rules match on stay one short line, and the message in the details is cut so that an
 * event stays far inside the size limit whatever characters it holds.
 */
export const PAGERDUTY_LIMITS = { summary: 1_024, field: 255, message: 10_000 } as const;
export const PAGERDUTY_MAX_BYTES = 512_000;

/**
 * Sender text as PagerDuty receives it: the alert view's inert text, passed on as PagerDuty's
 * extensions pass the summary and details on to Slack, Teams and e-mail (passedOnText).
 */
export const inertForPagerDuty = passedOnText;

/** One short line, or nothing when nothing is left. */
const line = (text: string): string | undefined => {
  const one = singleLine(text);
  return one === '' ? undefined : truncate(one, PAGERDUTY_LIMITS.field);
};

/**
 * A value PagerDuty's event rules match on (account id, cloud, object type): as received, so a
 * rule can say `class` is `anomaly_alert`, but without controls or `<…>`, which PagerDuty shows
 * as written.
 */
const field = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : line(inertForPagerDuty(withoutControls(value)));

/** What a follow-up adds to the details: which update it is, since when, and what someone decided. */
function followUpDetails(anomaly: AnomalyPost | undefined): Record<string, string | number> {
  if (anomaly?.kind !== 'follow_up') return {};
  const { updates, firstSeenAt, triage } = anomaly;
  return {
    update: updates,
    'first seen': firstSeenAt,
    ...(triage ? { triage: inertForPagerDuty(triageLine(triage.state, triageName(triage.by), triage.at)) } : {}),
  };
}

/**
 * The events an alert sends. PagerDuty merges a trigger only into an open alert (acknowledged or
 * not, and then without notifying anyone); after a resolve it opens a new one, which pages. So a
 * follow-up of an anomaly marked expected here sends nothing (Expected resolved its alert), and the
 * first follow-up after a snooze ended resolves the alert the snooze acknowledged before its
 * trigger, which then pages again.
 */
export function pagerDutyEvents(alert: PagerDutyAlert): PagerDutyEvent[] {
  const [, , anomaly, , context] = alert;
  if (anomaly?.kind === 'follow_up') {
    if (anomaly.triage?.state === TRIAGE.expected.state) return [];
    if (anomaly.afterSnooze && context) return [{ event_action: 'resolve', dedup_key: context.anomalyId }, pagerDutyEvent(alert)];
  }
  return [pagerDutyEvent(alert)];
}

/**
 * The trigger event of an alert: an opening and every follow-up alike, under the anomaly's
 * `dedup_key`, so PagerDuty keeps them on one alert. The summary is the title; the message,
 * the account's name and a follow-up's place are details; the Triage page is a link.
 */
export function pagerDutyEvent([message, severity = 'warning', anomaly, triage, context]: PagerDutyAlert): PagerDutyEvent {
  const view = alertView(message);
  const { payload, metadata } = message;
  const accountName =
    payload.account_name === undefined ? undefined : line(inertForPagerDuty(inertText(withoutControls(payload.account_name))));
  const details: Record<string, string | number> = {
    ...(view.body ? { message: truncate(inertForPagerDuty(view.body), PAGERDUTY_LIMITS.message) } : {}),
    ...(accountName ? { 'account name': accountName } : {}),
    ...(view.rawTime ? { time: inertForPagerDuty(view.rawTime) } : {}),
    ...(context?.costCenters?.length
      ? {
          'cost centers':
            line(inertForPagerDuty(inertText(withoutControls(context.costCenters.map((c) => c.name || c.id).join(', '))))) ?? '',
        }
      : {}),
    ...followUpDetails(anomaly),
    ...(context?.escalation ? { escalation: inertForPagerDuty(escalationLine(context.escalation)) } : {}),
  };
  const event: PagerDutyEventPayload = {
    summary: truncate(inertForPagerDuty(view.title), PAGERDUTY_LIMITS.summary),
    source: PAGERDUTY_SOURCE,
    severity,
    ...(view.epoch !== undefined ? { timestamp: isoSeconds(view.epoch) } : {}),
  };
  const component = field(payload.account_id);
  const group = field(payload.cloud_provider_type);
  const kind = field(metadata.object_type);
  if (component) event.component = component;
  if (group) event.group = group;
  if (kind) event.class = kind;
  if (Object.keys(details).length > 0) event.custom_details = details;
  return {
    event_action: 'trigger',
    // The anomaly's record id: a prefix and a SHA-256, far inside PagerDuty's 255 characters.
    ...(context ? { dedup_key: context.anomalyId } : {}),
    payload: event,
    ...(triage && 'link' in triage ? { links: [{ href: triage.link, text: 'Triage' }] } : {}),
    ...(context?.chartUrl ? { images: [{ src: context.chartUrl, alt: "The account's daily cost over 30 days" }] } : {}),
  };
}
