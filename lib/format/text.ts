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
export function escapeAndTruncate(text: string, max: number): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  const cut = truncate(escaped, max);
  return cut.replace(/&[a-z]{0,3}…$/, ELLIPSIS);
}

/** Headers and field labels are one line; runs of whitespace become one space. */
export function singleLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
