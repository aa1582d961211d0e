// The preview page's HTML, rendered on the server so that all escaping happens in one typed
// place. Everything a message carries came from a sender (or from whoever posted to a console
// path), so every interpolation in `html` is escaped unless it is itself rendered `html`.
// Slack and Google Chat are approximations written here; Teams cards are left to Microsoft's
// renderer in the browser (page.js), which gets the card JSON in an escaped data attribute.
import { parseHttpsOrLoopbackUrl } from '../../lib/transport/allowed-url.js';
import type { ConsoleType } from '../console-chat.js';
import type { Delivery } from './deliveries.js';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** Markup that is already safe: only `html` makes one, so a plain string can never pass as markup. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | undefined | null | false | readonly Part[];

function part(value: Part): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += part(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

// A console path accepts any JSON, so the shapes below are read defensively, never trusted.
type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// The shortcodes the relay uses, and a few common ones; others stay as written.
const EMOJI: Record<string, string> = {
  rotating_light: '🚨',
  bell: '🔔',
  clock3: '🕒',
  warning: '⚠️',
  white_check_mark: '✅',
  moneybag: '💰',
  chart_with_upwards_trend: '📈',
  zzz: '💤',
  eyes: '👀',
};
const emojify = (text: string) => text.replace(/:([a-z0-9_+-]+):/g, (code, name: string) => EMOJI[name] ?? code);

/** `*bold*`, `_italic_`, `~strike~` and `` `code` `` at word boundaries, as Slack and Google Chat read them. */
function emphasis(text: string): SafeHtml {
  const tags: Record<string, string> = { '*': 'strong', _: 'em', '~': 's', '`': 'code' };
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(/([*_~`])([^*_~`\n]*[^*_~`\s])\1/g)) {
    const start = match.index;
    const end = start + match[0].length;
    const before = text[start - 1];
    const after = text[end];
    const opensWord = before === undefined || /[\s([{"'>]/.test(before);
    const closesWord = after === undefined || /[\s)\]}.,;:!?"'<]/.test(after);
    if (!opensWord || !closesWord || /^\s/.test(match[2]!)) continue;
    const tag = tags[match[1]!]!;
    parts.push(emojify(text.slice(last, start)), new SafeHtml(`<${tag}>`), emojify(match[2]!), new SafeHtml(`</${tag}>`));
    last = end;
  }
  parts.push(emojify(text.slice(last)));
  return html`${parts}`;
}

/** Slack's mrkdwn: the relay escaped `&`, `<`, `>` in sender text, so a raw `<…>` is one of its own forms. */
export function slackMrkdwn(text: string): SafeHtml {
  return controlForms(
    text,
    (plain) => emphasis(plain.replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name] ?? '')),
    slackControl,
  );
}

function controlForms(text: string, plain: (text: string) => SafeHtml, control: (inner: string) => SafeHtml): SafeHtml {
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(/<([^<>\n]*)>/g)) {
    parts.push(plain(text.slice(last, match.index)), control(match[1]!));
    last = match.index + match[0].length;
  }
  parts.push(plain(text.slice(last)));
  return html`${parts}`;
}

function slackControl(inner: string): SafeHtml {
  const [target = '', label] = splitOnce(inner, '|');
  const date = /^!date\^(\d+)\^/.exec(target);
  if (date) {
    const epoch = Number(date[1]);
    // page.js shows it in the reader's time zone, as Slack does; the fallback is what Slack would show otherwise.
    return html`<time class="local-time" datetime="${new Date(epoch * 1000).toISOString()}">${label ?? ''}</time>`;
  }
  const special = /^!(here|channel|everyone)$/.exec(target);
  if (special) return html`<span class="mention">@${special[1]}</span>`;
  if (target.startsWith('!subteam^')) return html`<span class="mention">@${label ?? target.slice('!subteam^'.length)}</span>`;
  if (target.startsWith('@')) return html`<span class="mention">@${label ?? target.slice(1)}</span>`;
  if (target.startsWith('#')) return html`<span class="mention">#${label ?? target.slice(1)}</span>`;
  return link(target, label);
}

/** Links in message text are shown, not followed: a preview has no reason to send anyone where a sender points. */
const link = (url: string, label: string | undefined) => html`<span class="link" title="${url}">${label ?? url}</span>`;

/**
 * A link button (the relay's "Triage" link) is followed, as the chat would: it leads to the
 * triage page of this same `npm start`. Only an https or loopback http URL becomes a link, as
 * anyone on this machine can post any JSON to a console path.
 */
function linkButton(label: string, url: string | undefined): SafeHtml {
  const target = url === undefined ? undefined : parseHttpsOrLoopbackUrl(url);
  if (!target) return html`<span class="button">${label}</span>`;
  return html`<a class="button" href="${target.href}" target="_blank" rel="noopener noreferrer">${label}</a>`;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** Google Chat's message `text`: the same emphasis as Slack, `<users/…>` mentions and `<url|label>` links. */
export function chatText(text: string): SafeHtml {
  return controlForms(text, emphasis, (inner) => {
    const [target, label] = splitOnce(inner, '|');
    if (target === 'users/all') return html`<span class="mention">@all</span>`;
    if (target.startsWith('users/')) return html`<span class="mention">@${label ?? target.slice('users/'.length)}</span>`;
    return link(target, label);
  });
}

const CARD_TAGS: Record<string, string> = {
  b: 'strong',
  strong: 'strong',
  i: 'em',
  em: 'em',
  u: 'u',
  s: 's',
  strike: 's',
  font: 'span',
  a: 'span',
};

/**
 * Google Chat card text (`textParagraph`, `decoratedText`): an HTML subset. Allowed tags become
 * our own attribute-free elements, kept balanced; everything else is text.
 */
export function chatCardHtml(text: string): SafeHtml {
  const decode = (s: string) =>
    s.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name] ?? '');
  const parts: Part[] = [];
  const open: string[] = [];
  let last = 0;
  for (const match of text.matchAll(/<(\/?)([a-zA-Z]+)\b[^<>]*>/g)) {
    const [, closing, rawName] = match;
    const name = rawName!.toLowerCase();
    const tag = CARD_TAGS[name];
    const known = name === 'br' || tag !== undefined;
    parts.push(decode(text.slice(last, match.index)));
    last = match.index + match[0].length;
    if (!known) {
      parts.push(decode(match[0]));
    } else if (name === 'br') {
      parts.push(new SafeHtml('<br>'));
    } else if (!closing) {
      open.push(tag!);
      parts.push(new SafeHtml(name === 'a' ? '<span class="link">' : `<${tag}>`));
    } else if (open.includes(tag!)) {
      while (open.length > 0) {
        const top = open.pop()!;
        parts.push(new SafeHtml(`</${top}>`));
        if (top === tag) break;
      }
    }
  }
  parts.push(decode(text.slice(last)));
  while (open.length > 0) parts.push(new SafeHtml(`</${open.pop()}>`));
  return html`${parts}`;
}

function slackTextObject(value: unknown): SafeHtml {
  const text = obj(value);
  const content = str(text['text']) ?? '';
  return text['type'] === 'mrkdwn' ? slackMrkdwn(content) : html`${emojify(content)}`;
}

const unsupported = (what: string) => html`<p class="unsupported">(${what}: not drawn by this approximation; see the JSON below)</p>`;

function slackBlock(value: unknown): SafeHtml {
  const block = obj(value);
  switch (block['type']) {
    case 'header':
      return html`<div class="slack-header">${emojify(str(obj(block['text'])['text']) ?? '')}</div>`;
    case 'section': {
      const fields = arr(block['fields']);
      return html`<div class="slack-section">
        ${block['text'] ? html`<div class="slack-text">${slackTextObject(block['text'])}</div>` : ''}
        ${fields.length > 0 ? html`<div class="slack-fields">${fields.map((f) => html`<div class="slack-text">${slackTextObject(f)}</div>`)}</div>` : ''}
      </div>`;
    }
    case 'context':
      return html`<div class="slack-context">${arr(block['elements']).map((e) => html`<span>${slackTextObject(e)}</span>`)}</div>`;
    case 'divider':
      return html`<hr class="slack-divider">`;
    case 'actions':
      return html`<div class="buttons">${arr(block['elements']).map((e) => linkButton(str(obj(obj(e)['text'])['text']) ?? '', str(obj(e)['url'])))}</div>`;
    default:
      return unsupported(`a Slack "${String(block['type'])}" block`);
  }
}

function slackMessage(body: unknown, time: string): SafeHtml {
  const message = obj(body);
  const blocks = arr(message['blocks']);
  const text = str(message['text']) ?? '';
  // A Slack app destination's place in the thread: the opening, its edit, or a reply under it.
  const threadTs = str(message['thread_ts']);
  const ts = str(message['ts']);
  const place = threadTs ? `↳ reply in the thread of message ${threadTs}` : ts ? `message ${ts} (an edit replaces it in place)` : '';
  return html`${place ? html`<p class="muted slack-thread">${place}</p>` : ''}<div class="slack">
    <div class="sender"><span class="avatar" aria-hidden="true">¢</span><strong>Cost Alert Relay</strong><span class="badge">APP</span><span class="muted receipt">${time}</span></div>
    <div class="slack-blocks">${blocks.length > 0 ? blocks.map(slackBlock) : html`<div class="slack-text">${slackMrkdwn(text)}</div>`}</div>
  </div>
  <p class="notification"><span class="muted">Notification text:</span> ${slackMrkdwn(text)}</p>`;
}

function chatWidget(value: unknown): SafeHtml {
  const widget = obj(value);
  if (widget['textParagraph'])
    return html`<div class="gchat-paragraph">${chatCardHtml(str(obj(widget['textParagraph'])['text']) ?? '')}</div>`;
  if (widget['decoratedText']) {
    const d = obj(widget['decoratedText']);
    return html`<div class="gchat-decorated">
      ${str(d['topLabel']) ? html`<div class="gchat-label">${str(d['topLabel'])}</div>` : ''}
      <div class="gchat-value">${chatCardHtml(str(d['text']) ?? '')}</div>
      ${str(d['bottomLabel']) ? html`<div class="gchat-label">${str(d['bottomLabel'])}</div>` : ''}
    </div>`;
  }
  if (widget['buttonList']) {
    return html`<div class="buttons">${arr(obj(widget['buttonList'])['buttons']).map((b) =>
      linkButton(str(obj(b)['text']) ?? '', str(obj(obj(obj(b)['onClick'])['openLink'])['url'])),
    )}</div>`;
  }
  if (widget['divider']) return html`<hr class="gchat-divider">`;
  return unsupported(`a Google Chat "${Object.keys(widget)[0] ?? '?'}" widget`);
}

function chatCard(value: unknown): SafeHtml {
  const card = obj(obj(value)['card']);
  const header = obj(card['header']);
  return html`<div class="gchat-card">
    ${str(header['title']) ? html`<div class="gchat-card-header"><div class="gchat-title">${str(header['title'])}</div>${str(header['subtitle']) ? html`<div class="gchat-subtitle">${str(header['subtitle'])}</div>` : ''}</div>` : ''}
    ${arr(card['sections']).map((s) => {
      const section = obj(s);
      return html`<div class="gchat-section">${str(section['header']) ? html`<div class="gchat-section-header">${str(section['header'])}</div>` : ''}${arr(section['widgets']).map(chatWidget)}</div>`;
    })}
  </div>`;
}

function googleChatMessage(body: unknown, time: string): SafeHtml {
  const message = obj(body);
  const threadKey = str(obj(message['thread'])['threadKey']);
  return html`<div class="gchat">
    <div class="sender"><span class="avatar" aria-hidden="true">¢</span><strong>Cost Alert Relay</strong><span class="badge">App</span><span class="muted receipt">${time}</span></div>
    ${str(message['text']) ? html`<div class="gchat-text">${chatText(str(message['text'])!)}</div>` : ''}
    ${arr(message['cardsV2']).map(chatCard)}
  </div>
  ${threadKey ? html`<p class="notification"><span class="muted">Thread key:</span> ${threadKey}</p>` : ''}`;
}

function teamsMessage(body: unknown, time: string): SafeHtml {
  const cards = arr(obj(body)['attachments'])
    .map(obj)
    .filter((a) => a['contentType'] === 'application/vnd.microsoft.card.adaptive');
  return html`<div class="teams">
    <div class="sender"><strong>Cost Alert Relay</strong><span class="muted">via Workflows</span><span class="muted receipt">${time}</span></div>
    ${cards.length === 0 ? unsupported('a Teams message without an Adaptive Card') : ''}
    ${cards.map((a) => html`<div class="teams-card" data-card="${JSON.stringify(a['content'] ?? null)}"><p class="muted">The card appears here once the Adaptive Cards renderer has run (it needs JavaScript).</p></div>`)}
  </div>`;
}

const SERVICES: Record<ConsoleType, { name: string; fidelity: string; render(body: unknown, time: string): SafeHtml }> = {
  slack: { name: 'Slack', fidelity: 'HTML approximation of Block Kit, not Slack’s own rendering', render: slackMessage },
  teams: {
    name: 'Microsoft Teams',
    fidelity: 'Rendered by Microsoft’s Adaptive Cards renderer; the surrounding chat is approximate',
    render: teamsMessage,
  },
  googlechat: {
    name: 'Google Chat',
    fidelity: 'HTML approximation of a cardsV2 message, not Google Chat’s own rendering',
    render: googleChatMessage,
  },
};

function deliveryArticle(delivery: Delivery): SafeHtml {
  const service = SERVICES[delivery.type];
  const time = delivery.receivedAt.slice(11, 19);
  return html`<article class="delivery" id="delivery-${delivery.id}" data-type="${delivery.type}">
    <div class="shot">
      <header class="delivery-head">
        <span class="service">${service.name}</span>
        <span class="fidelity">${service.fidelity}</span>
        <time class="receipt" datetime="${delivery.receivedAt}">received ${time} UTC</time>
      </header>
      <div class="message">${service.render(delivery.body, time)}</div>
    </div>
    <details><summary>JSON as posted</summary><pre>${JSON.stringify(delivery.body, null, 2)}</pre></details>
  </article>`;
}

/** The whole page; `latest` lets page.js notice a newer delivery and reload. */
export function previewPage(deliveries: readonly Delivery[], latest: number, limit: number): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cost Alert Relay · local preview</title>
<link rel="stylesheet" href="/preview/page.css">
<script src="/preview/adaptivecards.js" defer></script>
<script src="/preview/page.js" defer></script>
</head>
<body data-latest="${latest}">
<header class="page-head">
  <h1>Cost Alert Relay · local preview</h1>
  <p>Each message the console destinations of <code>npm start</code> received, newest first (the last ${limit}, kept in memory only). The page reloads when a new one arrives.</p>
</header>
<main>
${
  deliveries.length === 0
    ? html`<p class="empty">Nothing received yet. Send a sample: <code>npm run send -- events/anomaly-alert.json</code></p>`
    : deliveries.map(deliveryArticle)
}
</main>
</body>
</html>
`.value;
}
