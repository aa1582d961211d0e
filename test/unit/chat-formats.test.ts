import { describe, expect, it } from 'vitest';
import anomaly from '../../events/anomaly-alert.json' with { type: 'json' };
import hostile from '../../events/bad/hostile-text.json' with { type: 'json' };
import { inertText } from '../../lib/format/text.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { escapeCardHtml, escapeGoogleChatText, formatGoogleChatMessage } from '../../lib/notify/googlechat/format.js';
import { threadKeyFor } from '../../lib/notify/googlechat/thread.js';
import { formatSlackMessage } from '../../lib/notify/slack/format.js';
import { escapeTeamsText, formatTeamsMessage, TEAMS_MAX_BYTES } from '../../lib/notify/teams/format.js';
import {
  googleChatCardTexts,
  googleChatLiveForms,
  googleChatSenderTexts,
  googleChatViolations,
  senderMarkup,
  teamsLiveMarkup,
  teamsSenderTexts,
  teamsTexts,
  teamsViolations,
} from '../helpers/chat-limits.js';
import { liveSpecialForms, slackSenderTexts } from '../helpers/slack-limits.js';

const parse = (value: unknown) => webhookMessageSchema.parse(value);
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
// 58 KiB of text that costs the most once escaped: `&` grows fivefold in card HTML, CJK takes three bytes.
const huge = (unit: string) => unit.repeat(Math.ceil((58 * 1024) / Buffer.byteLength(unit)));
// The last: markup and link parts, each replaced by a three-byte look-alike, and bidi controls.
const hugeInputs = [
  huge('a'),
  huge('&'),
  huge('<'),
  huge('界'),
  huge('😀'),
  huge('\u0001a'),
  huge('*_[x](y) '),
  huge('\u202E*_~`a.b@c:d\n> '),
];

describe('Teams Adaptive Card', () => {
  const card = (value: unknown, mention?: { id: string; name: string }) => formatTeamsMessage(parse(value), mention);

  it('shows title with emoji, message, facts and a time the reader sees in their own zone, full width, wrapped', () => {
    const out = card(anomaly);
    expect(teamsViolations(out)).toEqual([]);
    const content = out.attachments[0].content;
    expect(content.body[0]).toMatchObject({
      type: 'TextBlock',
      text: '🚨 Cost anomaly detected: Amazon EC2 in us-east-1',
      weight: 'Bolder',
      wrap: true,
    });
    expect(content.body).toContainEqual(
      expect.objectContaining({ type: 'TextBlock', text: expect.stringContaining('Daily cost of Amazon EC2') }),
    );
    expect(content.body).toContainEqual({
      type: 'FactSet',
      facts: [
        { title: 'Kind', value: 'Cost anomaly' },
        { title: 'Cloud', value: 'AWS' },
        { title: 'Account', value: 'Production payer (123456789012)' },
      ],
    });
    expect(teamsTexts(out).at(-1)).toBe('🕒 {{DATE(2026-11-21T14:32:05Z, SHORT)}} {{TIME(2026-11-21T14:32:05Z)}}');
    expect(content.msteams).toEqual({ width: 'Full' });
  });

  it('turns hostile sender text into plain text: no link, emphasis, list, <at> mention or card function', () => {
    const out = card(
      {
        metadata: { object_type: 'anomaly_alert', timestamp: '{{DATE(2020-01-01T00:00:00Z)}}' },
        payload: {
          title: '**Urgent** [claim refund](https://evil.example)',
          message: '- item\n1. first\n<at>Jane Doe</at> _see_ [here](https://evil.example) {{TIME(2020-01-01T00:00:00Z)}}',
          account_name: '[Acme](https://evil.example)',
          cloud_provider_type: '<b>aws</b>',
        },
      },
      { id: 'jane@example.com', name: 'Jane Doe' },
    );
    const [, mention, ...rest] = teamsTexts(out);
    expect(mention).toBe('<at>Jane Doe</at>');
    for (const text of [teamsTexts(out)[0]!, ...rest]) expect(teamsLiveMarkup(text), text).toEqual([]);
    // Still readable: the look-alikes read the same, and the address is no link.
    expect(teamsTexts(out)[0]).toBe('🚨 ＊＊Urgent＊＊ ［claim refund］(https∶//evil․example)');
    // Only the configured mention has an entity; the sender's <at> pings no one.
    expect(out.attachments[0].content.msteams.entities).toEqual([
      { type: 'mention', text: '<at>Jane Doe</at>', mentioned: { id: 'jane@example.com', name: 'Jane Doe' } },
    ]);
  });

  it('neutralises list markers and card functions but keeps the words', () => {
    expect(escapeTeamsText('- a\n  + b\n10. c\nplain - dash')).toBe('-\u00A0a\n  +\u00A0b\n10.\u00A0c\nplain - dash');
    expect(escapeTeamsText('{{DATE(x)}}')).toBe('{\u200B{DATE(x)}}');
    // Found by the property test: a third brace must not leave a pair behind.
    expect(escapeTeamsText('{{{DATE(x)}}')).toBe('{\u200B{\u200B{DATE(x)}}');
    expect(teamsLiveMarkup(escapeTeamsText('{{{{TIME(x)}}'))).toEqual([]);
    expect(escapeTeamsText('tab\there\r\nbell\u0007')).toBe('tab\there\nbell');
  });

  it.each(hugeInputs.map((text, i) => [i, text] as const))(
    'keeps 58 KiB of input (#%i) within %s bytes and cuts it visibly',
    (_i, text) => {
      const out = card({
        metadata: { object_type: 'anomaly_alert' },
        payload: { title: text, message: text, account_name: text, account_id: text, cloud_provider_type: text },
      });
      expect(teamsViolations(out)).toEqual([]);
      expect(bytes(out)).toBeLessThanOrEqual(TEAMS_MAX_BYTES);
      for (const t of teamsSenderTexts(out)) expect(senderMarkup(t)).toEqual([]);
      expect(teamsTexts(out)[0]!.endsWith('…')).toBe(true);
      const message = teamsTexts(out)[1]!;
      if (text.trim() !== '') expect(message.endsWith('…')).toBe(true);
    },
  );
});

