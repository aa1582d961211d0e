// The triage loop as people go through it: an alert reaches Teams and Google Chat with a
// "Triage" link, someone opens it on a phone (Chromium without JavaScript), decides, and the
// chat is told; the anomaly's next alert then shows the decision, or is held back by a snooze.
// The relay and the triage function run in this process on one loopback server, as API
// Gateway routes them; the chats are loopback fakes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { inMemoryLedger } from '../../lib/dedup/memory.js';
import { fromHttpApiEvent, toHttpApiResult } from '../../lib/inbound/api-gateway.js';
import { createLogger } from '../../lib/log/logger.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import type { Relay } from '../../lib/relay/relay.js';
import { invocationBudget } from '../../lib/shared/deadline.js';
import { createTriageFromEnvironment, type TriageFunction } from '../../lib/triage/from-environment.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { closeServer } from '../helpers/loopback-server.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const chromiumPath = inject('chromiumPath');
const KEY = 'browser-triage-key-0123456789abcdefghijklmnop';
// Markup, a Slack and a Google Chat mention, and emphasis: each would do something if it were not text.
const HOSTILE_NAME = '<img src=x onerror=alert(1)> <!channel> <users/all> *x*';
const PHONE = { width: 375, height: 667 };

interface TeamsCard {
  body: Array<{ type: string; text?: string }>;
  actions?: Array<{ type: string; title: string; url: string }>;
}
interface ChatMessage {
  text: string;
  thread?: { threadKey?: string };
  cardsV2?: Array<{
    card: { sections: Array<{ widgets: Array<{ buttonList?: { buttons: Array<{ onClick: { openLink: { url: string } } }> } }> }> };
  }>;
}

/** What the fake chat accepted at `index`; a missing post fails the test here, by name. */
function accepted(chat: FakeChat, index: number): unknown {
  const request = chat.accepted()[index];
  if (!request) throw new Error(`the chat accepted ${chat.accepted().length} posts, none at ${index}`);
  return request.body;
}
const teamsCard = (chat: FakeChat, index: number) =>
  (accepted(chat, index) as { attachments: Array<{ content: TeamsCard }> }).attachments[0]?.content as TeamsCard;
const chatMessage = (chat: FakeChat, index: number) => accepted(chat, index) as ChatMessage;
const chatLink = (message: ChatMessage) =>
  message.cardsV2?.[0]?.card.sections[0]?.widgets.find((w) => w.buttonList)?.buttonList?.buttons[0]?.onClick.openLink.url;

function anomalyAlert(title: string, message: string) {
  return {
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-21T14:32:05Z' },
    payload: { title, message, cloud_provider_type: 'aws', account_id: '123456789012', account_name: 'Production payer' },
  };
}

