// What an alert, a follow-up and a triage note are in Jira: issue fields and comment bodies in
// ADF, from the shared alert view (inert text). Loaded with the poster (lazy-jira-post.ts).
import type { EscalationMark, TriageMark } from '../../chat/service.js';
import { type AlertView, alertView, isoSeconds } from '../../format/alert.js';
import { escalationLine } from '../../format/escalation.js';
import { fitWithin } from '../../format/fit.js';
import { truncate } from '../../format/text.js';
import { triageLine, triageName } from '../../format/triage.js';
import type { CostCenterRef } from '../../message/cost-center.js';
import type { WebhookMessage } from '../../message/schema.js';
import { type AdfDoc, type AdfInline, bulletList, doc, jiraText, ours, paragraph, plain } from './adf.js';
import type { JiraDestination } from './config.js';

/** Jira's summary is one line of at most 255 characters; a fact value is cut well before a reader tires of it. */
export const JIRA_LIMITS = { summary: 255, body: 20_000, fact: 1_000 } as const;

/**
 * Jira keeps at most 32,767 characters of a rich-text field. A document's JSON is fitted below
 * that in bytes, which are never fewer than its characters: it fits whether Jira counts the
 * text or the document.
 */
export const JIRA_DOC_MAX_BYTES = 32_000;

/** The issue type of a destination that names none. */
export const DEFAULT_ISSUE_TYPE = 'Task';

/** A follow-up: which update of the anomaly this is, since when, and what someone decided about it. */
export interface JiraUpdate {
  firstSeenAt: string;
  updates: number;
  triage?: TriageMark | undefined;
}

/** The issue fields an opening (or a follow-up whose issue is lost) creates. */
export interface JiraIssueFields {
  project: { key: string };
  issuetype: { name: string };
  summary: string;
  description: AdfDoc;
  labels?: string[];
}

function updateLine({ firstSeenAt, updates, triage }: JiraUpdate): AdfInline[] {
  const head = ours(`Update ${updates} of an anomaly first seen ${firstSeenAt}`, { type: 'em' });
  // The decision names who made it: a typed name, so unmarked text like the sender's.
  return triage ? [head, ours(' · '), ...plain(triageLine(triage.state, triageName(triage.by), triage.at))] : [head];
}

function timeLine(view: AlertView): AdfInline[] {
  if (view.epoch !== undefined) return [ours(`🕒 ${isoSeconds(view.epoch)}`)];
  return view.rawTime !== undefined ? [ours('🕒 '), ...plain(view.rawTime)] : [ours('Sent by the cost platform')];
}

function alertDoc(
  view: AlertView,
  bodyLimit: number,
  update: JiraUpdate | undefined,
  link: string | undefined,
  escalation: EscalationMark | undefined,
  chartUrl: string | undefined,
): AdfDoc {
  // Our own links, the only ones: the anomaly's signed triage page, and the picture of its account's cost trend.
  const links = [
    ...(link ? [ours('Triage', { type: 'link', attrs: { href: link } })] : []),
    ...(link && chartUrl ? [ours(' · ')] : []),
    ...(chartUrl ? [ours('Cost trend', { type: 'link', attrs: { href: chartUrl } })] : []),
  ];
  return doc(
    // Where it waited unacknowledged comes first: it is why the issue exists. The name is plain text.
    paragraph(...(escalation ? [ours('🚨 ', { type: 'strong' }), ...plain(escalationLine(escalation))] : [])),
    paragraph(...(update ? updateLine(update) : [])),
    paragraph(...plain(truncate(view.body, bodyLimit))),
    bulletList(view.facts.map(({ label, value }) => [ours(`${label}: `, { type: 'strong' }), ...plain(truncate(value, JIRA_LIMITS.fact))])),
    paragraph(...timeLine(view)),
    paragraph(...links),
  );
}

/** The alert as a document within JIRA_DOC_MAX_BYTES; a long message is cut with an ellipsis. */
export function alertDocument(view: AlertView, update?: JiraUpdate, link?: string, escalation?: EscalationMark, chartUrl?: string): AdfDoc {
  return fitWithin(JIRA_DOC_MAX_BYTES, JIRA_LIMITS.body, (limit) => alertDoc(view, limit, update, link, escalation, chartUrl));
}

/** The fields of the issue an alert opens: the title as its summary, the alert as its description. */
export function issueFields(
  message: WebhookMessage,
  destination: JiraDestination,
  update?: JiraUpdate,
  link?: string,
  costCenters?: readonly CostCenterRef[],
  escalation?: EscalationMark,
  chartUrl?: string,
): JiraIssueFields {
  const { labels } = destination;
  const view = alertView(message, costCenters);
  return {
    project: { key: destination.project },
    issuetype: { name: destination.issueType ?? DEFAULT_ISSUE_TYPE },
    summary: truncate(jiraText(view.title), JIRA_LIMITS.summary),
    description: alertDocument(view, update, link, escalation, chartUrl),
    ...(labels && labels.length > 0 ? { labels } : {}),
  };
}

/** A triage note ("Acknowledged by …"): the line as typed, unmarked. */
export const noteDocument = (line: string): AdfDoc => doc(paragraph(...plain(line)));
