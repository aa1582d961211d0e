// How `npm start` and its preview page show Teams: a console that plays a Workflows webhook, and
// the card left to Microsoft's Adaptive Cards renderer in the browser. Loaded by the scripts and
// tests (lib/notify/tools.ts), never by a function.
import type { KindTools } from '../kind.js';
import { arr, bold, html, obj, type SafeHtml, terminalButton, textsIn, unsupported } from '../preview.js';

interface CardElement {
  type: string;
  text?: string;
  facts?: Array<{ title: string; value: string }>;
}

function renderCard(elements: CardElement[]): string {
  return elements
    .map((e, i) => {
      if (e.type === 'FactSet') return (e.facts ?? []).map((f) => `${f.title}: ${f.value}`).join('   ');
      return i === 0 ? bold(e.text ?? '') : (e.text ?? '');
    })
    .join('\n');
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

const TEAMS_TEXTS = new Set(['text', 'title', 'value']);

export const tools: KindTools = {
  conformance: {
    variants: (base) => [
      { name: 'workflow webhook', destination: { type: 'teams', url: `${base}/workflows/1/triggers/manual/paths/invoke?sig=TEAMSSECRET` } },
    ],
    accepted: { status: 202, body: '' },
    shown: (body) => textsIn(body, TEAMS_TEXTS),
    secrets: (destination) => [(destination as { url: string }).url, 'TEAMSSECRET'],
    maxBytes: 28_000,
  },
  name: 'Microsoft Teams',
  fidelity: 'Rendered by Microsoft’s Adaptive Cards renderer; the surrounding chat is approximate',
  preview: teamsMessage,
  createConsole: () => (_rest, body) => {
    const card = (body as { attachments?: Array<{ content?: { body?: CardElement[]; actions?: Array<{ title: string; url?: string }> } }> })
      .attachments?.[0]?.content;
    const actions = (card?.actions ?? []).map((a) => terminalButton({ text: a.title, ...(a.url ? { url: a.url } : {}) }));
    return {
      // A workflow answers 202 with no body: the run is only queued.
      status: 202,
      show: [
        `\n── Microsoft Teams card (console destination) ──\n${[renderCard(card?.body ?? []), ...actions].join('\n')}\n`,
        'card JSON (paste into the Adaptive Cards Designer, https://adaptivecards.io/designer, host app "Microsoft Teams"):',
        `${JSON.stringify(card, null, 2)}\n`,
      ],
      record: body,
    };
  },
};
