// The Teams and Google Chat limits of shared/reference/teams.md and google-chat.md, checked on
// what a chat service receives; and the forms that would let sender text link or ping.

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

interface CardElement {
  type: string;
  text?: string;
  wrap?: boolean;
  facts?: Array<{ title: string; value: string }>;
}
interface TeamsBody {
  type?: string;
  attachments?: Array<{
    contentType?: string;
    content?: { type?: string; version?: string; body?: CardElement[]; msteams?: { width?: string; entities?: Array<{ text: string }> } };
  }>;
}

/** Every text a Teams card shows, in order. */
export function teamsTexts(message: unknown): string[] {
  const body = (message as TeamsBody).attachments?.[0]?.content?.body ?? [];
  return body.flatMap((e) => (e.type === 'FactSet' ? (e.facts ?? []).flatMap((f) => [f.title, f.value]) : [e.text ?? '']));
}

export function teamsViolations(message: unknown, maxBytes = 20_000): string[] {
  const problems: string[] = [];
  const m = message as TeamsBody;
  if (m.type !== 'message') problems.push('type is not "message"');
  if (m.attachments?.length !== 1) problems.push('not exactly one attachment');
  const attachment = m.attachments?.[0];
  if (attachment?.contentType !== 'application/vnd.microsoft.card.adaptive') problems.push('attachment is not an Adaptive Card');
  const card = attachment?.content;
  if (card?.type !== 'AdaptiveCard' || card.version !== '1.4') problems.push('not an Adaptive Card 1.4');
  if (card?.msteams?.width !== 'Full') problems.push('not full width');
  for (const [i, e] of (card?.body ?? []).entries())
    if (e.type === 'TextBlock' && e.wrap !== true) problems.push(`TextBlock ${i} without wrap`);
  if (!card?.body?.[0]?.text) problems.push('no title');
  if (bytes(message) > maxBytes) problems.push(`body over ${maxBytes} bytes (${bytes(message)})`);
  return problems;
}

/** Markdown a Teams card would render from `text`: links, emphasis, list items, mentions, card functions. */
export function teamsLiveMarkup(text: string): string[] {
  const found: string[] = [];
  if (/\[[^\]]*\]\([^)]*\)/.test(text)) found.push('link');
  if (/<at>/i.test(text) || /</.test(text)) found.push('angle bracket');
  if (/\*\*[^*]+\*\*|(?:^|\W)_[^_]+_(?:\W|$)/.test(text)) found.push('emphasis');
  if (/^[ \t]*(?:[-+*]|\d+[.)])[ \t]/m.test(text)) found.push('list item');
  if (/\{\{/.test(text)) found.push('card function');
  return found;
}

interface ChatCard {
  header?: { title?: string; subtitle?: string };
  sections?: Array<{ widgets?: Array<{ decoratedText?: { text: string; topLabel?: string }; textParagraph?: { text: string } }> }>;
}
interface GoogleChatBody {
  text?: string;
  cardsV2?: Array<{ cardId?: string; card?: ChatCard }>;
  thread?: { threadKey?: string };
}

/** Every card text (HTML subset) of a Google Chat message. */
export function googleChatCardTexts(message: unknown): string[] {
  const card = (message as GoogleChatBody).cardsV2?.[0]?.card;
  return (card?.sections ?? []).flatMap((s) => (s.widgets ?? []).map((w) => w.decoratedText?.text ?? w.textParagraph?.text ?? ''));
}

export function googleChatViolations(message: unknown, maxBytes = 32_000): string[] {
  const problems: string[] = [];
  const m = message as GoogleChatBody;
  if (typeof m.text !== 'string' || m.text.length === 0) problems.push('no text');
  if ((m.text ?? '').length > 4_096) problems.push('text over 4,096 characters');
  const card = m.cardsV2?.[0]?.card;
  if (!card?.header?.title) problems.push('card header without title');
  const widgets = (card?.sections ?? []).flatMap((s) => s.widgets ?? []);
  if (widgets.length > 100) problems.push('over 100 widgets');
  const key = m.thread?.threadKey ?? '';
  if (key.length === 0 || key.length > 4_000) problems.push('thread key missing or over 4,000 characters');
  if (bytes(message) > maxBytes) problems.push(`message over ${maxBytes} bytes (${bytes(message)})`);
  return problems;
}

/** What would link or ping in a Google Chat message: a `<` in the text, a tag other than <br> in card text. */
export function googleChatLiveForms(message: unknown, trustedMention?: string): string[] {
  const found: string[] = [];
  let text = (message as GoogleChatBody).text ?? '';
  if (trustedMention && text.startsWith(`${trustedMention} `)) text = text.slice(trustedMention.length + 1);
  if (/[<>]/.test(text)) found.push('angle bracket in text');
  for (const t of googleChatCardTexts(message)) if (/<(?!br>)/i.test(t)) found.push('tag in card text');
  return found;
}

/**
 * What a chat service would still render or reorder in a text that carries sender text:
 * emphasis, strike and code markers, a quote, a bidi control, a link (`scheme://`, `www.`,
 * `host.tld`, an email) or an `@name` / `#channel`. Invisible characters do not hide one.
 */
export function senderMarkup(text: string): string[] {
  const found: string[] = [];
  if (/[*_~`]/.test(text)) found.push('emphasis, strike or code marker');
  if (/^[ \t]*(?:>|&gt;)/m.test(text)) found.push('quote');
  if (/\p{Bidi_Control}/u.test(text)) found.push('bidi control');
  const visible = text.replace(/\p{Cf}/gu, '');
  if (/:\/\/|www\.|[\p{L}\p{N}]\.\p{L}/iu.test(visible)) found.push('link');
  if (/[@#]\p{L}/u.test(visible)) found.push('mention');
  return found;
}

/** The texts of a Teams card that carry sender text: all but the configured mention and the relay's own time. */
export function teamsSenderTexts(message: unknown): string[] {
  return teamsTexts(message).filter((t) => !/^<at>[^<]*<\/at>$/.test(t) && !t.startsWith('🕒 {{DATE('));
}

/** The texts of a Google Chat message that carry sender text, without the configured mention. */
export function googleChatSenderTexts(message: unknown, trustedMention?: string): string[] {
  const m = message as GoogleChatBody;
  let text = m.text ?? '';
  if (trustedMention && text.startsWith(`${trustedMention} `)) text = text.slice(trustedMention.length + 1);
  const header = m.cardsV2?.[0]?.card?.header;
  return [text, header?.title ?? '', header?.subtitle ?? '', ...googleChatCardTexts(message)];
}
