export const ELLIPSIS = '…';

const MRKDWN_SPECIAL = /[&<>]/;
const MRKDWN_SPECIALS = /[&<>]/g;
const MRKDWN_ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;' } as const;

/** Slack's three control characters, which are also what makes HTML: replacing them neutralises every `<...>` special form and every tag. */
export function escapeMrkdwn(text: string): string {
  // Most texts have none of the three: one test, and the text as it is.
  return MRKDWN_SPECIAL.test(text) ? text.replace(MRKDWN_SPECIALS, (c) => MRKDWN_ENTITIES[c as keyof typeof MRKDWN_ENTITIES]) : text;
}

/** At most `max` UTF-16 units, never splitting a surrogate pair, with a visible ellipsis when cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - ELLIPSIS.length));
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut + ELLIPSIS;
}

/** Escapes, then truncates without leaving half an entity such as `&am` behind. */
export function escapeMrkdwnAndTruncate(text: string, max: number): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  const cut = truncate(escaped, max);
  return cut.replace(/&[a-z]{0,3}…$/, ELLIPSIS);
}

// Look-alikes rather than escapes: Slack and Google Chat have no escape for their markup, and
// a look-alike reads the same in every client while no parser or link detector acts on it.
// Each takes one UTF-16 unit, as the character it replaces, so character budgets still hold.
const LOOK_ALIKES = new Map([
  ['*', '＊'],
  ['_', '＿'],
  ['~', '～'],
  ['`', '｀'],
  ['>', '＞'],
  ['.', '․'],
  [':', '∶'],
  ['@', '＠'],
  ['#', '＃'],
]);
const lookAlike = (c: string): string => LOOK_ALIKES.get(c) ?? c;
// Bold, italic, strike and code (inline or block) in Slack, Google Chat and Teams.
const MARKERS = /[*_~`]/g;
// A quote in Slack: `>` first on its line.
const QUOTE = /^([ \t]*)>/gm;
// Chat clients link bare addresses even in plain text and verbatim mrkdwn, so what link
// detectors and mention parsers key on goes too: the dots of `host.tld` (and of `www.` and
// emails), the colon of `scheme:` and `:emoji:`, `@name` and `#channel`. An invisible format
// character in between must not hide one.
const LINK_PARTS = /[.@#](?=\p{Cf}*\p{L})|:(?=\p{Cf}*[\p{L}/])/gu;

/**
 * Sender text that no chat service formats, quotes, links or turns into a mention, in any
 * text field; each formatter still escapes its own syntax (`&`, `<`, `>`, lists) on top.
 */
export function inertText(text: string): string {
  return text.replace(MARKERS, lookAlike).replace(QUOTE, '$1＞').replace(LINK_PARTS, lookAlike);
}

/** Headers and field labels are one line; runs of whitespace become one space. */
export function singleLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text for a service that shows it as written but passes it on (PagerDuty's and Jira's own
 * extensions post it to chats and e-mail): `<` and `>` as full-width look-alikes, since there
 * `<…>` forms tags, mentions and links; and lone surrogates as U+FFFD, which is what they show as
 * anyway, so that the JSON the service receives is well-formed UTF-8.
 */
export const passedOnText = (text: string): string =>
  text.replace(LONE_SURROGATE, '\uFFFD').replace(/[<>]/g, (c) => (c === '<' ? '＜' : '＞'));
