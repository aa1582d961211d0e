import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePng } from '../helpers/png.js';
import { freePort } from '../helpers/ports.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');

function run(args: string[], env: Record<string, string>, cwd = root): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(tsx, args, { cwd, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

interface DevServer {
  url: string;
  port: number;
  output(): string;
  /** Resolves once the output contains `text`, or after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  stop(): void;
}

/** `npm start` in `cwd`, on a free port, without a RELAY_CONFIG_SECRET_ID from this shell. */
async function startDevServer(prepare: (cwd: string, port: number) => Promise<void> = async () => {}): Promise<DevServer> {
  const port = await freePort();
  const cwd = await mkdtemp(join(tmpdir(), 'relay-dev-'));
  await prepare(cwd, port);
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
  delete env['RELAY_CONFIG_SECRET_ID'];
  const child = spawn(tsx, [join(root, 'scripts/dev-server.ts')], { cwd, env });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const waitFor = async (text: string, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!output.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  };
  await waitFor('listening on', 20_000);
  return { url: `http://127.0.0.1:${port}/webhook`, port, output: () => output, waitFor, stop: () => child.kill() };
}

describe('npm start (local dev server) with the embedded default configuration', () => {
  // An empty working directory: no relay.config.json, no RELAY_CONFIG_SECRET_ID.
  let server: DevServer;
  let url = '';
  const output = () => server.output();

  beforeAll(async () => {
    server = await startDevServer();
    url = server.url;
  });

  afterAll(() => server?.stop());

  it('prints the formatted Slack message for a sample sent with npm run send', async () => {
    const sent = await run([join(root, 'scripts/send.ts'), join(root, 'events/anomaly-alert.json'), '--url', url], {});
    expect(sent.out).toContain('HTTP 200');
    await server.waitFor('Block Kit Builder');
    expect(output()).toContain('embedded default');
    expect(output()).toContain('Cost anomaly detected: Amazon EC2 in us-east-1');
    expect(output()).toContain('https://app.slack.com/block-kit-builder#');
  });

  it("routes by cost center from the sample owners file: the sample's account reaches its team, named in the message", async () => {
    await server.waitFor('Microsoft Teams card');
    expect(output()).toContain('owners (cost centers of each account, for routes by cost center)');
    expect(output()).toContain('── Microsoft Teams card (console destination) ──');
    expect(output()).toMatch(/Cost center[^\n]*Data Platform/);
  });

  it('shows the living message: a console Slack app posts the opening, then edits it and replies in its thread', async () => {
    const post = (message: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
          payload: { title: 'Living message check', message, account_id: '42' },
        }),
      });
    expect((await post('up 10%')).status).toBe(200);
    await server.waitFor('Slack app: new message');
    expect((await post('up 20%')).status).toBe(200);
    await server.waitFor('edited (console destination)');
    await server.waitFor('Slack app: reply in the thread of message');
    expect(output()).toContain('Updated 1 time');
    expect(output()).not.toContain('xoxb-console-local');
    const page = await (await fetch(`http://127.0.0.1:${server.port}/`)).text();
    expect(page).toContain('reply in the thread of message');
  });

  it('keeps metric lines out of the console, and a second server on the same port says what to do', async () => {
    expect(output()).not.toContain('"_aws"');
    const port = new URL(url).port;
    const second = await run([join(root, 'scripts/dev-server.ts')], { PORT: port, RELAY_CONFIG_SECRET_ID: '' });
    expect(second.code).toBe(1);
    expect(second.out).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(second.out).toContain('PORT=3001 npm start');
    // The second start leaves the first one's embedded configuration in place: it still answers.
    const sent = await run([join(root, 'scripts/send.ts'), join(root, 'events/test-alert.json'), '--url', url], {});
    expect(sent.out).toContain('HTTP 200');
  });

  it('draws the cost trend from the sample series, and prints the cost event Expected would write', async () => {
    await server.waitFor('[picture]');
    const picture = /\[picture\]\S* (http:\/\/127\.0\.0\.1:\d+\/chart\/[\w.-]+)/.exec(output())?.[1];
    expect(picture).toBeDefined();
    const png = await fetch(picture as string);
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const { width, height } = decodePng(Buffer.from(await png.arrayBuffer()));
    expect(width).toBeGreaterThanOrEqual(600);
    expect(height).toBeGreaterThanOrEqual(200);
    expect((await fetch(`${picture as string}x`)).status).toBe(403);

    // The Triage link of the message that carried the picture (the sample summary's come before it).
    const after = output().slice(output().indexOf('[picture]'));
    const link = /http:\/\/127\.0\.0\.1:\d+\/triage\/[\w.-]+/.exec(after)?.[0];
    expect(await (await fetch(link as string)).text()).toContain('name="note"');
    const form = (body: string) =>
      fetch(link as string, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect((await form('action=expected&name=Dana&note=Quarter-end+batch')).status).toBe(200);
    await server.waitFor('cost event that would be written');
    expect(output()).toMatch(
      /cost event that would be written on the platform \(POST \/api\/v1\/users\/events\): \{"title":"Expected: Cost anomaly detected: Amazon EC2 in us-east-1"[^\n]*Quarter-end batch/,
    );
    await form('action=reopen&name=Dana');
    await server.waitFor('cost event that would be deleted');
    expect(output()).toContain('cost event that would be deleted');
  });

  it('serves the triage endpoints: an unsigned click gets 401, a forged triage link 403, and neither changes anything', async () => {
    const base = url.replace(/\/webhook$/, '');
    const click = await fetch(`${base}/slack/interactions`, { method: 'POST', body: 'payload=%7B%7D' });
    expect(click.status).toBe(401);
    const page = await fetch(`${base}/triage/eyJhIjoieCJ9.forged`);
    expect(page.status).toBe(403);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('answers bad samples with their contract status', async () => {
    const sent = await run([join(root, 'scripts/send.ts'), join(root, 'events/bad/missing-payload.json'), '--url', url], {});
    expect(sent.out).toContain('HTTP 422');
    expect(sent.code).toBe(1);
  });

  it('shows a sample weekly summary at start; npm run summary posts the week of the anomalies this session sent', async () => {
    expect(output()).toContain('Weekly summary · default (sample)');
    const summary = (name: string) =>
      run([join(root, 'scripts/summary.ts'), '--destination', name, '--url', `http://127.0.0.1:${server.port}`], {});
    const posted = await summary('default');
    expect(posted.out).toMatch(/^default: posted, naming \d+ anomal/m);
    expect(posted.code).toBe(0);
    await server.waitFor('Weekly summary · default:');
    expect(output()).toMatch(/Cost anomaly detected: Amazon EC2 in us-east-1 · Production payer \(123456789012\) · open/);
    const refused = await summary('slack-app');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('summaryFor: "slack-app" has no "summary" option. Nothing was posted.');
  });
});

describe('npm start with a relay.config.json naming Teams, Google Chat and Jira console destinations', () => {
  let server: DevServer;

  beforeAll(async () => {
    server = await startDevServer(async (cwd, port) => {
      const consoleUrl = (type: string) => `http://127.0.0.1:${port}/console/${type}`;
      await writeFile(
        join(cwd, 'relay.config.json'),
        JSON.stringify({
          auth: { method: 'none' },
          destinations: {
            default: { url: consoleUrl('slack') },
            teams: { type: 'teams', url: consoleUrl('teams') },
            chat: { type: 'googlechat', url: consoleUrl('googlechat') },
            jira: { type: 'jira', site: consoleUrl('jira'), project: 'FIN', email: 'me@example.com', apiToken: 'console-token' },
          },
          routes: [
            { when: { objectType: ['anomaly_alert'] }, to: ['default', 'teams', 'chat'] },
            { when: { objectType: ['budget_alert'] }, to: ['jira'] },
          ],
        }),
      );
    });
  });

  afterAll(() => server?.stop());

  it('previews the alert as a Slack message, a Teams card and a Google Chat card', async () => {
    const sent = await run([join(root, 'scripts/send.ts'), join(root, 'events/anomaly-alert.json'), '--url', server.url], {});
    expect(sent.out).toContain('HTTP 200');
    await server.waitFor('Card Builder');
    const output = server.output();
    expect(output).toContain('configuration: relay.config.json');
    expect(output).toContain('https://app.slack.com/block-kit-builder#');
    expect(output).toContain('── Microsoft Teams card (console destination) ──');
    expect(output).toContain('Adaptive Cards Designer');
    expect(output).toContain('"version": "1.4"');
    expect(output).toContain('── Google Chat message (console destination) ──');
    expect(output).toContain('"decoratedText"');
    expect(output).toMatch(/thread key: cost-alert-[0-9a-f]{32}/);
  });

  it('plays Jira Cloud: an alert opens an issue, and acknowledging through its Triage link comments on it', async () => {
    const alert = join(await mkdtemp(join(tmpdir(), 'relay-jira-')), 'budget.json');
    await writeFile(
      alert,
      JSON.stringify({
        metadata: { object_type: 'budget_alert', timestamp: '2026-11-26T09:00:00Z' },
        payload: { title: 'Team budget exceeded', message: 'At 104% of the monthly budget', account_id: '123456789012' },
      }),
    );
    expect((await run([join(root, 'scripts/send.ts'), alert, '--url', server.url], {})).out).toContain('HTTP 200');
    const header = '── Jira: new Task FIN-1 (console destination) ──';
    await server.waitFor(header);
    const issue = server.output().slice(server.output().indexOf(header));
    expect(issue).toContain('Team budget exceeded');
    const link = /http:\/\/127\.0\.0\.1:\d+\/triage\/[\w.-]+/.exec(issue)?.[0];
    expect(link).toBeDefined();
    const page = await fetch(link as string, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=acknowledge&name=Dana',
    });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain('could not be told');
    await server.waitFor('── Jira: comment on FIN-1 (console destination) ──');
    expect(server.output()).toMatch(/── Jira: comment on FIN-1 \(console destination\) ──\nAcknowledged by Dana at \d{4}-/);
  });
});
