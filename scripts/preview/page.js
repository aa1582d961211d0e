// The preview page's only script: a served file, so the page's CSP needs no inline script.
// It renders each Teams card with Microsoft's Adaptive Cards renderer (loaded before it),
// shows Slack's dates in the reader's time zone, and reloads when a new delivery arrives.
/* global AdaptiveCards */

const POLL_MS = 2000;

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/**
 * The Markdown subset Teams renders in TextBlocks and facts (bold, italic, lists, https links).
 * The renderer puts the result into the page as HTML, so the text is escaped before any
 * markup is added: only the tags written here can appear.
 */
function teamsMarkdown(text) {
  const inline = (line) =>
    escapeHtml(line)
      .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s).,;:!?])/g, '$1<em>$2</em>')
      .replace(/\[([^\]\n]+)\]\((https:\/\/[^)\s]+)\)/g, '<a href="$2" target="_blank" rel="noopener noreferrer">$1</a>');
  return text
    .split(/\n{2,}/)
    .map((paragraph) => {
      const lines = paragraph.split('\n');
      if (lines.every((line) => /^- /.test(line))) return `<ul>${lines.map((line) => `<li>${inline(line.slice(2))}</li>`).join('')}</ul>`;
      if (lines.every((line) => /^\d+\. /.test(line)))
        return `<ol>${lines.map((line) => `<li>${inline(line.replace(/^\d+\. /, ''))}</li>`).join('')}</ol>`;
      return `<p>${lines.map(inline).join('<br>')}</p>`;
    })
    .join('');
}

// Close to the Teams light theme, so the picture resembles a channel.
const TEAMS_HOST_CONFIG = {
  fontFamily: "'Segoe UI', system-ui, -apple-system, sans-serif",
  supportsInteractivity: true,
  spacing: { small: 4, default: 8, medium: 12, large: 16, extraLarge: 20, padding: 16 },
  fontSizes: { small: 12, default: 14, medium: 16, large: 18, extraLarge: 24 },
  containerStyles: {
    default: { backgroundColor: '#FFFFFF', foregroundColors: { default: { default: '#242424', subtle: '#616161' } } },
  },
  factSet: { title: { weight: 'bolder', wrap: true, maxWidth: 150 }, value: { wrap: true }, spacing: 12 },
  actions: {
    maxActions: 6,
    buttonSpacing: 8,
    actionsOrientation: 'horizontal',
    actionAlignment: 'left',
    showCard: { actionMode: 'inline' },
  },
};

function renderTeamsCards() {
  if (typeof AdaptiveCards === 'undefined') {
    for (const holder of document.querySelectorAll('.teams-card'))
      holder.replaceChildren(note('The Adaptive Cards renderer did not load (is node_modules installed?).'));
    return;
  }
  AdaptiveCards.AdaptiveCard.onProcessMarkdown = (text, result) => {
    result.outputHtml = teamsMarkdown(text);
    result.didProcess = true;
  };
  for (const holder of document.querySelectorAll('.teams-card[data-card]')) {
    try {
      const card = new AdaptiveCards.AdaptiveCard();
      card.hostConfig = new AdaptiveCards.HostConfig(TEAMS_HOST_CONFIG);
      card.onExecuteAction = (action) => {
        if (action instanceof AdaptiveCards.OpenUrlAction && openable(action.url ?? ''))
          window.open(action.url, '_blank', 'noopener,noreferrer');
      };
      card.parse(JSON.parse(holder.dataset.card));
      const problems = card.validateProperties().validationEvents.map((event) => event.message);
      holder.replaceChildren(card.render() ?? note('The renderer produced nothing for this card.'));
      // Teams shows an error placeholder for cards its renderer finds invalid; say so here.
      if (problems.length > 0) holder.append(note(`The renderer reported: ${problems.join('; ')}`));
    } catch (error) {
      holder.replaceChildren(
        note(`The Adaptive Cards renderer could not render this card: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  }
}

// Teams opens a card's links; the "Triage" link of npm start leads to this machine over plain
// http, so that is opened too (the relay's own rule: https, or http to loopback).
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;
function openable(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && LOOPBACK.test(parsed.hostname));
  } catch {
    return false;
  }
}

function note(text) {
  const p = document.createElement('p');
  p.className = 'renderer-note';
  p.textContent = text;
  return p;
}

function localizeTimes() {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  for (const time of document.querySelectorAll('time.local-time[datetime]')) {
    const date = new Date(time.getAttribute('datetime'));
    if (!Number.isNaN(date.getTime())) time.textContent = format.format(date);
  }
}

async function reloadOnNewDelivery() {
  const shown = document.body.dataset.latest;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (document.hidden) continue;
    try {
      const answer = await fetch('/deliveries.json', { cache: 'no-store' });
      const { latest } = await answer.json();
      // A restarted server counts from zero again: any difference means the page is stale.
      if (String(latest) !== shown) {
        location.reload();
        return;
      }
    } catch {
      // The server is stopped or restarting; keep asking.
    }
  }
}

renderTeamsCards();
localizeTimes();
reloadOnNewDelivery();
