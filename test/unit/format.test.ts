import { describe, expect, it } from 'vitest';
import anomaly from '../../events/anomaly-alert.json' with { type: 'json' };
import hostile from '../../events/bad/hostile-text.json' with { type: 'json' };
import { escapeMrkdwn, escapeMrkdwnAndTruncate, truncate } from '../../lib/format/text.js';
import { parseTimestamp } from '../../lib/format/time.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { formatSlackMessage, SLACK_LIMITS } from '../../lib/notify/slack/format.js';
import { senderMarkup } from '../helpers/chat-limits.js';
import { liveSpecialForms, slackLimitViolations, slackSenderTexts } from '../helpers/slack-limits.js';

const parse = (value: unknown) => webhookMessageSchema.parse(value);

describe('escaping', () => {
  it('replaces exactly the three control characters', () => {
    expect(escapeMrkdwn('a & b < c > d "e" \'f\'')).toBe('a &amp; b &lt; c &gt; d "e" \'f\'');
  });

  it('truncates visibly and never splits a surrogate pair or an entity', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('ab😀cd', 4)).toBe('ab…');
    const cut = escapeMrkdwnAndTruncate('aaaa<<<<', 7);
    expect(cut.length).toBeLessThanOrEqual(7);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut).not.toMatch(/&[a-z]*…$/);
  });
});

describe('timestamps', () => {
  it('reads ISO, space-separated and epoch forms; refuses loose text', () => {
    expect(parseTimestamp('2026-11-21T14:32:05Z')).toBe(1795271525);
    expect(parseTimestamp('1795271525')).toBe(1795271525);
    expect(parseTimestamp('1795271525000')).toBe(1795271525);
    expect(parseTimestamp('2026-11-21 14:32:05Z')).toBe(1795271525);
    expect(parseTimestamp('May 3')).toBeUndefined();
    expect(parseTimestamp('1969-12-31T23:59:59.999Z')).toBeUndefined();
    expect(parseTimestamp('2026-13-45')).toBeUndefined();
    expect(parseTimestamp(undefined)).toBeUndefined();
  });
});

describe('formatSlackMessage', () => {
  it('shows an anomaly with title header, message, cloud, account, kind and a local time', () => {
    const out = formatSlackMessage(parse(anomaly));
    expect(out.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: ':rotating_light: Cost anomaly detected: Amazon EC2 in us-east-1', emoji: true },
    });
    const json = JSON.stringify(out);
    expect(json).toContain('Daily cost of Amazon EC2');
    expect(json).toContain('*Cloud*\\nAWS');
    expect(json).toContain('*Account*\\nProduction payer (123456789012)');
    expect(json).toContain('*Kind*\\nCost anomaly');
    expect(json).toContain('<!date^1795271525^{date_short_pretty} {time}|2026-11-21T14:32:05Z>');
    expect(out.text).toContain('Cost anomaly detected');
    expect(slackLimitViolations(out)).toEqual([]);
  });

  it('gives unknown kinds a generic layout with a readable label', () => {
    const out = formatSlackMessage(parse({ metadata: { object_type: 'budget_forecast_v2' }, payload: { message: 'Over budget' } }));
    expect(out.blocks[0]).toMatchObject({ type: 'header', text: { text: ':bell: Budget forecast v2' } });
    expect(JSON.stringify(out)).toContain('Sent by the cost platform');
    expect(slackLimitViolations(out)).toEqual([]);
  });

  it('keeps an unparseable timestamp as escaped text', () => {
    const out = formatSlackMessage(parse(hostile));
    expect(JSON.stringify(out)).toContain('not a time &lt;!channel&gt;');
  });

  it('never lets sender text form a mention or link', () => {
    const out = formatSlackMessage(parse(hostile));
    expect(liveSpecialForms(out)).toEqual([]);
    expect(out.text).toContain('&lt;!channel&gt;');
  });

  it('puts the configured mention, and only that, live in front of the message', () => {
    const out = formatSlackMessage(parse(hostile), '<!here>');
    expect(out.text.startsWith('<!here> ')).toBe(true);
    expect(out.blocks[1]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
    expect((out.blocks[1] as { text: { text: string } }).text.text.startsWith('<!here> ')).toBe(true);
    expect(liveSpecialForms(out, '<!here>')).toEqual([]);
  });

  it('stays within every Slack limit for huge, hostile input, with a visible ellipsis', () => {
    const huge = '<!channel>&*_~`a.b\u202E'.repeat(6_000);
    const out = formatSlackMessage(
      parse({
        metadata: { object_type: 'x'.repeat(5_000), timestamp: '<'.repeat(5_000) },
        payload: { title: huge, message: huge, cloud_provider_type: huge, account_id: huge, account_name: huge },
      }),
      '<!subteam^S0123>',
    );
    expect(slackLimitViolations(out)).toEqual([]);
    expect(liveSpecialForms(out, '<!subteam^S0123>')).toEqual([]);
    for (const t of slackSenderTexts(out, '<!subteam^S0123>')) expect(senderMarkup(t)).toEqual([]);
    const header = out.blocks[0] as { text: { text: string } };
    expect(header.text.text.length).toBe(SLACK_LIMITS.header);
    expect(header.text.text.endsWith('…')).toBe(true);
    expect(out.text.endsWith('…')).toBe(true);
  });
});

describe('Slack must not auto-link sender text', () => {
  it('every mrkdwn object is verbatim, so URLs, #channels and @channel words stay text', () => {
    const message = formatSlackMessage(
      {
        metadata: { object_type: 'anomaly_alert', timestamp: 'soon', destination_url: undefined },
        payload: {
          title: 'see https://evil.example',
          message: 'ping @channel in #general www.evil.example',
          cloud_provider_type: 'aws',
          account_id: '1',
          account_name: '@here',
        },
      },
      '<!here>',
    );
    const mrkdwn = JSON.stringify(message.blocks).match(/"type":"mrkdwn"[^}]*}/g) ?? [];
    expect(mrkdwn.length).toBeGreaterThanOrEqual(3);
    for (const object of mrkdwn) expect(object).toContain('"verbatim":true');
    // The configured mention still leads the message as a live special form.
    expect(JSON.stringify(message.blocks)).toContain('<!here> ping ＠channel');
  });

  it('kinds and clouds named like Object properties are just strings', () => {
    const message = formatSlackMessage({
      metadata: { object_type: '__proto__', timestamp: undefined, destination_url: undefined },
      payload: { title: 't', message: undefined, cloud_provider_type: 'constructor', account_id: undefined, account_name: undefined },
    });
    const text = JSON.stringify(message);
    expect(text).not.toContain('undefined');
    expect(text).not.toContain('function');
    expect(text).toContain('constructor');
  });
});
