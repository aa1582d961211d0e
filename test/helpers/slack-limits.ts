// Slack's documented Block Kit limits (shared/reference/slack.md), checked on what Slack receives.

interface Text {
  type: string;
  text: string;
}
/** A context element (mrkdwn) or an actions block's button. */
interface Element {
  type: string;
  text: string | Text;
  value?: string;
  url?: string;
  action_id?: string;
}
interface Block {
  type: string;
  text?: Text;
  fields?: Text[];
  elements?: Element[];
}
const textOf = (element: Text | Element): string => (typeof element.text === 'string' ? element.text : element.text.text);
export interface ReceivedMessage {
  text?: string;
  blocks?: Block[];
}

/** Every broken limit, as readable strings; empty when the message is fine. */
export function slackLimitViolations(message: ReceivedMessage, totalBudget = 8_000): string[] {
  const problems: string[] = [];
  const blocks = message.blocks ?? [];
  if (typeof message.text !== 'string' || message.text.length === 0) problems.push('top-level text missing');
  if ((message.text ?? '').length > 40_000) problems.push('text over 40,000');
  if (blocks.length > 50) problems.push('more than 50 blocks');
  let total = (message.text ?? '').length;
  blocks.forEach((block, i) => {
    if (block.type === 'header') {
      if (block.text?.type !== 'plain_text') problems.push(`block ${i}: header not plain_text`);
      if ((block.text?.text.length ?? 0) > 150) problems.push(`block ${i}: header over 150`);
      if (!block.text?.text) problems.push(`block ${i}: empty header`);
    }
    if (block.type === 'section') {
      if (block.text && block.text.text.length > 3_000) problems.push(`block ${i}: section over 3,000`);
      if (block.text && block.text.text.length === 0) problems.push(`block ${i}: empty section`);
      if ((block.fields?.length ?? 0) > 10) problems.push(`block ${i}: over 10 fields`);
      for (const [j, f] of (block.fields ?? []).entries()) if (f.text.length > 2_000) problems.push(`block ${i} field ${j}: over 2,000`);
      if (!block.text && !block.fields?.length) problems.push(`block ${i}: section without text or fields`);
    }
    if (block.type === 'context' && (block.elements?.length ?? 0) > 10) problems.push(`block ${i}: over 10 context elements`);
    if (block.type === 'actions') {
      if ((block.elements?.length ?? 0) > 25) problems.push(`block ${i}: over 25 actions`);
      for (const [j, b] of (block.elements ?? []).entries()) {
        if (textOf(b).length > 75) problems.push(`block ${i} button ${j}: text over 75`);
        if ((b.value?.length ?? 0) > 2_000) problems.push(`block ${i} button ${j}: value over 2,000`);
        if ((b.url?.length ?? 0) > 3_000) problems.push(`block ${i} button ${j}: url over 3,000`);
        if ((b.action_id?.length ?? 0) > 255) problems.push(`block ${i} button ${j}: action_id over 255`);
      }
    }
    total +=
      (block.text?.text.length ?? 0) + [...(block.fields ?? []), ...(block.elements ?? [])].reduce((n, t) => n + textOf(t).length, 0);
  });
  if (total > totalBudget) problems.push(`total text ${total} over budget ${totalBudget}`);
  return problems;
}

/** All mrkdwn strings of a message: top-level text, section text and fields, context elements. */
export function mrkdwnStrings(message: ReceivedMessage): string[] {
  const out: string[] = [];
  if (message.text) out.push(message.text);
  for (const block of message.blocks ?? []) {
    if (block.type === 'header') continue;
    if (block.text?.type === 'mrkdwn') out.push(block.text.text);
    for (const t of [...(block.fields ?? []), ...(block.elements ?? [])]) if (t.type === 'mrkdwn') out.push(textOf(t));
  }
  return out;
}

/**
 * The live special forms (`<...>`) in the mrkdwn parts of a message, other than the ones the
 * relay itself writes: the configured mention and its own `<!date^...>`.
 */
export function liveSpecialForms(message: ReceivedMessage, allowedMention?: string): string[] {
  const found: string[] = [];
  for (const text of mrkdwnStrings(message)) {
    for (const match of text.matchAll(/<[^>]*>?/g)) {
      const form = match[0];
      if (form === allowedMention) continue;
      if (/^<!date\^\d+\^\{date_short_pretty\} \{time\}\|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z>$/.test(form)) continue;
      found.push(form);
    }
  }
  return found;
}

/**
 * The parts of a message that carry sender text, without what the relay itself writes: the
 * configured mention, the header emoji, field labels and the context's clock and date.
 */
export function slackSenderTexts(message: ReceivedMessage, mention?: string): string[] {
  const withoutMention = (t: string) => (mention && t.startsWith(`${mention} `) ? t.slice(mention.length + 1) : t === mention ? '' : t);
  const out: string[] = [withoutMention(message.text ?? '')];
  for (const block of message.blocks ?? []) {
    if (block.type === 'header') out.push((block.text?.text ?? '').replace(/^:[a-z_]+: /, ''));
    if (block.type === 'section' && block.text) out.push(withoutMention(block.text.text));
    for (const field of block.fields ?? []) out.push(field.text.replace(/^\*[A-Za-z]+\*\n/, ''));
    for (const element of block.elements ?? []) {
      const time = textOf(element)
        .replace(/^:clock3: /, '')
        .replace(/^<!date\^\d+\^\{date_short_pretty\} \{time\}\|[\dTZ:-]+>$/, '');
      if (time !== 'Sent by the cost platform') out.push(time);
    }
  }
  return out;
}
