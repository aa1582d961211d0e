// The preview page's server-side rendering: what a reader sees of each message, and that
// sender text never becomes markup whatever shape a console delivery has.
import { describe, expect, it } from 'vitest';
import { chatCardHtml } from '../../lib/notify/googlechat/lazy-googlechat-tools.js';
import { html } from '../../lib/notify/preview.js';
import { slackMrkdwn } from '../../lib/notify/slack/lazy-slack-tools.js';
import { DeliveryLog } from '../../scripts/preview/deliveries.js';
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
});
