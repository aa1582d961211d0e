// The preview page of `npm start`, in a real browser (Debian's Chromium driven by playwright-core):
// Teams cards drawn by Microsoft's Adaptive Cards renderer, Slack and Google Chat approximations,
// hostile sender text shown as text, a strict CSP, a phone-width layout, each message's "Triage"
// link, and the README's pictures; and the triage loop of `npm start`, from the link the console
// prints to the follow-up it prints.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DevServer, root, startDevServer, tsx } from '../helpers/dev-server.js';

const chromiumPath = inject('chromiumPath');
const TITLE = 'Cost anomaly detected: Amazon EC2 in us-east-1';
const ACCOUNT = 'Production payer (123456789012)';
// Long enough for the page's first poll plus a reload; the wait ends as soon as the element is there.
const APPEARS_WITHIN_MS = 20_000;

// Each would run if any part of the page put sender text into markup.
const HOSTILE = {
  title: `Spend <script>pwned = 'script'</script> "double" & 'single'`,
  message: `<img src=x onerror="pwned = 'img'"> <b>not bold</b> </pre><iframe src=x>`,
  account: `"><svg onload="pwned = 'svg'">`,
};

async function sendAlert(server: DevServer, payload: Record<string, string>): Promise<Record<string, unknown>> {
  const body = JSON.stringify({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-21T14:32:05Z' },
    payload: { cloud_provider_type: 'aws', account_id: '123456789012', ...payload },
  });
  const answer = await fetch(`${server.origin}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await answer.text();
  expect(answer.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

async function postToConsole(server: DevServer, type: string, body: unknown): Promise<void> {
  const answer = await fetch(`${server.origin}/console/${type}`, { method: 'POST', body: JSON.stringify(body) });
  expect(answer.ok).toBe(true);
}

const ESC = String.fromCharCode(27);
/** What the console printed, without its colours, as one entry per printed message ("Slack message (console destination) ──…"). */
const consoleMessages = (output: string) =>
  output
    .replace(new RegExp(`${ESC}\\[\\d*m`, 'g'), '')
    .split('\n── ')
    .slice(1);
const slackWebhookMessages = (output: string) => consoleMessages(output).filter((m) => m.startsWith('Slack message (console destination)'));

/** A page that records CSP violations and script errors from its very first script on. */
async function openPage(browser: Browser, viewport = { width: 1000, height: 900 }): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.addInitScript(() => {
    const w = globalThis as unknown as {
      __violations: string[];
      addEventListener(type: string, listener: (event: { violatedDirective: string }) => void): void;
    };
    w.__violations = [];
    w.addEventListener('securitypolicyviolation', (event) => w.__violations.push(event.violatedDirective));
  });
  return { page, errors };
}

const article = (page: Page, type: string) => page.locator(`.delivery[data-type="${type}"]`).first();
const articleWith = (page: Page, type: string, text: string) => page.locator(`.delivery[data-type="${type}"]`, { hasText: text }).first();

describe.skipIf(!chromiumPath)('the preview page of npm start, in Chromium', () => {
  let server: DevServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startDevServer({
      prepare: async (cwd, port) => {
        const consoleUrl = (type: string) => `http://127.0.0.1:${port}/console/${type}`;
        await writeFile(
          join(cwd, 'relay.config.json'),
          JSON.stringify({
            auth: { method: 'none' },
            destinations: {
              default: { url: consoleUrl('slack') },
              teams: { type: 'teams', url: consoleUrl('teams') },
              chat: { type: 'googlechat', url: consoleUrl('googlechat') },
            },
            routes: [{ when: { objectType: ['anomaly_alert'] }, to: ['default', 'teams', 'chat'] }],
          }),
        );
      },
    });
    browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    server?.stop();
  });

  it('shows a new alert as each chat would, without a manual reload, under a strict CSP', async () => {
    const { page, errors } = await openPage(browser);
    const response = await page.goto(`${server.origin}/`);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cache-control']).toBe('no-store');
    await expect(page.locator('.empty').textContent()).resolves.toContain('npm run send');

    const sample = JSON.parse(await readFile(join(root, 'events/anomaly-alert.json'), 'utf8')) as { payload: Record<string, string> };
    await sendAlert(server, sample.payload);

    // Drawn by Microsoft's renderer: only it makes .ac-adaptiveCard.
    const card = article(page, 'teams').locator('.ac-adaptiveCard');
    await card.waitFor({ timeout: APPEARS_WITHIN_MS });
    expect(await card.textContent()).toContain(TITLE);
    expect(await card.textContent()).toContain(ACCOUNT);
    expect(await card.textContent()).not.toContain('{{DATE');
    for (const type of ['slack', 'googlechat']) {
      const text = await article(page, type).locator('.message').textContent();
      expect(text).toContain(TITLE);
      expect(text).toContain(ACCOUNT);
      expect(await article(page, type).locator('.fidelity').textContent()).toContain('approximation');
    }
    // Slack's header emoji shortcode and date form are drawn, not shown raw.
    const slack = await article(page, 'slack').locator('.message').textContent();
    expect(slack).not.toContain(':rotating_light:');
    expect(slack).not.toContain('<!date');

    const ids = await page.locator('.delivery').evaluateAll((elements) => elements.map((e) => Number(e.id.replace('delivery-', ''))));
    expect(ids).toHaveLength(3);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    // The destination URLs are configuration, never content.
    expect(await page.content()).not.toContain('/console/');
    expect(await page.evaluate(() => (globalThis as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows hostile sender text as text: no script runs, no element is injected', async () => {
    await sendAlert(server, { title: HOSTILE.title, message: HOSTILE.message, account_name: HOSTILE.account });
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.origin}/`);
    const card = article(page, 'teams').locator('.ac-adaptiveCard');
    await card.waitFor({ timeout: APPEARS_WITHIN_MS });

    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: string }).pwned)).toBeUndefined();
    const injected = await page.locator('main script, main img, main svg, main iframe, main [onerror], main [onload], main b').count();
    expect(injected).toBe(0);
    for (const type of ['slack', 'googlechat']) {
      const text = await article(page, type).locator('.message').textContent();
      expect(text).toContain(`<script>pwned = 'script'</script>`);
      expect(text).toContain(`<img src=x onerror="pwned = 'img'">`);
      expect(text).toContain('<b>not bold</b> </pre><iframe src=x>');
      expect(text).toContain(`"double" & 'single'`);
    }
    expect(await article(page, 'googlechat').locator('.message').textContent()).toContain(HOSTILE.account);
    // Teams shows look-alike brackets (the relay's escaping), still as text.
    expect(await card.textContent()).toContain('onerror="pwned = \'img\'"');
    expect(await page.evaluate(() => (globalThis as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('makes each delivery\'s "Triage" button a link to its triage page, and only an https or loopback URL a link', async () => {
    const title = 'Cost anomaly detected: Amazon S3 in eu-west-1';
    await sendAlert(server, { title, message: 'Daily cost of Amazon S3 rose.', account_name: 'Production payer' });
    // Anyone on this machine can post any JSON to a console path: buttons that point elsewhere.
    const hostile = [
      { text: { type: 'plain_text', text: 'Script' }, url: `javascript:pwned = 'link'` },
      { text: { type: 'plain_text', text: 'Plain http' }, url: 'http://example.com/x' },
      { text: { type: 'plain_text', text: 'Quoted' }, url: `http://127.0.0.1/"><img src=x onerror="pwned = 'href'">` },
    ];
    await postToConsole(server, 'slack', { text: 'Hostile buttons', blocks: [{ type: 'actions', elements: hostile }] });
    await postToConsole(server, 'googlechat', {
      text: 'Hostile buttons',
      cardsV2: [
        {
          card: {
            sections: [
              {
                widgets: [{ buttonList: { buttons: hostile.map((b) => ({ text: b.text.text, onClick: { openLink: { url: b.url } } })) } }],
              },
            ],
          },
        },
      ],
    });
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.origin}/`);
    const card = articleWith(page, 'teams', title).locator('.ac-adaptiveCard');
    await card.waitFor({ timeout: APPEARS_WITHIN_MS });

    const opens = async (click: () => Promise<void>) => {
      const [opened] = await Promise.all([page.context().waitForEvent('page', { timeout: APPEARS_WITHIN_MS }), click()]);
      await opened.waitForLoadState();
      expect(await opened.locator('h1').textContent()).toBe(title);
      const url = opened.url();
      await opened.close();
      return url;
    };
    const opened: string[] = [];
    for (const type of ['slack', 'googlechat']) {
      const link = articleWith(page, type, title).getByRole('link', { name: 'Triage' });
      expect(await link.count()).toBe(1);
      const href = (await link.getAttribute('href')) ?? '';
      expect(href.startsWith(`${server.origin}/triage/`)).toBe(true);
      expect(await opens(() => link.click())).toBe(href);
      opened.push(href);
    }
    // Teams: Microsoft's renderer draws the card's link as a button with the link role; it opens the page.
    opened.push(await opens(() => card.getByRole('link', { name: 'Triage' }).click()));
    expect(opened.every((url) => url.startsWith(`${server.origin}/triage/`))).toBe(true);
    // One link per destination: each names its own anomaly record.
    expect(new Set(opened).size).toBe(3);

    for (const type of ['slack', 'googlechat']) {
      const buttons = articleWith(page, type, 'Hostile buttons').locator('.buttons');
      expect(await buttons.locator('.button').allTextContents()).toEqual(['Script', 'Plain http', 'Quoted']);
      expect(await buttons.getByRole('link').allTextContents()).toEqual(['Quoted']);
    }
    expect(await page.locator('main a[href^="javascript:"], main img, main [onerror]').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: string }).pwned)).toBeUndefined();
    expect(await page.evaluate(() => (globalThis as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('npm start: the console prints the Slack message\'s triage link; "Snooze 24 h" there is printed and holds the next alert back', async () => {
    const title = 'Cost anomaly detected: AWS Lambda in eu-central-1';
    const from = server.output().length;
    await sendAlert(server, { title, message: 'Daily cost of AWS Lambda rose.' });
    const linkIn = (output: string) =>
      slackWebhookMessages(output)
        .find((m) => m.includes(title))
        ?.match(/^\[Triage\] (\S+)$/m)?.[1];
    await expect.poll(() => linkIn(server.output().slice(from))).toMatch(new RegExp(`^${server.origin}/triage/[\\w-]+\\.[\\w-]+$`));

    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 667 } });
    const page = await context.newPage();
    await page.goto(linkIn(server.output().slice(from)) ?? '');
    expect(await page.locator('h1').textContent()).toBe(title);
    expect(await page.locator('#state').textContent()).toBe('Open');
    await page.getByLabel('Your name (optional)').fill('Dana <!here>');
    await page.getByRole('button', { name: 'Snooze 24 h' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.locator('#state').textContent()).toMatch(/^Snoozed by Dana <!here> until /);
    await context.close();

    // The follow-up in the Slack console: what was done, and by whom, the name escaped so it pings no one.
    const followUp = () => slackWebhookMessages(server.output().slice(from)).find((m) => m.includes('Snoozed for 24 h by'));
    await expect.poll(followUp).toMatch(/^Slack message \(console destination\) ──\nSnoozed for 24 h by Dana &lt;!here&gt; at \d{4}-/);

    const before = server.output().length;
    const next = await sendAlert(server, { title, message: 'Daily cost of AWS Lambda rose again.' });
    expect(next).toMatchObject({ snoozed: ['default'] });
    // The relay logs each delivery after posting it: once that line is out, so is anything posted.
    await expect.poll(() => server.output().slice(before)).toContain('"message":"delivery"');
    expect(slackWebhookMessages(server.output().slice(before))).toEqual([]);
  });

  it('fits a phone screen without sideways scrolling', async () => {
    const { page } = await openPage(browser, { width: 375, height: 740 });
    await page.goto(`${server.origin}/`);
    await article(page, 'teams').locator('.ac-adaptiveCard').waitFor({ timeout: APPEARS_WITHIN_MS });
    const { scrollWidth, innerWidth } = await page.evaluate(() => {
      const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
      return { scrollWidth: w.document.documentElement.scrollWidth, innerWidth: w.innerWidth };
    });
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
    await page.close();
  });

  it('npm run screenshots writes one small PNG per chat service, about 600 pixels wide', async () => {
    const out = await mkdtemp(join(tmpdir(), 'relay-shots-'));
    const env: NodeJS.ProcessEnv = { ...process.env, CHROMIUM_PATH: chromiumPath! };
    delete env['RELAY_CONFIG_SECRET_ID'];
    const child = spawn(tsx, [join(root, 'scripts/screenshots.ts'), '--out', out], { cwd: root, env });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    for (const service of ['slack', 'teams', 'googlechat']) {
      const png = await readFile(join(out, `${service}.png`));
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      // IHDR: width at byte 16, height at byte 20, big-endian.
      expect(png.readUInt32BE(16)).toBeGreaterThan(500);
      expect(png.readUInt32BE(16)).toBeLessThanOrEqual(600);
      expect((await stat(join(out, `${service}.png`))).size).toBeLessThan(120 * 1024);
    }
  });
});
