import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromHttpApiEvent } from '../../lib/inbound/api-gateway.js';
import { createLogger } from '../../lib/log/logger.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import type { Relay } from '../../lib/relay/relay.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { budgetOf } from '../helpers/budget.js';
import {
  googleChatLiveForms,
  googleChatSenderTexts,
  googleChatViolations,
  senderMarkup,
  teamsLiveMarkup,
  teamsSenderTexts,
  teamsTexts,
  teamsViolations,
} from '../helpers/chat-limits.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { liveSpecialForms, type ReceivedMessage, slackLimitViolations, slackSenderTexts } from '../helpers/slack-limits.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const CONTRACT_STATUSES = new Set([200, 202, 400, 401, 405, 413, 415, 422, 502, 503]);
const MENTION = '<!subteam^S0TEAM>';
const TEAMS_MENTION = { id: 'jane@example.com', name: 'Jane Doe' };
const CHAT_MENTION = '<users/all>';

// Fragments that try to become Slack special forms or break escaping and limits.
const hostile = fc.constantFrom(
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<@U123>',
  '<#C1>',
  '<!subteam^S1>',
  '<https://evil.example|click>',
  '<!date^1^{time}|x>',
  '&',
  '&lt;',
  '<',
  '>',
  '|',
  '*',
  '`',
  '\u0000',
  '\u202e',
  '😀',
  '\ud800',
  ':rotating_light:',
  // Teams Markdown and card functions; Google Chat mentions, links and card HTML.
  '[refund](https://evil.example)',
  '**bold**',
  '_it_',
  '\n- item',
  '\n1. first',
  '<at>Jane Doe</at>',
  '{{DATE(2020-01-01T00:00:00Z)}}',
  '<users/all>',
  '<users/123>',
  '<https://evil.example|label>',
  '<b>',
  '<a href="https://evil.example">x</a>',
  '<br>',
  '&amp;',
  '界',
  // Slack and Google Chat markup, bare links and mentions, also behind invisible characters.
  '*bold*',
  '_italic_',
  '~strike~',
  '`code`',
  '```\nblock\n```',
  '\n> quote',
  '\n  > quote',
  '> ',
  'https://evil.example',
  'www.evil.example',
  'ops@evil.example',
  '@here',
  '#general',
  ':skull:',
  'evil.\u200Bexample',
  'https:\u2060//evil',
  '.',
  ':',
  '@',
  '#',
  'com',
  // Bidi controls, which reorder what a reader sees: `\u202E00.001$` reads as `$100.00`.
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200E',
  '\u200F',
  '\u061C',
  '\u202E00.001$',
);
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.array(fc.oneof(hostile, fc.string({ maxLength: 8 })), { maxLength: 30 }).map((parts) => parts.join('')),
  fc.integer({ min: 1, max: 40 }).map((n) => '<!channel> & '.repeat(n * 100)),
);
const field = fc.oneof(text, fc.integer(), fc.constant(null), fc.constant(undefined), fc.boolean(), fc.object({ maxDepth: 1 }));

const message = fc.record(
  {
    metadata: fc.record(
      {
        object_type: fc.oneof(
          fc.constantFrom('anomaly_alert', 'recommendation_report', '__proto__', 'constructor', 'toString', 'hasOwnProperty'),
          text,
          field,
        ),
        timestamp: fc.oneof(
          text,
          fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'x' : d.toISOString())),
          field,
        ),
      },
      { requiredKeys: [] },
    ),
    payload: fc.record(
      {
        title: fc.oneof(text, field),
        message: fc.oneof(text, field),
        cloud_provider_type: fc.oneof(fc.constantFrom('aws', 'AZURE', 'constructor', '__proto__', 'valueOf'), text),
        account_id: fc.oneof(text, fc.integer()),
        account_name: text,
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.json() },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const method = fc.oneof(
  { weight: 6, arbitrary: fc.constant('POST') },
  { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'OPTIONS', 'post', '') },
);
const headers = fc.record(
  {
    'content-type': fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', '', 'application/x-www-form-urlencoded') },
      { weight: 1, arbitrary: fc.string() },
    ),
    authorization: fc.oneof(fc.constant('Basic cmVsYXk6czNjcmV0'), fc.string(), fc.constant('Bearer a.b.c')),
    'x-extra': fc.string(),
  },
  { requiredKeys: [] },
);

