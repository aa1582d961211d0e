// The docs' walkthroughs, run as written: the configuration a page shows, the commands it gives,
// and what it says will happen. A walkthrough that stops doing what it says fails here.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { root, startDevServer, tsx } from '../helpers/dev-server.js';

/** The fenced blocks of a section of a docs page, by language, in order. */
function blocksOf(page: string, heading: string): Array<{ lang: string; text: string }> {
  const text = readFileSync(join(root, 'docs', page), 'utf8');
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`${page} has no "${heading}"`);
  const end = text.indexOf('\n#', start + heading.length);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] as string, text: m[2] as string }));
}

/** `npm run send -- <args>` as the page writes it, against the server on `port`. */
function send(command: string, port: number): Promise<string> {
  const args = command
    .trim()
    .replace(/^npm run send -- /, '')
    .split(/\s+/);
  return new Promise((resolve) => {
    const child = spawn(tsx, [join(root, 'scripts/send.ts'), ...args, '--url', `http://127.0.0.1:${port}/webhook`], { cwd: root });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', () => resolve(out));
  });
}

describe('docs/local-development.md, "Watching a storm fold into one message"', () => {
  it('folds the three alerts it sends into one digest after the wait, each answered 202 as grouped', async () => {
    const [config, commands] = blocksOf('local-development.md', '### Watching a storm fold into one message');
    expect(config?.lang).toBe('json');
    expect(commands?.lang).toBe('sh');
    const server = await startDevServer({
      // The page's configuration, on the port this server got instead of 3000.
      prepare: (cwd, port) => writeFile(join(cwd, 'relay.config.json'), (config?.text ?? '').replaceAll(':3000/', `:${port}/`)),
    });
    try {
      const answers = [];
      for (const command of (commands?.text ?? '').split(';')) answers.push(await send(command, server.port));
      expect(answers).toHaveLength(3);
      for (const answer of answers) {
        expect(answer).toContain('HTTP 202');
        expect(answer).toContain('"grouped"');
      }
      await server.waitFor('3 alerts', 20_000);
      // One digest naming all three alerts: each title once.
      const output = server.output();
      for (const title of ['Cost anomaly detected: Amazon EC2', 'Weekly recommendations', 'Test alert from Cost Alert Relay']) {
        expect(output.split(title).length - 1, title).toBe(1);
      }
    } finally {
      server.stop();
    }
  });
});

describe('docs/local-development.md, "Triage locally"', () => {
  it('snoozes through the printed Triage link; the follow-up the page sends is then answered snoozed, a re-send duplicate', async () => {
    const [, commands] = blocksOf('local-development.md', '## Triage locally');
    expect(commands?.lang).toBe('sh');
    const server = await startDevServer();
    try {
      expect(await send('npm run send -- events/anomaly-alert.json', server.port)).toContain('HTTP 200');
      await server.waitFor('/triage/');
      // The first link printed is the default destination's (the console bolds its label).
      const link = /\[Triage\] (http:\/\/127\.0\.0\.1:\d+\/triage\/\S+)/.exec(stripVTControlCharacters(server.output()))?.[1];
      expect(link).toBeDefined();
      const page = await fetch(link as string, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=snooze&name=Dana',
      });
      expect(page.status).toBeLessThan(400);
      await server.waitFor('Snoozed for 24 h by');
      // The page's command, as written.
      const followUp = await send(commands?.text ?? '', server.port);
      expect(followUp).toContain('HTTP 200');
      expect(followUp).toContain('"snoozed":["default"]');
      const resend = await send('npm run send -- events/anomaly-alert.json', server.port);
      expect(resend).toContain('"duplicate"');
    } finally {
      server.stop();
    }
  });
});
