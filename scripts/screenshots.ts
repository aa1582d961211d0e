// `npm run screenshots`: the pictures in docs/images, taken from the preview page of a real
// `npm start` after it relayed events/anomaly-alert.json to a Slack, a Teams and a Google Chat
// console destination, each with the account's cost trend. Run it again when a message's format changes.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { KINDS } from '../lib/notify/kinds.js';
import { CONSOLE_TYPES } from './console-chat.js';

/** The README shows the alert in every chat. */
const PICTURED = CONSOLE_TYPES.filter((type) => KINDS[type].chat);

const USAGE = `usage: npm run screenshots -- [--out DIR] [--width PIXELS] [--event FILE]

Starts npm start on a free port with Slack, Teams and Google Chat console destinations, sends
the event (default events/anomaly-alert.json), and saves each chat's preview as DIR/<service>.png
(default docs/images; slack.png, teams.png, googlechat.png, and the picture cost-trend.png). Needs Chromium: CHROMIUM_PATH, or
/usr/bin/chromium (Debian: apt-get install chromium).`;

const root = fileURLToPath(new URL('../', import.meta.url));
const STARTUP_LIMIT_MS = 30_000;

const chromiumPath = (): string => process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no free port'))));
    });
  });
}

async function startRelay(cwd: string, port: number): Promise<ChildProcess> {
  const consoleUrl = (type: string) => `http://127.0.0.1:${port}/console/${type}`;
  // One console destination of each chat, all routed the sample alert; the first is the default.
  const [first, ...others] = PICTURED;
  const config = {
    auth: { method: 'none' },
    destinations: Object.fromEntries([
      ['default', { type: first, url: consoleUrl(first as string) }],
      ...others.map((type) => [type, { type, url: consoleUrl(type) }]),
    ]),
    routes: [{ when: { objectType: ['anomaly_alert'] }, to: ['default', ...others] }],
    // Each message with the picture of its account's cost trend, drawn from npm start's sample series.
    platform: { trend: true },
  };
  await writeFile(join(cwd, 'relay.config.json'), JSON.stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1' };
  delete env['RELAY_CONFIG_SECRET_ID'];
  const child = spawn(join(root, 'node_modules/.bin/tsx'), [join(root, 'scripts/dev-server.ts')], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`npm start did not listen within ${STARTUP_LIMIT_MS / 1000} s:\n${output}`)),
      STARTUP_LIMIT_MS,
    );
    const watch = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout?.on('data', watch);
    child.stderr?.on('data', watch);
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`npm start exited (${code}) before listening:\n${output}`));
    });
  });
  return child;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, width: { type: 'string' }, event: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const out = resolve(values.out ?? join(root, 'docs/images'));
  const width = Number(values.width ?? 600);
  const event = resolve(values.event ?? join(root, 'events/anomaly-alert.json'));
  if (!existsSync(chromiumPath())) {
    console.error(`No Chromium at ${chromiumPath()}. Install it (Debian: apt-get install chromium) or set CHROMIUM_PATH.`);
    return 2;
  }

  const cwd = await mkdtemp(join(tmpdir(), 'relay-screenshots-'));
  const port = await freePort();
  const relay = await startRelay(cwd, port);
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
  try {
    const answer = await fetch(`http://127.0.0.1:${port}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await readFile(event),
    });
    if (answer.status !== 200) throw new Error(`the relay answered ${answer.status}: ${await answer.text()}`);
    // Fixed zone and language, so the pictures change only when a message's format does.
    const page = await browser.newPage({ viewport: { width, height: 900 }, timezoneId: 'UTC', locale: 'en-US' });
    await page.goto(`http://127.0.0.1:${port}/`);
    // Teams' card is drawn by Microsoft's renderer in the browser: wait for it.
    await page.locator('.delivery[data-type="teams"] .ac-adaptiveCard').waitFor();
    // And every picture drawn: the cost trends come from npm start's own /chart route.
    await page.locator('img').evaluateAll((images) => Promise.all(images.map((image) => (image as { decode(): Promise<void> }).decode())));
    // When a delivery arrived is not part of the message; hiding it keeps the files stable.
    await page.locator('.receipt').evaluateAll((elements) => {
      for (const element of elements) (element as { hidden: boolean }).hidden = true;
    });
    await mkdir(out, { recursive: true });
    for (const type of PICTURED) {
      const file = join(out, `${type}.png`);
      await page.locator(`.delivery[data-type="${type}"] .shot`).first().screenshot({ path: file });
      console.log(`wrote ${file}`);
    }
    // The picture itself, as the triage function serves it (docs/platform.md).
    const chart = await page.locator('img.picture').first().getAttribute('src');
    if (chart) {
      const file = join(out, 'cost-trend.png');
      await writeFile(file, Buffer.from(await (await fetch(chart)).arrayBuffer()));
      console.log(`wrote ${file}`);
    }
    return 0;
  } finally {
    await browser.close();
    relay.kill();
    await rm(cwd, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