describe('the relay handler, for arbitrary requests', () => {
  let slack: FakeSlack;
  let teams: FakeChat;
  let chat: FakeChat;
  let relay: Relay;
  const logs: string[] = [];

  beforeAll(async () => {
    [slack, teams, chat] = await Promise.all([startFakeSlack(), startFakeTeams(), startFakeGoogleChat()]);
    const dir = await mkdtemp(join(tmpdir(), 'relay-prop-'));
    const file = join(dir, 'config.json');
    await writeFile(
      file,
      JSON.stringify({
        auth: { method: 'none' },
        destinations: {
          default: { url: slack.url('/default') },
          team: { url: slack.url('/team'), mention: MENTION },
          teams: { type: 'teams', url: teams.url(), mention: TEAMS_MENTION },
          chat: { type: 'googlechat', url: chat.url(), mention: CHAT_MENTION },
        },
        routes: [
          { when: { cloudProvider: ['aws'] }, to: ['team'] },
          { when: {}, to: ['default', 'teams', 'chat'] },
        ],
      }),
    );
    relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${file}` },
      { logger: createLogger({ sink: (l) => logs.push(l) }), metrics: memoryMetrics() },
    );
  });
  afterAll(() => Promise.all([slack?.close(), teams?.close(), chat?.close()]));

  const inert = (texts: string[]) => {
    for (const text of texts) expect(senderMarkup(text), text).toEqual([]);
  };
  const checkPayloads = () => {
    for (const received of slack.requests) {
      const payload = received.body as ReceivedMessage;
      const mention = received.path === '/team' ? MENTION : undefined;
      expect(slackLimitViolations(payload)).toEqual([]);
      expect(liveSpecialForms(payload, mention)).toEqual([]);
      inert(slackSenderTexts(payload, mention));
    }
    for (const received of teams.requests) {
      expect(teamsViolations(received.body)).toEqual([]);
      const [title, mention, ...rest] = teamsTexts(received.body);
      expect(mention).toBe('<at>Jane Doe</at>');
      // The relay's own time function, when the sender's time could be read.
      if (rest.at(-1)?.startsWith('🕒 {{DATE(')) rest.pop();
      for (const text of [title ?? '', ...rest]) expect(teamsLiveMarkup(text), text).toEqual([]);
      inert(teamsSenderTexts(received.body));
    }
    for (const received of chat.requests) {
      expect(googleChatViolations(received.body)).toEqual([]);
      expect(googleChatLiveForms(received.body, CHAT_MENTION)).toEqual([]);
      inert(googleChatSenderTexts(received.body, CHAT_MENTION));
    }
  };
  const invoke = async (m: string, h: Record<string, string>, b: string | undefined, base64: boolean) => {
    slack.reset();
    teams.requests.length = 0;
    chat.requests.length = 0;
    const event = httpApiEvent({ method: m, headers: h, ...(b === undefined ? {} : { body: b, base64 }) });
    return relay(fromHttpApiEvent(event, 'prop'), budgetOf(10_000));
  };

  it('never throws and answers only contract statuses, for any method, headers and body', async () => {
    await fc.assert(
      fc.asyncProperty(method, headers, body, fc.boolean(), async (m, h, b, base64) => {
        const response = await invoke(m, h as Record<string, string>, b, base64);
        expect(CONTRACT_STATUSES.has(response.statusCode), `status ${response.statusCode}`).toBe(true);
        expect(JSON.parse(response.body).status).toBe(response.statusCode);
        checkPayloads();
      }),
      { numRuns: 300 },
    );
  }, 120_000);

  it('turns any well-formed message into Slack, Teams and Google Chat payloads within limits, with no mention, link, markup or bidi control from the sender', async () => {
    const wellFormed = fc.record({
      metadata: fc.record({
        object_type: fc.oneof(
          fc.constantFrom('anomaly_alert', 'recommendation_report', '__proto__', 'constructor', 'toString', 'hasOwnProperty'),
          text,
        ),
        timestamp: fc.oneof(
          text,
          fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'x' : d.toISOString())),
        ),
      }),
      payload: fc.record({
        title: text,
        message: text,
        cloud_provider_type: fc.oneof(fc.constantFrom('aws', 'AZURE', 'constructor', '__proto__', 'valueOf'), text),
        account_id: fc.oneof(text, fc.integer()),
        account_name: text,
      }),
    });
    let delivered = 0;
    await fc.assert(
      fc.asyncProperty(wellFormed, async (m) => {
        const json = JSON.stringify(m);
        const response = await invoke('POST', { 'content-type': 'application/json' }, json, false);
        if (Buffer.byteLength(json) > 64 * 1024) {
          expect(response.statusCode).toBe(413);
          return;
        }
        const blank = !String(m.payload.title).trim() && !String(m.payload.message).trim();
        const typeBlank = !m.metadata.object_type.trim();
        expect(response.statusCode).toBe(blank || typeBlank ? 422 : 200);
        if (response.statusCode === 200) {
          delivered++;
          expect(slack.requests.length).toBeGreaterThan(0);
          expect(teams.requests.length).toBe(1);
          expect(chat.requests.length).toBe(1);
        }
        checkPayloads();
      }),
      { numRuns: 300 },
    );
    // The generator must reach formatting most of the time, or the payload checks prove little.
    expect(delivered).toBeGreaterThan(200);
    expect(logs.some((l) => l.includes('"outcome":"delivered"'))).toBe(true);
  }, 120_000);
});
