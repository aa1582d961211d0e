// How `npm start` and its preview page show Slack: a console that plays an incoming webhook and
// the Web API, and an HTML approximation of Block Kit. Loaded by the scripts and tests (lib/notify/tools.ts), never by a function.
import type { ConsoleAnswer, KindTools } from '../kind.js';
import {
  arr,
  bold,
  controlForms,
  dim,
  emojify,
  emphasis,
  html,
  link,
  linkButton,
  obj,
  previewImage,
  type SafeHtml,
  splitOnce,
  str,
  terminalButton,
  textsIn,
  unsupported,
} from '../preview.js';

/** Slack's mrkdwn: the relay escaped `&`, `<`, `>` in sender text, so a raw `<…>` is one of its own forms. */
export function slackMrkdwn(text: string): SafeHtml {
  return controlForms(
    text,
    (plain) => emphasis(plain.replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name] ?? '')),
    slackControl,
  );
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

function slackTextObject(value: unknown): SafeHtml {
  const text = obj(value);
  const content = str(text['text']) ?? '';
  return text['type'] === 'mrkdwn' ? slackMrkdwn(content) : html`${emojify(content)}`;
}

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
    case 'image':
      return html`<div class="slack-image">${previewImage(str(block['image_url']), str(block['alt_text']))}</div>`;
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

interface SlackBlock {
  type: string;
  text?: { text: string };
  fields?: Array<{ text: string }>;
  /** Context elements (text), or an actions block's buttons (text object, and a url for a link). */
  elements?: Array<{ text: string | { text: string }; url?: string }>;
  /** An image block's picture (the account's cost trend). */
  image_url?: string;
}

export function blockKitBuilderLink(blocks: unknown): string {
  return `https://app.slack.com/block-kit-builder#${encodeURIComponent(JSON.stringify({ blocks }))}`;
}

/** A rough terminal rendering of a Block Kit message, enough to see what a channel would show. */
export function renderSlack(message: { text?: string; blocks?: SlackBlock[] }): string {
  // A message of text alone (a triage follow-up) shows its text, as Slack does.
  if (!message.blocks?.length) return message.text ?? '';
  const lines: string[] = [];
  for (const block of message.blocks) {
    if (block.type === 'header' && block.text) lines.push(bold(block.text.text));
    if (block.type === 'section' && block.text) lines.push(block.text.text);
    if (block.type === 'section' && block.fields) lines.push(block.fields.map((f) => f.text.replace('\n', ' ')).join('   '));
    if (block.type === 'context' && block.elements) lines.push(dim(block.elements.map((e) => e.text).join('  ')));
    if (block.type === 'actions' && block.elements) lines.push(block.elements.map(terminalButton).join('  '));
    if (block.type === 'image' && block.image_url) lines.push(`${bold('[picture]')} ${block.image_url}`);
  }
  return lines.join('\n');
}

/**
 * Plays Slack's Web API for a Slack app destination: `chat.postMessage` (an opening, or a reply
 * in a thread) and `chat.update` (the opening edited), each printed with what it does to the
 * channel, and recorded for the preview page with its place in the thread.
 */
function webApi(method: string, body: unknown, known: Set<string>, nextTs: () => string): ConsoleAnswer {
  const call = obj(body) as { channel?: string; ts?: string; thread_ts?: string; text?: string; blocks?: SlackBlock[] };
  const channel = call.channel ?? '';
  const answer = (value: unknown, show: string[] = [], record?: unknown): ConsoleAnswer => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
    show,
    ...(record !== undefined ? { record } : {}),
  });
  if (method === 'chat.update') {
    if (!call.ts || !known.has(call.ts)) return answer({ ok: false, error: 'message_not_found' });
    const show = [`\n── Slack app: message ${call.ts} in ${channel} edited (console destination) ──\n${renderSlack(call)}\n`];
    return answer({ ok: true, channel, ts: call.ts }, show, call);
  }
  if (method !== 'chat.postMessage') return answer({ ok: false, error: 'unknown_method' });
  const ts = nextTs();
  const where = call.thread_ts ? `reply in the thread of message ${call.thread_ts}` : `new message ${ts}`;
  if (!call.thread_ts) known.add(ts);
  const show = [`\n── Slack app: ${where} in ${channel} (console destination) ──\n${renderSlack(call)}\n`];
  return answer({ ok: true, channel, ts }, show, call.thread_ts ? call : { ...call, ts });
}

/** Where the console plays Slack's Web API: `/console/slack/api/<method>`. */
const API_REST = '/api/';

const SLACK_TEXTS = new Set(['text']);

export const tools: KindTools = {
  conformance: {
    variants: (base) => [
      { name: 'incoming webhook', destination: { url: `${base}/services/T0/B0/HOOKSECRET` } },
      {
        name: 'app channel',
        destination: { channel: 'C0CONTRACT' },
        env: { SLACK_API_URL: `${base}/api/` },
        app: { botToken: 'xoxb-contract-bot-token', signingSecret: 'contract-signing-secret' },
      },
    ],
    // The Web API answers a posted message with where it is; a webhook reads `ok` alone.
    accepted: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true,"channel":"C0CONTRACT","ts":"1.000100"}' },
    // Plain text is shown as written, so only mrkdwn and the notification text can form anything.
    shown: (body) => [str(obj(body)['text']) ?? '', ...textsIn(body, SLACK_TEXTS, (object) => object['type'] === 'mrkdwn')],
    secrets: (destination) => [(destination as { url?: string }).url ?? '', 'HOOKSECRET'].filter(Boolean),
    maxBytes: 40_000,
  },
  name: 'Slack',
  fidelity: 'HTML approximation of Block Kit, not Slack’s own rendering',
  preview: slackMessage,
  createConsole() {
    let next = 1;
    const known = new Set<string>();
    const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(next++).padStart(6, '0')}`;
    return (rest, body) => {
      if (rest.startsWith(API_REST)) return webApi(rest.slice(API_REST.length), body, known, nextTs);
      const message = obj(body) as { text?: string; blocks?: SlackBlock[] };
      return {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: 'ok',
        show: [
          `\n── Slack message (console destination) ──\n${renderSlack(message)}\n`,
          `notification text: ${message.text ?? ''}`,
          `preview in Block Kit Builder: ${blockKitBuilderLink(message.blocks ?? [])}\n`,
        ],
        record: body,
      };
    };
  },
  // Slack app destinations post to the console's Web API.
  consoleEnvironment: (base) => ({ SLACK_API_URL: `${base}/slack${API_REST}` }),
};