describe('Google Chat card', () => {
  const chat = (value: unknown, mention?: string) => formatGoogleChatMessage(parse(value), mention);

  it('has notification text, a header, facts as decoratedText, the message as textParagraph and a thread key', () => {
    const out = chat(anomaly);
    expect(googleChatViolations(out)).toEqual([]);
    // The notification names the alert; the card below it carries the message.
    expect(out.text).toBe('🚨 Cost anomaly detected: Amazon EC2 in us-east-1');
    const card = out.cardsV2[0].card;
    expect(card.header).toEqual({
      title: '🚨 Cost anomaly detected: Amazon EC2 in us-east-1',
      subtitle: 'Cost anomaly · Production payer (123456789012)',
    });
    expect(card.sections[0].widgets).toEqual([
      { textParagraph: { text: expect.stringContaining('Daily cost of Amazon EC2') } },
      { decoratedText: { topLabel: 'Kind', text: 'Cost anomaly', wrapText: true } },
      { decoratedText: { topLabel: 'Cloud', text: 'AWS', wrapText: true } },
      { decoratedText: { topLabel: 'Account', text: 'Production payer (123456789012)', wrapText: true } },
      { decoratedText: { topLabel: 'Time', text: '2026-11-21 14:32:05 UTC' } },
    ]);
    expect(out.thread.threadKey).toMatch(/^cost-alert-[0-9a-f]{32}$/);
  });

  it('puts repeated alerts of one kind, account and title in one thread, others elsewhere; the key holds no alert text', () => {
    const key = (title: string, account = '123456789012', kind = 'anomaly_alert') =>
      threadKeyFor(parse({ metadata: { object_type: kind }, payload: { title, account_id: account, message: `varies ${Math.random()}` } }));
    expect(key('EC2 spend up')).toBe(key('EC2 spend up'));
    expect(key('EC2  spend up ')).toBe(key('EC2 spend up'));
    expect(key('EC2 spend up')).not.toBe(key('S3 spend up'));
    expect(key('EC2 spend up')).not.toBe(key('EC2 spend up', '999999999999'));
    expect(key('EC2 spend up')).not.toBe(key('EC2 spend up', '123456789012', 'budget_alert'));
    expect(key('EC2 spend up')).not.toContain('EC2');
  });

  it('leaves no raw < in the text and no tag in the card; the configured mention is the only live one', () => {
    const out = chat(hostile, '<users/all>');
    expect(out.text.startsWith('<users/all> ')).toBe(true);
    expect(googleChatLiveForms(out, '<users/all>')).toEqual([]);
    expect(out.text).toContain('‹!channel› Urgent: ‹https∶//evil․example|click to claim refund›');
    expect(googleChatCardTexts(out)).toContain('Acme &amp; &lt;Partners&gt; (&lt;＠U999&gt;)');
    const html = chat({
      metadata: { object_type: 'x' },
      payload: { message: '<a href="https://evil.example">refund</a><br><users/all>\nline two' },
    });
    expect(googleChatLiveForms(html)).toEqual([]);
    expect(googleChatCardTexts(html)[0]).toBe(
      '&lt;a href="https∶//evil․example"&gt;refund&lt;/a&gt;&lt;br&gt;&lt;users/all&gt;<br>line two',
    );
  });

  it('escapes & < > for card HTML and < > for text, nothing else', () => {
    expect(escapeCardHtml('a & <b> "c"')).toBe('a &amp; &lt;b&gt; "c"');
    expect(escapeGoogleChatText('<users/all> *bold* <url|x>')).toBe('‹users/all› *bold* ‹url|x›');
  });

  it('keeps a huge kind within budget when no account is given (the kind is then the subtitle)', () => {
    const out = chat({ metadata: { object_type: '<!channel> & '.repeat(3_000) }, payload: { message: '!' } });
    expect(googleChatViolations(out)).toEqual([]);
    expect(out.cardsV2[0].card.header.subtitle?.endsWith('…')).toBe(true);
  });

  it.each(hugeInputs.map((text, i) => [i, text] as const))(
    'keeps 58 KiB of input (#%i) within 32,000 bytes and 4,096 characters of text',
    (_i, text) => {
      const out = chat(
        {
          metadata: { object_type: 'anomaly_alert' },
          payload: { title: text, message: text, account_name: text, account_id: text, cloud_provider_type: text },
        },
        '<users/123>',
      );
      expect(googleChatViolations(out)).toEqual([]);
      for (const t of googleChatSenderTexts(out, '<users/123>')) expect(senderMarkup(t)).toEqual([]);
      expect(out.text.endsWith('…')).toBe(true);
      expect(out.cardsV2[0].card.header.title.endsWith('…')).toBe(true);
      for (const t of googleChatCardTexts(out)) expect(t).not.toMatch(/&[a-z]{0,3}…$/);
    },
  );
});

