import type { EscalationMark, TriageMark } from '../../chat/service.js';
import { type AlertView, alertView, isoSeconds } from '../../format/alert.js';
import { escalationLine } from '../../format/escalation.js';
import { fitWithin } from '../../format/fit.js';
import { escapeMrkdwn, escapeMrkdwnAndTruncate, truncate } from '../../format/text.js';
import { triageName } from '../../format/triage.js';
import type { CostCenterRef } from '../../message/cost-center.js';
import type { WebhookMessage } from '../../message/schema.js';
import { threadKeyFor } from './thread.js';

export type Widget =
  | { decoratedText: { topLabel: string; text: string; wrapText?: boolean } }
  | { textParagraph: { text: string } }
  | { image: { imageUrl: string; altText: string } }
  /** A link button: a webhook's card can open a URL, not call back (that needs a Chat app). */
  | { buttonList: { buttons: [{ text: string; onClick: { openLink: { url: string } } }] } };

/** What a Google Chat incoming webhook takes: notification text, one card, and the thread it belongs in. */
export interface GoogleChatMessage {
  text: string;
  cardsV2: [{ cardId: 'cost-alert'; card: { header: { title: string; subtitle?: string }; sections: [{ widgets: Widget[] }] } }];
  thread: { threadKey: string };
}

/** A message is at most 32,000 bytes, text and cards together. */
export const GOOGLE_CHAT_MAX_BYTES = 32_000;
/** Clients cut `text` beyond 4,096 characters; a notification needs far less. */
export const GOOGLE_CHAT_LIMITS = { text: 300, title: 200, subtitle: 200, body: 6_000, fact: 250, time: 100 } as const;

/** Sender text made inert in a message's `text`: no `<` or `>` left to open a link or a mention. */
export function escapeGoogleChatText(text: string): string {
  return text.replace(/</g, '‹').replace(/>/g, '›');
}

/** Sender text made inert in card text, where an HTML subset renders: the same three entities Slack needs. */
export const escapeCardHtml = escapeMrkdwn;

/** Escaped card text of at most `max` characters, never ending in half an entity; newlines as `<br>`. */
const cardText = (text: string, max: number): string => escapeMrkdwnAndTruncate(text, max).replace(/\n/g, '<br>');

function timeText(view: AlertView): string | undefined {
  if (view.epoch !== undefined) return isoSeconds(view.epoch).replace('T', ' ').replace('Z', ' UTC');
  return view.rawTime;
}

/** A follow-up, in the anomaly's thread; `triage` when someone decided about the anomaly. */
export interface GoogleChatUpdate {
  triage?: TriageMark | undefined;
}

function build(
  view: AlertView,
  threadKey: string,
  mention: string | undefined,
  bodyLimit: number,
  update: GoogleChatUpdate | undefined,
  link: string | undefined,
  escalation: EscalationMark | undefined,
  chartUrl: string | undefined,
): GoogleChatMessage {
  const widgets: Widget[] = [];
  if (view.body && bodyLimit > 0) widgets.push({ textParagraph: { text: cardText(view.body, bodyLimit) } });
  for (const { label, value } of view.facts)
    widgets.push({ decoratedText: { topLabel: label, text: cardText(value, GOOGLE_CHAT_LIMITS.fact), wrapText: true } });
  const time = timeText(view);
  if (time) widgets.push({ decoratedText: { topLabel: 'Time', text: cardText(time, GOOGLE_CHAT_LIMITS.time) } });
  if (chartUrl) widgets.push({ image: { imageUrl: chartUrl, altText: "The account's daily cost over 30 days" } });
  if (link) widgets.push({ buttonList: { buttons: [{ text: 'Triage', onClick: { openLink: { url: link } } }] } });

  const account = view.facts.find((f) => f.label === 'Account')?.value;
  // The header renders as plain text; alertView has already dropped control characters.
  const header = {
    title: truncate(`${view.emoji} ${view.title}`, GOOGLE_CHAT_LIMITS.title),
    subtitle: truncate(account ? `${view.kind} · ${account}` : view.kind, GOOGLE_CHAT_LIMITS.subtitle),
  };
  // The configured mention is the only live `<…>` in the text. Chat shows the text above the
  // card, so it names the alert without repeating the message the card shows.
  const state = update?.triage ? ` (${update.triage.state} by ${escapeGoogleChatText(triageName(update.triage.by))})` : '';
  const escalated = escalation ? `${escapeGoogleChatText(escalationLine(escalation))}: ` : '';
  const prefix = `${mention ? `${mention} ` : ''}${escalated}${update ? `Update${state}: ` : ''}`;
  const text = prefix + truncate(escapeGoogleChatText(`${view.emoji} ${view.title}`), GOOGLE_CHAT_LIMITS.text - prefix.length);
  return { text, cardsV2: [{ cardId: 'cost-alert', card: { header, sections: [{ widgets }] } }], thread: { threadKey } };
}

/** A cardsV2 message with notification text, within GOOGLE_CHAT_MAX_BYTES; long text is cut with an ellipsis. */
export function formatGoogleChatMessage(
  message: WebhookMessage,
  mention?: string,
  update?: GoogleChatUpdate,
  link?: string,
  costCenters?: readonly CostCenterRef[],
  /** Where the anomaly waited unacknowledged before it came here (lib/escalation). */
  escalation?: EscalationMark,
  /** A thread of its own (a digest's) rather than the anomaly's. */
  thread?: string,
  /** The picture of the account's cost trend (docs/platform.md). */
  chartUrl?: string,
): GoogleChatMessage {
  const view = alertView(message, costCenters);
  const threadKey = thread ?? threadKeyFor(message);
  return fitWithin(GOOGLE_CHAT_MAX_BYTES, GOOGLE_CHAT_LIMITS.body, (bodyLimit) =>
    build(view, threadKey, mention, bodyLimit, update, link, escalation, chartUrl),
  );
}

/** An alert as the service's `format` gathers it: made into its message only by the poster (service.ts). */
export type GoogleChatAlert = Parameters<typeof formatGoogleChatMessage>;

/** What the Google Chat service posts: an alert still to be made into its message, or a message made already (a triage note, a summary). */
export type GoogleChatPost = GoogleChatAlert | GoogleChatMessage;
