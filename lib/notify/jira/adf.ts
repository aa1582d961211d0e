// Atlassian Document Format (version 1), the part of it the relay writes: paragraphs, a bullet
// list, text and line breaks. Formatting and links are marks on a text node, and a text node
// without marks is shown as typed; mentions, emoji and cards are nodes of their own. So sender
// text only ever becomes unmarked text nodes (`plain`), and only our own words carry marks (`ours`).
import { passedOnText } from '../../format/text.js';

export type AdfMark = { type: 'strong' } | { type: 'em' } | { type: 'link'; attrs: { href: string } };
export interface AdfText {
  type: 'text';
  /** Never empty: Jira refuses an empty text node. */
  text: string;
  marks?: AdfMark[];
}
export type AdfInline = AdfText | { type: 'hardBreak' };
export interface AdfParagraph {
  type: 'paragraph';
  content: AdfInline[];
}
export interface AdfListItem {
  type: 'listItem';
  content: [AdfParagraph];
}
export interface AdfBulletList {
  type: 'bulletList';
  content: AdfListItem[];
}
export type AdfBlock = AdfParagraph | AdfBulletList;
export interface AdfDoc {
  type: 'doc';
  version: 1;
  content: AdfBlock[];
}

/**
 * Sender text as Jira receives it (already inert for every chat: lib/format/text.ts inertText).
 * Jira shows it as typed, but an issue travels on: Jira's own Slack and Teams apps post its
 * summary to channels, and e-mails quote it (passedOnText).
 */
export const jiraText = passedOnText;

/** Sender text: unmarked text nodes, a line break between lines. */
export function plain(text: string): AdfInline[] {
  const inline: AdfInline[] = [];
  for (const line of jiraText(text).split('\n')) {
    if (inline.length > 0) inline.push({ type: 'hardBreak' });
    if (line !== '') inline.push({ type: 'text', text: line });
  }
  // A break first or last shows as an empty line, nothing else: it is left out.
  while (inline[0]?.type === 'hardBreak') inline.shift();
  while (inline.at(-1)?.type === 'hardBreak') inline.pop();
  return inline;
}

/** Our own words, with the marks we chose. */
export const ours = (text: string, ...marks: AdfMark[]): AdfText =>
  marks.length > 0 ? { type: 'text', text, marks } : { type: 'text', text };

export const paragraph = (...content: AdfInline[]): AdfParagraph => ({ type: 'paragraph', content });

export const bulletList = (items: AdfInline[][]): AdfBulletList => ({
  type: 'bulletList',
  content: items.map((content) => ({ type: 'listItem', content: [paragraph(...content)] })),
});

/** A document of the blocks that have content: an empty paragraph or list is left out. */
export const doc = (...blocks: AdfBlock[]): AdfDoc => ({ type: 'doc', version: 1, content: blocks.filter((b) => b.content.length > 0) });
