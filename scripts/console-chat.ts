// The console destination of `npm start`: plays Slack, Teams and Google Chat on loopback and
// prints what each would show, with a way to preview it in the service's own designer; the
// preview page (scripts/preview) shows the same deliveries in a browser.
import type { IncomingMessage, ServerResponse } from 'node:http';

interface SlackBlock {
  type: string;
  text?: { text: string };
  fields?: Array<{ text: string }>;
  /** Context elements (text), or an actions block's buttons (text object, and a url for a link). */
  elements?: Array<{ text: string | { text: string }; url?: string }>;
}
interface CardElement {
  type: string;
  text?: string;
  facts?: Array<{ title: string; value: string }>;
}

export const CONSOLE_TYPES = ['slack', 'teams', 'googlechat'] as const;
export type ConsoleType = (typeof CONSOLE_TYPES)[number];

interface ChatButton {
  text: string;
  onClick?: { openLink?: { url?: string } };
}

const bold = (text: string) => `\x1b[1m${text}\x1b[0m`;
const dim = (text: string) => `\x1b[2m${text}\x1b[0m`;

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
    if (block.type === 'actions' && block.elements) lines.push(block.elements.map(button).join('  '));
  }
  return lines.join('\n');
}

/** A button as the terminal shows it; a link button with its URL, so the triage page is a click away. */
const button = (b: { text: string | { text: string }; url?: string }): string => {
  const label = `[${typeof b.text === 'string' ? b.text : b.text.text}]`;
  return b.url ? `${bold(label)} ${b.url}` : bold(label);
};

function renderCard(elements: CardElement[]): string {
  return elements
    .map((e, i) => {
      if (e.type === 'FactSet') return (e.facts ?? []).map((f) => `${f.title}: ${f.value}`).join('   ');
      return i === 0 ? bold(e.text ?? '') : (e.text ?? '');
    })
    .join('\n');
}

/** What each type prints, and how the console answers like the real service. */
const CONSOLES: Record<ConsoleType, { show(body: unknown): string[]; answer(res: ServerResponse): void }> = {
  slack: {
    show: (body) => {
      const message = body as { text?: string; blocks?: SlackBlock[] };
      return [
        `\n── Slack message (console destination) ──\n${renderSlack(message)}\n`,
        `notification text: ${message.text ?? ''}`,
        `preview in Block Kit Builder: ${blockKitBuilderLink(message.blocks ?? [])}\n`,
      ];
    },
    answer: (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
  },
  teams: {
    show: (body) => {
      const card = (
        body as { attachments?: Array<{ content?: { body?: CardElement[]; actions?: Array<{ title: string; url?: string }> } }> }
      ).attachments?.[0]?.content;
      const actions = (card?.actions ?? []).map((a) => button({ text: a.title, ...(a.url ? { url: a.url } : {}) }));
      return [
        `\n── Microsoft Teams card (console destination) ──\n${[renderCard(card?.body ?? []), ...actions].join('\n')}\n`,
        'card JSON (paste into the Adaptive Cards Designer, https://adaptivecards.io/designer, host app "Microsoft Teams"):',
        `${JSON.stringify(card, null, 2)}\n`,
      ];
    },
    // A workflow answers 202 with no body: the run is only queued.
    answer: (res) => res.writeHead(202).end(),
  },
  googlechat: {
    show: (body) => {
      const message = body as { text?: string; cardsV2?: Array<{ card?: unknown }>; thread?: { threadKey?: string } };
      const card = message.cardsV2?.[0]?.card as { sections?: Array<{ widgets?: Array<{ buttonList?: { buttons?: ChatButton[] } }> }> };
      const links = (card?.sections ?? [])
        .flatMap((section) => section.widgets ?? [])
        .flatMap((widget) => widget.buttonList?.buttons ?? [])
        .map((b) => button({ text: b.text, ...(b.onClick?.openLink?.url ? { url: b.onClick.openLink.url } : {}) }));
      return [
        `\n── Google Chat message (console destination) ──\n${[message.text ?? '', ...links].join('\n')}\n`,
        `thread key: ${message.thread?.threadKey ?? ''}`,
        'card JSON (paste into the Card Builder, https://addons.gsuite.google.com/uikit/builder):',
        `${JSON.stringify(message.cardsV2?.[0]?.card, null, 2)}\n`,
      ];
    },
    answer: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"spaces/CONSOLE/messages/1"}'),
  },
};

/** The console type a request path asks for: `/console/teams`, …; plain `/console` is Slack. */
export function consoleTypeOf(path: string): ConsoleType | undefined {
  if (path === '/console') return 'slack';
  const type = /^\/console\/([a-z]+)$/.exec(path)?.[1];
  return CONSOLE_TYPES.find((t) => t === type);
}

/** Handles one request to a console path: prints the preview, answers as the service would. */
export function handleConsoleRequest(
  type: ConsoleType,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  print: (text: string) => void = console.log,
  record?: (type: ConsoleType, body: unknown) => void,
): void {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid_payload');
    return;
  }
  for (const line of CONSOLES[type].show(parsed)) print(line);
  record?.(type, parsed);
  CONSOLES[type].answer(res);
}

/** Where the console plays Slack's Web API, for the console Slack app destination of `npm start`. */
export const CONSOLE_SLACK_API_PATH = '/console/slack-api/';

/**
 * Plays Slack's Web API for a Slack app destination: `chat.postMessage` (an opening, or a reply
 * in a thread) and `chat.update` (the opening edited), each printed with what it does to the
 * channel, and recorded for the preview page with its place in the thread.
 */
export function createConsoleSlackApi(print: (text: string) => void = console.log, record?: (type: ConsoleType, body: unknown) => void) {
  let next = 1;
  const known = new Set<string>();
  return (method: string, res: ServerResponse, body: Buffer): void => {
    let call: { channel?: string; ts?: string; thread_ts?: string; text?: string; blocks?: SlackBlock[] };
    try {
      call = JSON.parse(body.toString('utf8')) as typeof call;
    } catch {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":false,"error":"invalid_json"}');
      return;
    }
    const channel = call.channel ?? '';
    const answer = (value: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    if (method === 'chat.update') {
      if (!call.ts || !known.has(call.ts)) {
        answer({ ok: false, error: 'message_not_found' });
        return;
      }
      print(`\n── Slack app: message ${call.ts} in ${channel} edited (console destination) ──\n${renderSlack(call)}\n`);
      record?.('slack', call);
      answer({ ok: true, channel, ts: call.ts });
      return;
    }
    if (method !== 'chat.postMessage') {
      answer({ ok: false, error: 'unknown_method' });
      return;
    }
    const ts = `${Math.floor(Date.now() / 1000)}.${String(next++).padStart(6, '0')}`;
    const where = call.thread_ts ? `reply in the thread of message ${call.thread_ts}` : `new message ${ts}`;
    if (!call.thread_ts) known.add(ts);
    print(`\n── Slack app: ${where} in ${channel} (console destination) ──\n${renderSlack(call)}\n`);
    record?.('slack', call.thread_ts ? call : { ...call, ts });
    answer({ ok: true, channel, ts });
  };
}
