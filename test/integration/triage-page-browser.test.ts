import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../lib/log/logger.js';
import { invocationBudget } from '../../lib/shared/deadline.js';
import { createTriageFromEnvironment } from '../../lib/triage/from-environment.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { signTriageToken } from '../../lib/triage-link/sign.js';
import { type FakeChat, startFakeGoogleChat } from '../helpers/chat-servers.js';
import { closeServer } from '../helpers/loopback-server.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const chromiumPath = inject('chromiumPath');
const KEY = 'browser-triage-key-0123456789abcdefghijklmnop';

describe.skipIf(!chromiumPath)('the triage page in Chromium, without JavaScript, on a phone-sized screen', () => {
  let browser: Browser;
  let server: Server;
  let gchat: FakeChat;
  let base = '';
  const store = memoryTriageStore();

  beforeAll(async () => {
    gchat = await startFakeGoogleChat();
    const dir = mkdtempSync(join(tmpdir(), 'triage-browser-'));
    writeFileSync(
      join(dir, 'relay.json'),
      JSON.stringify({ auth: { method: 'none' }, destinations: { default: { type: 'googlechat', url: gchat.url() } } }),
    );
    const triage = createTriageFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}` },
      { store, tokenKey: KEY, logger: createLogger({ sink: () => undefined }), metrics: memoryMetrics() },
    );
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const started = Date.now();
        const answer = await triage(
          {
            method: req.method ?? 'GET',
            path: (req.url ?? '/').split('?')[0] ?? '/',
            headers: {},
            body: Buffer.concat(chunks).toString('utf8'),
          },
          invocationBudget({ getRemainingTimeInMillis: () => 10_000 - (Date.now() - started) }),
        );
        res.writeHead(answer.statusCode, answer.headers).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: chromiumPath as string, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    if (server) await closeServer(server);
    await gchat?.close();
  });

  it('shows the anomaly, applies "Acknowledge" with a typed name, and the follow-up lands in the Google Chat thread', async () => {
    const token = signTriageToken(
      KEY,
      { a: 'anomaly#browser', d: 'default', t: 'EC2 <b>spend</b> rose', c: '123456789012', k: 'cost-alert-b' },
      Date.now(),
    );
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 667 } });
    const page = await context.newPage();
    await page.goto(`${base}/triage/${token}`);
    expect(await page.locator('h1').textContent()).toBe('EC2 <b>spend</b> rose');
    expect(await page.locator('#state').textContent()).toBe('Open');
    expect(store.records.size).toBe(0);
    // Readable on a phone: nothing wider than the screen.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);

    await page.getByLabel('Your name (optional)').fill('Dana <img src=x>');
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('status').textContent()).toContain('Acknowledged by Dana <img src=x>');
    expect(await page.locator('#state').textContent()).toBe('Acknowledged by Dana <img src=x>');
    expect(await page.locator('img').count()).toBe(0);
    expect(gchat.accepted()[0]?.body).toMatchObject({
      text: expect.stringContaining('Acknowledged by Dana'),
      thread: { threadKey: 'cost-alert-b' },
    });
    await context.close();
  });
});
