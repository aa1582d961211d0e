import { withoutControls } from '../../format/fit.js';
import { escapeMrkdwn, escapeMrkdwnAndTruncate, inertText, truncate } from '../../format/text.js';
import { SLACK_LIMITS, type SlackBlock, type SlackMessage, triageLinkBlock } from './format.js';

/**
 * A digest line as Slack receives it: sender text made inert and escaped as a single alert's is
 * (alertView, formatSlackMessage), so no emphasis, code, link or mention can form, even where
 * verbatim mrkdwn would still render it.
 */
export const slackDigestLine = (line: string): string => escapeMrkdwn(inertText(withoutControls(line)));
const sectionLine = (line: string): string => escapeMrkdwnAndTruncate(inertText(withoutControls(line)), SLACK_LIMITS.body);

/**
 * A digest for a Slack incoming webhook: the title as its header, then the alert lines in as
 * many sections as they need, each within the section limit the formatter keeps
 * (SLACK_LIMITS.body). One alert's section would cut a long digest off; several sections
 * carry three times as many alerts per message, within the message's total. Its "Triage" button
 * opens the page of the anomalies it names.
 */
export function slackDigest(title: string, lines: readonly string[], mention?: string, link?: string): SlackMessage {
  const sections: string[] = [];
  let current = '';
  for (const line of lines) {
    const escaped = sectionLine(line);
    if (current && current.length + 1 + escaped.length > SLACK_LIMITS.body) {
      sections.push(current);
      current = escaped;
    } else current = current ? `${current}\n${escaped}` : escaped;
  }
  if (current) sections.push(current);
  const prefix = mention ? `${mention} ` : '';
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`:bell: ${title}`, SLACK_LIMITS.header), emoji: true } },
    ...sections.map(
      (text, i): SlackBlock => ({ type: 'section', text: { type: 'mrkdwn', text: i === 0 ? prefix + text : text, verbatim: true } }),
    ),
    // The page of the digest's anomalies, each with its own actions.
    ...(link ? [triageLinkBlock(link)] : []),
  ];
  return { text: prefix + title, blocks };
}
