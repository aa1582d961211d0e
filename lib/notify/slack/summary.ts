import {
  mostThatFit,
  notShownLine,
  quietLine,
  type SummaryWeek,
  summaryCounts,
  summaryHeading,
  summaryLine,
  summaryParts,
} from '../../format/summary.js';
import { escapeMrkdwn, truncate } from '../../format/text.js';
import type { SlackAppCall } from './app-payload.js';
import type { SlackDestination } from './config.js';
import { SLACK_LIMITS, type SlackBlock, type SlackMessage } from './format.js';

/**
 * All the text of one summary message: Slack refuses a message whose blocks are large in total
 * (`msg_blocks_too_long`) well below the sum of its per-block limits, so a long week is cut
 * here, visibly, rather than refused.
 */
const SLACK_SUMMARY_CHARS = 7_000;

const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text, verbatim: true as const });

/** One anomaly's line: escaped sender text, then its Triage link (our own URL) where it has one. */
const lineOf = (week: SummaryWeek, index: number): string => {
  const anomaly = week.anomalies[index]!;
  return `• ${escapeMrkdwn(summaryLine(anomaly, week))}${anomaly.link ? ` · <${anomaly.link}|Triage>` : ''}`;
};

/** Lines packed into sections of at most the formatter's section budget, the group's label first. */
function sections(label: string, lines: readonly string[]): SlackBlock[] {
  if (lines.length === 0) return [];
  const texts: string[] = [];
  let current = `*${label}*`;
  for (const line of lines) {
    if (current.length + 1 + line.length > SLACK_LIMITS.body) {
      texts.push(current);
      current = line;
    } else current = `${current}\n${line}`;
  }
  texts.push(current);
  return texts.map((text) => ({ type: 'section', text: mrkdwn(text) }));
}

function build(week: SummaryWeek, shown: number): SlackMessage {
  const heading = summaryHeading(week);
  const counts = escapeMrkdwn(summaryCounts(week));
  const { open, triaged, hidden } = summaryParts(week, shown, (i) => lineOf(week, i));
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`:bar_chart: ${heading}`, SLACK_LIMITS.header), emoji: true } },
    { type: 'section', text: mrkdwn(counts) },
    ...sections('Open', open),
    ...sections('Triaged', triaged),
    ...(hidden > 0 ? [{ type: 'context' as const, elements: [mrkdwn(escapeMrkdwn(notShownLine(hidden)))] }] : []),
  ];
  return { text: truncate(escapeMrkdwn(`${heading}: ${summaryCounts(week)}`), SLACK_LIMITS.fallback), blocks };
}

const totalChars = (message: SlackMessage): number =>
  message.text.length +
  message.blocks.reduce((n, block) => {
    if (block.type === 'header') return n + block.text.text.length;
    if (block.type === 'section') return n + (block.text?.text.length ?? 0);
    if (block.type === 'context') return n + block.elements.reduce((m, e) => m + e.text.length, 0);
    return n;
  }, 0);

/**
 * A week as Block Kit: the counts, then the open anomalies and the triaged ones, as many as fit
 * the message's total, and a line naming how many more there are. No mention: a summary is
 * read when convenient, it pings nobody. A quiet week is one line.
 */
function slackSummaryMessage(week: SummaryWeek): SlackMessage {
  if (week.anomalies.length === 0) {
    const line = escapeMrkdwn(quietLine(week));
    return { text: line, blocks: [{ type: 'section', text: mrkdwn(line) }] };
  }
  const shown = mostThatFit(week.anomalies.length, (n) => totalChars(build(week, n)) <= SLACK_SUMMARY_CHARS);
  return build(week, shown);
}

/** The summary as an incoming webhook takes it, or as the app posts it to the destination's channel. */
export function slackSummary(destination: SlackDestination, week: SummaryWeek): SlackMessage | SlackAppCall {
  const message = slackSummaryMessage(week);
  if (destination.channel === undefined) return message;
  return { call: 'chat.postMessage', body: { channel: destination.channel, ...message, unfurl_links: false, unfurl_media: false } };
}
