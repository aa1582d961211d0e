// The preview page's server-side rendering: what a reader sees of each message, and that
// sender text never becomes markup whatever shape a console delivery has.
import { describe, expect, it } from 'vitest';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { chatCardHtml } from '../../lib/notify/googlechat/tools.js';
import { html } from '../../lib/notify/preview.js';
import { renderSlack, slackMrkdwn } from '../../lib/notify/slack/tools.js';
import { tools as teamsTools } from '../../lib/notify/teams/tools.js';
import { createConsoles, loadKindTools } from '../../scripts/console-chat.js';
import { DeliveryLog, destinationsAt } from '../../scripts/preview/deliveries.js';
import { previewPage } from '../../scripts/preview/render.js';

const HOSTILE = `<script>alert(1)</script><img src=x onerror="alert(2)">'"&`;
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;&#39;&quot;&amp;';

describe('the preview page renderer', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    expect(html`<p title="${HOSTILE}">${HOSTILE}</p>`.value).toBe(`<p title="${ESCAPED}">${ESCAPED}</p>`);
  });

  it('shows Slack mrkdwn as Slack would: entities undone, emphasis, mentions, dates, and no markup from text', () => {
    const shown = slackMrkdwn(
      '<!here> *Account*\n&lt;b&gt;x&lt;/b&gt; &amp; <!date^1795271525^{date_short_pretty}|2026-11-21> :rotating_light:',
    ).value;
    expect(shown).toContain('<span class="mention">@here</span>');
    expect(shown).toContain('<strong>Account</strong>');
    expect(shown).toContain('&lt;b&gt;x&lt;/b&gt; &amp;');
    expect(shown).toContain('<time class="local-time" datetime="2026-11-21T14:32:05.000Z">2026-11-21</time>');
    expect(shown).toContain('🚨');
    expect(slackMrkdwn(`&lt;${HOSTILE}`).value).not.toMatch(/<(script|img)/);
  });

  it('keeps the HTML subset of Google Chat cards balanced and attribute-free', () => {
    expect(chatCardHtml('<b>bold <i>both</b> after &lt;img&gt;').value).toBe('<strong>bold <em>both</em></strong> after &lt;img&gt;');
    expect(chatCardHtml('<a href="javascript:alert(1)">x</a><font color="red" onmouseover="y">z').value).toBe(
      '<span class="link">x</span><span>z</span>',
    );
    expect(chatCardHtml(HOSTILE).value).not.toMatch(/<(script|img)/);
  });

  it("the terminal shows a link button with its address, any other button as its label, whatever the chat's form", () => {
    const shown = renderSlack({
      blocks: [
        {
          type: 'actions',
          elements: [{ text: { text: 'Triage' }, url: 'https://api.example.com/triage/t' }, { text: { text: 'Acknowledge' } }],
        },
      ],
    });
    expect(shown).toBe('\x1b[1m[Triage]\x1b[0m https://api.example.com/triage/t  \x1b[1m[Acknowledge]\x1b[0m');
    const teams = {
      attachments: [{ content: { body: [], actions: [{ title: 'Triage', url: 'https://api.example.com/triage/t' }, { title: 'Open' }] } }],
    };
    const printed = teamsTools.createConsole()('', teams).show.join('\n');
    expect(printed).toContain('\x1b[1m[Triage]\x1b[0m https://api.example.com/triage/t\n\x1b[1m[Open]\x1b[0m\n');
  });

  it('draws any JSON a console path received without throwing, and never unescaped', () => {
    const log = new DeliveryLog();
    for (const body of [
      null,
      42,
      'text',
      [],
      { blocks: 'x', cardsV2: [null, { card: { sections: [{ widgets: [{ unknownWidget: {} }] }] } }] },
      { attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { body: HOSTILE } }] },
    ]) {
      log.record('slack', body);
      log.record('teams', body);
      log.record('googlechat', body);
    }
    log.record('slack', { text: HOSTILE, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: HOSTILE } }, { type: 'rich_text' }] });
    const page = previewPage(log.list(), log.latestId(), log.limit);
    // The page's own scripts are in <head>; nothing in <body> may be markup that runs or loads.
    expect(page.slice(page.indexOf('<body'))).not.toMatch(/<(script|img|svg|iframe)\b/i);
    expect(page).toContain('a Slack &quot;rich_text&quot; block: not drawn by this approximation');
  });

  it('keeps only the newest deliveries, newest first', () => {
    const log = new DeliveryLog(3);
    for (let i = 1; i <= 5; i++) log.record('slack', { text: `alert ${i}` });
    expect(log.list().map((d) => (d.body as { text: string }).text)).toEqual(['alert 5', 'alert 4', 'alert 3']);
    expect(log.latestId()).toBe(5);
  });

  it('names the destination each message was for, escaped, so that two cards of one service tell apart', async () => {
    const config = relayConfigSchema.parse({
      auth: { method: 'none' },
      slack: { botToken: 'xoxb-preview' },
      destinations: {
        default: { url: 'http://127.0.0.1:3000/console/slack' },
        finops: { url: 'http://127.0.0.1:3000/console/slack/finops' },
        [HOSTILE]: { url: 'http://127.0.0.1:3000/console/slack/finops' },
        'slack-app': { channel: 'CCONSOLE01' },
        teams: { type: 'teams', url: 'http://127.0.0.1:3000/console/teams?x=1' },
      },
    });
    const log = new DeliveryLog();
    // Through the consoles as npm start wires them: where each post arrived names its destinations.
    const consoles = createConsoles(
      await loadKindTools(),
      () => undefined,
      (type, body, at) => log.record(type, body, destinationsAt(config, at)),
    );
    const post = (url: string, body: unknown) => {
      const path = url.split('?')[0]!;
      const [, type = '', rest = ''] = /^\/console\/([a-z]+)(\/.*)?$/.exec(path) ?? [];
      const res = { writeHead: () => ({ end: () => undefined }) };
      consoles({ type: type as 'slack', rest }, { method: 'POST', url } as never, res as never, Buffer.from(JSON.stringify(body)));
    };
    post('/console/slack', { text: 'a' });
    post('/console/slack/finops', { text: 'b' });
    post('/console/slack/api/chat.postMessage', { channel: 'CCONSOLE01', text: 'c' });
    post('/console/teams?x=1', { type: 'message', attachments: [] });
    post('/console/slack/elsewhere', { text: 'd' });
    expect(log.list().map((d) => d.destinations)).toEqual([[], ['teams'], ['slack-app'], ['finops', HOSTILE], ['default']]);
    const page = previewPage(log.list(), log.latestId(), log.limit);
    expect(page).toContain('<span class="destination">default</span>');
    expect(page).toContain('<span class="destination">slack-app</span>');
    expect(page).toContain(`<span class="destination">finops, ${ESCAPED}</span>`);
    expect(page.slice(page.indexOf('<body'))).not.toMatch(/<(script|img)\b/i);
  });
});
