// How `npm start` and its preview page show Google Chat: a console that plays a space's incoming
// webhook, and an HTML approximation of a cardsV2 message. Loaded by the scripts and tests (lib/notify/tools.ts), never by a function.
import type { KindTools } from '../kind.js';
import {
  arr,
  controlForms,
  emphasis,
  html,
  link,
  linkButton,
  SafeHtml as Markup,
  obj,
  type Part,
  previewImage,
  type SafeHtml,
  splitOnce,
  str,
  terminalButton,
  textsIn,
  unsupported,
} from '../preview.js';

interface ChatButton {
  text: string;
  onClick?: { openLink?: { url?: string } };
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
      parts.push(new Markup('<br>'));
    } else if (!closing) {
      open.push(tag!);
      parts.push(new Markup(name === 'a' ? '<span class="link">' : `<${tag}>`));
    } else if (open.includes(tag!)) {
      while (open.length > 0) {
        const top = open.pop()!;
        parts.push(new Markup(`</${top}>`));
        if (top === tag) break;
      }
    }
  }
  parts.push(decode(text.slice(last)));
  while (open.length > 0) parts.push(new Markup(`</${open.pop()}>`));
  return html`${parts}`;
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
  if (widget['image']) {
    const image = obj(widget['image']);
    return html`<div class="gchat-image">${previewImage(str(image['imageUrl']), str(image['altText']))}</div>`;
  }
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

// The message text and card text parse markup; a card header and labels are shown as written.
const GOOGLE_CHAT_TEXTS = new Set(['text']);

export const tools: KindTools = {
  conformance: {
    variants: (base) => [
      { name: 'space webhook', destination: { type: 'googlechat', url: `${base}/v1/spaces/S/messages?key=GCHATKEY&token=GCHATSECRET` } },
    ],
    accepted: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"name":"spaces/S/messages/1"}' },
    shown: (body) => textsIn(body, GOOGLE_CHAT_TEXTS),
    secrets: (destination) => [(destination as { url: string }).url, 'GCHATKEY', 'GCHATSECRET'],
    maxBytes: 32_000,
  },
  name: 'Google Chat',
  fidelity: 'HTML approximation of a cardsV2 message, not Google Chat’s own rendering',
  preview: googleChatMessage,
  createConsole: () => (_rest, body) => {
    const message = body as { text?: string; cardsV2?: Array<{ card?: unknown }>; thread?: { threadKey?: string } };
    const card = message.cardsV2?.[0]?.card as { sections?: Array<{ widgets?: Array<{ buttonList?: { buttons?: ChatButton[] } }> }> };
    const links = (card?.sections ?? [])
      .flatMap((section) => section.widgets ?? [])
      .flatMap((widget) => widget.buttonList?.buttons ?? [])
      .map((b) => terminalButton({ text: b.text, ...(b.onClick?.openLink?.url ? { url: b.onClick.openLink.url } : {}) }));
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"name":"spaces/CONSOLE/messages/1"}',
      show: [
        `\n── Google Chat message (console destination) ──\n${[message.text ?? '', ...links].join('\n')}\n`,
        `thread key: ${message.thread?.threadKey ?? ''}`,
        'card JSON (paste into the Card Builder, https://addons.gsuite.google.com/uikit/builder):',
        `${JSON.stringify(message.cardsV2?.[0]?.card, null, 2)}\n`,
      ],
      record: body,
    };
  },
};