describe.skipIf(!chromiumPath)('from the Triage link in a card to the follow-up in the chat, in Chromium without JavaScript', () => {
  let browser: Browser;
  let server: Server;
  let teams: FakeChat;
  let gchat: FakeChat;
  let relay: Relay;
  let triage: TriageFunction;
  let base = '';
  const store = memoryTriageStore();

  async function post(body: unknown): Promise<{ status: number; answer: Record<string, unknown> }> {
    const response = await fetch(`${base}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, answer: (await response.json()) as Record<string, unknown> };
  }

  /** A phone-sized page without JavaScript: the triage page must work without it. */
  async function openOnPhone(url: string): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
    const page = await context.newPage();
    expect((await page.goto(url))?.status()).toBe(200);
    return page;
  }

  beforeAll(async () => {
    [teams, gchat] = await Promise.all([startFakeTeams(), startFakeGoogleChat()]);
    const dir = mkdtempSync(join(tmpdir(), 'triage-browser-'));
    writeFileSync(
      join(dir, 'relay.json'),
      JSON.stringify({
        auth: { method: 'none' },
        destinations: { default: { type: 'teams', url: teams.url() }, chat: { type: 'googlechat', url: gchat.url() } },
        routes: [{ to: ['default', 'chat'] }],
      }),
    );
    const env = { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}` };
    const logger = createLogger({ sink: () => undefined });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const path = (req.url ?? '/').split('?')[0] ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const started = Date.now();
        const budget = invocationBudget({ getRemainingTimeInMillis: () => 10_000 - (Date.now() - started) });
        if (path.startsWith('/triage/')) {
          const answer = await triage({ method: req.method ?? 'GET', path, headers: {}, body }, budget);
          res.writeHead(answer.statusCode, answer.headers).end(answer.body);
          return;
        }
        const event = httpApiEvent({ method: req.method ?? 'GET', headers: { 'content-type': 'application/json' }, body });
        const result = toHttpApiResult(await relay(fromHttpApiEvent(event, 'local'), budget));
        res.writeHead(result.statusCode, result.headers).end(result.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // As under npm start: the relay's ledger reads the triage page's state, so a snooze holds follow-ups back.
    relay = createRelayFromEnvironment(env, {
      logger,
      metrics: memoryMetrics(),
      triageKey: KEY,
      origin: base,
      ledger: inMemoryLedger(Date.now, (id) => store.records.get(id)?.triage),
    });
    triage = createTriageFromEnvironment(env, { store, tokenKey: KEY, logger, metrics: memoryMetrics() });
    browser = await chromium.launch({ executablePath: chromiumPath as string, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    if (server) await closeServer(server);
    await Promise.all([teams?.close(), gchat?.close()]);
  });

  it('"Acknowledge" with a hostile name: the page, both chats and the next alert show it, as text', async () => {
    const title = 'EC2 <b>spend</b> rose';
    expect((await post(anomalyAlert(title, 'Daily cost rose to $4,812.'))).status).toBe(200);
    const action = teamsCard(teams, 0).actions?.[0];
    expect(action).toMatchObject({ type: 'Action.OpenUrl', title: 'Triage' });
    expect(action?.url.startsWith(`${base}/triage/`)).toBe(true);
    const opening = chatMessage(gchat, 0);
    const gchatUrl = chatLink(opening) ?? '';
    expect(gchatUrl.startsWith(`${base}/triage/`)).toBe(true);

    const page = await openOnPhone(action?.url ?? '');
    expect(await page.locator('h1').textContent()).toBe(title);
    expect(await page.locator('dd').first().textContent()).toBe('Production payer (123456789012)');
    // Whose triage it is: the Teams card's link names the Teams destination, the Google Chat one its own.
    expect(await page.locator('#destination').textContent()).toBe('default');
    expect(await (await openOnPhone(gchatUrl)).locator('#destination').textContent()).toBe('chat');
    expect(await page.locator('#state').textContent()).toBe('Open');
    // Looking changes nothing, and tells no chat.
    expect(store.records.size).toBe(0);
    expect(teams.accepted()).toHaveLength(1);
    // Readable on a phone: nothing wider than the screen.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    // The link carries what the page shows; the webhook URLs and the key stay out of it.
    for (const secret of ['TEAMS-SIG-SECRET', 'GCHAT-KEY-SECRET', KEY]) expect(await page.content()).not.toContain(secret);

    await page.getByLabel('Your name (optional)').fill(HOSTILE_NAME);
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    // Only the answer to the POST says what was done: the old page is gone once it is there.
    await page.getByRole('status').waitFor();
    const state = await page.locator('#state').textContent();
    expect(state).toMatch(/^Acknowledged by <img src=x onerror=alert\(1\)> <!channel> <users\/all> \S+x\S+$/);
    expect(await page.getByRole('status').textContent()).toContain('Acknowledged by <img src=x onerror=alert(1)> <!channel>');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('li').textContent()).toContain('acknowledge by <img src=x');

    // Teams: a card that says so, the name in look-alikes, so no markup, mention or emphasis forms.
    expect(teams.accepted()).toHaveLength(2);
    const said = teamsCard(teams, 1).body[0]?.text ?? '';
    expect(said).toMatch(/^Acknowledged by .*img src=x onerror=alert\(1\).*!channel/);
    expect(said).not.toMatch(/[<>*]/);

    // Google Chat: the same from its own link, as a reply in the anomaly's thread.
    const chatPage = await openOnPhone(gchatUrl);
    expect(await chatPage.locator('#state').textContent()).toBe('Open');
    await chatPage.getByLabel('Your name (optional)').fill(HOSTILE_NAME);
    await chatPage.getByRole('button', { name: 'Acknowledge' }).click();
    await chatPage.getByRole('status').waitFor();
    expect(await chatPage.locator('#state').textContent()).toMatch(/^Acknowledged by <img/);
    expect(gchat.accepted()).toHaveLength(2);
    const reply = gchat.accepted()[1];
    expect(reply?.query).toContain('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    expect(chatMessage(gchat, 1)).toMatchObject({
      text: expect.stringMatching(/^Acknowledged by /),
      thread: { threadKey: opening.thread?.threadKey },
    });
    expect(chatMessage(gchat, 1).text).not.toMatch(/[<>]/);

    // The anomaly's next alert says it was acknowledged, and by whom, still as text.
    expect((await post(anomalyAlert(title, 'Daily cost rose to $6,020.'))).status).toBe(200);
    const update = teamsCard(teams, 2).body[0]?.text ?? '';
    expect(update).toMatch(/^🔁 Update 1 of an anomaly first seen .* · Acknowledged by .*img src=x/);
    expect(update).not.toMatch(/[<>*]/);
    expect(chatMessage(gchat, 2)).toMatchObject({
      text: expect.stringMatching(/^Update \(acknowledged by .*img src=x.*\): /),
      thread: { threadKey: opening.thread?.threadKey },
    });
    expect(chatMessage(gchat, 2).text).not.toMatch(/[<>]/);
    await Promise.all([page.context().close(), chatPage.context().close()]);
  });

  it('"Snooze 24 h" from each chat\'s link: the next alert is answered 200 with both under snoozed, and nothing is posted', async () => {
    const title = 'RDS spend rose';
    expect((await post(anomalyAlert(title, 'Daily cost rose to $912.'))).status).toBe(200);
    const links = [
      teamsCard(teams, teams.accepted().length - 1).actions?.[0]?.url,
      chatLink(chatMessage(gchat, gchat.accepted().length - 1)),
    ];
    for (const link of links) {
      expect(link?.startsWith(`${base}/triage/`)).toBe(true);
      const page = await openOnPhone(link ?? '');
      expect(await page.locator('h1').textContent()).toBe(title);
      await page.getByRole('button', { name: 'Snooze 24 h' }).click();
      await page.getByRole('status').waitFor();
      expect(await page.locator('#state').textContent()).toMatch(/^Snoozed by someone until \d{4}-\d\d-\d\dT/);
      await page.context().close();
    }
    expect(teamsCard(teams, teams.accepted().length - 1).body[0]?.text).toMatch(/^Snoozed for 24 h by someone at /);
    expect(chatMessage(gchat, gchat.accepted().length - 1).text).toMatch(/^Snoozed for 24 h by someone at /);

    const posted = teams.requests.length + gchat.requests.length;
    const next = await post(anomalyAlert(title, 'Daily cost rose to $1,480.'));
    expect(next.status).toBe(200);
    expect(next.answer).toMatchObject({ snoozed: expect.arrayContaining(['default', 'chat']) });
    expect(teams.requests.length + gchat.requests.length).toBe(posted);
  });
});