/** The sender-text parts of one message in each of the three formats, none with a mention configured. */
function senderTextsEverywhere(value: unknown): Record<'slack' | 'teams' | 'googleChat', string[]> {
  const message = parse(value);
  return {
    slack: slackSenderTexts(formatSlackMessage(message)),
    teams: teamsSenderTexts(formatTeamsMessage(message)),
    googleChat: googleChatSenderTexts(formatGoogleChatMessage(message)),
  };
}

describe('sender text in every service', () => {
  const BIDI = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F', '\u061C'];

  it('keeps no bidi control, so an amount or account number reads in the order it was sent', () => {
    // Shown with U+202E, `00.001$` reads as `$100.00`.
    const texts = senderTextsEverywhere({
      metadata: { object_type: 'anomaly_alert', timestamp: `\u202Esoon` },
      payload: {
        title: 'Refund \u202E00.001$',
        message: BIDI.map((c) => `${c}00.001$`).join(' '),
        account_id: '\u2067210987654321\u2069',
        account_name: 'Acme\u200F',
        cloud_provider_type: '\u061Caws',
      },
    });
    for (const [service, list] of Object.entries(texts)) {
      for (const text of list) expect(text, service).not.toMatch(/\p{Bidi_Control}/u);
      const all = list.join('\n');
      expect(all, service).toContain('Refund 00.001$');
      expect(all, service).toContain(Array(BIDI.length).fill('00.001$').join(' '));
      expect(all, service).toContain('210987654321');
    }
  });

  it('formats nothing the sender wrote: no bold, italic, strike, code or quote, and the characters still read', () => {
    const markup = '*bold* _italic_ ~strike~ `code` ```block```';
    const texts = senderTextsEverywhere({
      metadata: { object_type: 'anomaly_alert', timestamp: '`soon`' },
      payload: {
        title: markup,
        message: `${markup}\n> quoted\n  > indented\n\`\`\`\nblock\n\`\`\``,
        account_name: '_Acme_',
        account_id: '*1*',
        cloud_provider_type: '~aws~',
      },
    });
    for (const [service, list] of Object.entries(texts)) {
      for (const text of list) expect(senderMarkup(text), `${service}: ${text}`).toEqual([]);
      const all = list.join('\n');
      expect(all, service).toContain('＊bold＊ ＿italic＿ ～strike～ ｀code｀ ｀｀｀block｀｀｀');
      expect(all, service).toMatch(/＞ quoted/);
      expect(all, service).toContain('＿Acme＿');
    }
  });

  it('links and pings nothing the sender wrote: no URL, address, email, mention or emoji code', () => {
    const links = 'see https://evil.example, www.evil.example or ops@evil.example';
    const pings = '<!here> <@U123> @here #general <users/all> :skull:';
    const value = {
      metadata: { object_type: 'anomaly_alert', timestamp: 'mailto:ops@evil.example' },
      payload: {
        title: `${links} ${pings}`,
        message: `${links}\n${pings}`,
        account_name: 'evil.example',
        account_id: '@U123',
        cloud_provider_type: 'http://evil.example',
      },
    };
    const texts = senderTextsEverywhere(value);
    for (const [service, list] of Object.entries(texts)) {
      for (const text of list) expect(senderMarkup(text), `${service}: ${text}`).toEqual([]);
      expect(list.join('\n'), service).toContain('see https∶//evil․example, www․evil․example or ops＠evil․example');
    }
    const message = parse(value);
    expect(liveSpecialForms(formatSlackMessage(message))).toEqual([]);
    expect(googleChatLiveForms(formatGoogleChatMessage(message))).toEqual([]);
    for (const text of teamsSenderTexts(formatTeamsMessage(message))) expect(teamsLiveMarkup(text), text).toEqual([]);
  });

  it('leaves amounts, times, sentences and words as they are', () => {
    const plain = 'Daily cost rose to $4,812.40 at 14:32, 212% above 1,543.10. Top: analytics-prod, m7i.8xlarge.';
    expect(inertText(plain)).toBe(plain);
    // Only where a link could form does a dot become a look-alike.
    expect(inertText('db.r5.large')).toBe('db․r5․large');
  });
});
