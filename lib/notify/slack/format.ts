import type { EscalationMark, TriageMark } from '../../chat/service.js';
import { type AlertView, alertView, isoSeconds } from '../../format/alert.js';
import { escalationLine } from '../../format/escalation.js';
import { escapeMrkdwn, escapeMrkdwnAndTruncate, singleLine, truncate } from '../../format/text.js';
import { triageLine, triageName } from '../../format/triage.js';
import type { CostCenterRef } from '../../message/cost-center.js';
import type { WebhookMessage } from '../../message/schema.js';

export interface PlainText {
  type: 'plain_text';
  text: string;
  emoji?: boolean;
}
export interface Mrkdwn {
  type: 'mrkdwn';
  text: string;
  /** Always true: Slack must not turn sender URLs, #channel names or @channel-style words into links and mentions. */
  verbatim: true;
}
export interface SlackButton {
  type: 'button';
  text: PlainText;
  action_id: string;
  /** An app button's value: the anomaly it acts on. */
  value?: string;
  /** A link button: Slack opens it, and with interactivity on it also sends a click to answer with 200. */
  url?: string;
}
export type SlackBlock =
  | { type: 'header'; text: PlainText }
  | { type: 'section'; text?: Mrkdwn; fields?: Mrkdwn[] }
  | { type: 'context'; block_id?: string; elements: Mrkdwn[] }
  | { type: 'actions'; block_id: string; elements: SlackButton[] }
  | { type: 'image'; image_url: string; alt_text: string }
  | { type: 'divider' };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/**
 * Our own budget, well below Slack's per-field maxima (header 150, section 3,000, field
 * 2,000), because Slack also refuses messages whose total is large (`msg_blocks_too_long`).
 */
export const SLACK_LIMITS = {
  header: 150,
  body: 2_500,
  field: 250,
  context: 300,
  fallback: 600,
} as const;

function timeText(view: AlertView): string | undefined {
  if (view.rawTime !== undefined) return escapeMrkdwnAndTruncate(view.rawTime, SLACK_LIMITS.context - 20);
  if (view.epoch === undefined) return undefined;
  return `<!date^${view.epoch}^{date_short_pretty} {time}|${isoSeconds(view.epoch)}>`;
}

/** A line of our own above the alert (never sender text): `context` in the message, `prefix` in its notification. */
export interface SlackNote {
  context: string;
  prefix: string;
}

/** A time Slack shows in the reader's zone, with the ISO time as the fallback. */
export function slackDate(iso: string): string {
  const epoch = Math.floor(Date.parse(iso) / 1000);
  return Number.isFinite(epoch) ? `<!date^${epoch}^{date_short_pretty} {time}|${isoSeconds(epoch)}>` : 'an earlier time';
}

/** "Acknowledged by Dana at …", escaped: the name is untrusted text. */
export const markText = (mark: TriageMark) => escapeMrkdwn(triageLine(mark.state, triageName(mark.by), mark.at));

/** A follow-up where nothing can be edited or threaded: a new message that says what it updates, and what was decided. */
export const updateNote = (firstSeenAt: string, updates: number, mark?: TriageMark): SlackNote => ({
  context: `:repeat: Update ${updates} of an anomaly first seen ${slackDate(firstSeenAt)}${mark ? ` · ${markText(mark)}` : ''}`,
  prefix: mark ? `Update (${mark.state}):` : 'Update:',
});

/** The opening message after follow-ups: its latest content, and how many updates and when. */
export const editedNote = (updates: number, atIso: string): SlackNote => ({
  context: `:repeat: Updated ${updates} ${updates === 1 ? 'time' : 'times'}, latest ${slackDate(atIso)}; each update is in the thread`,
  prefix: 'Updated:',
});

/** An escalation says first where the anomaly waited and how long; a follow-up's own note follows. */
export const escalatedNote = (escalation: EscalationMark | undefined, note?: SlackNote): SlackNote | undefined =>
  escalation
    ? {
        context: `:rotating_light: ${escapeMrkdwn(escalationLine(escalation))}${note ? ` · ${note.context}` : ''}`,
        prefix: 'Escalated:',
      }
    : note;

/** The picture of the account's cost trend (docs/platform.md): our link, its words ours too. */
export const chartBlock = (url: string): SlackBlock => ({
  type: 'image',
  image_url: url,
  alt_text: "The account's daily cost over 30 days",
});

/** The "Triage" link button of a webhook message: Slack opens the triage page. */
export const triageLinkBlock = (url: string): SlackBlock => ({
  type: 'actions',
  block_id: 'triage_link',
  elements: [{ type: 'button', text: { type: 'plain_text', text: 'Triage' }, action_id: 'triage_link', url }],
});

/** The notification text: kind, title and as much of the message as fits. */
function summaryLine(view: AlertView): string {
  const summary = view.body ? `${view.title}: ${singleLine(view.body)}` : view.title;
  return `${view.kind} – ${summary}`;
}

/**
 * Builds the Block Kit message. Everything that came from the sender is escaped so it can
 * never form a mention or link; the only live mention is the one the configuration trusts.
 */
export function formatSlackMessage(
  message: WebhookMessage,
  mention?: string,
  note?: SlackNote,
  /** Blocks of our own under the alert: triage controls and status. */
  extra: SlackBlock[] = [],
  costCenters?: readonly CostCenterRef[],
  chartUrl?: string,
): SlackMessage {
  const view = alertView(message, costCenters);
  const { title, body } = view;
  const prefix = mention ? `${mention} ` : '';

  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`${view.slackEmoji} ${title}`, SLACK_LIMITS.header), emoji: true } },
  ];
  if (note) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: note.context, verbatim: true }] });
  if (body || mention) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: (prefix + escapeMrkdwnAndTruncate(body, SLACK_LIMITS.body)).trim(), verbatim: true },
    });
  }

  const fields = view.facts.map(({ label, value }) => ({
    type: 'mrkdwn' as const,
    text: `*${label}*\n${escapeMrkdwnAndTruncate(value, SLACK_LIMITS.field)}`,
    verbatim: true as const,
  }));
  blocks.push({ type: 'section', fields });

  const time = timeText(view);
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: time ? `:clock3: ${time}` : 'Sent by the cost platform', verbatim: true }],
  });
  if (chartUrl) blocks.push(chartBlock(chartUrl));
  blocks.push(...extra);

  const notice = note ? `${note.prefix} ` : '';
  return { text: prefix + notice + escapeMrkdwnAndTruncate(summaryLine(view), SLACK_LIMITS.fallback), blocks };
}
