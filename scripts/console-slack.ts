import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Block {
  type: string;
  text?: { text: string };
  fields?: Array<{ text: string }>;
  elements?: Array<{ text: string }>;
}

export function blockKitBuilderLink(blocks: unknown): string {
  return `https://app.slack.com/block-kit-builder#${encodeURIComponent(JSON.stringify({ blocks }))}`;
}

/** A rough terminal rendering of a Block Kit message, enough to see what a channel would show. */
export function renderForTerminal(message: { text?: string; blocks?: Block[] }): string {
  const lines: string[] = [];
  for (const block of message.blocks ?? []) {
    if (block.type === 'header' && block.text) lines.push(`\x1b[1m${block.text.text}\x1b[0m`);
    if (block.type === 'section' && block.text) lines.push(block.text.text);
    if (block.type === 'section' && block.fields) lines.push(block.fields.map((f) => f.text.replace('\n', ' ')).join('   '));
    if (block.type === 'context' && block.elements) lines.push(`\x1b[2m${block.elements.map((e) => e.text).join('  ')}\x1b[0m`);
  }
  return lines.join('\n');
}

/**
 * The embedded default destination: a loopback "Slack" that prints each message and a
 * Block Kit Builder link instead of posting, so `npm start` works with no Slack workspace.
 */
export async function startConsoleSlack(print: (text: string) => void = console.log): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text?: string; blocks?: Block[] };
        print(`\n── Slack message (console destination) ──\n${renderForTerminal(message)}\n`);
        print(`notification text: ${message.text ?? ''}`);
        print(`preview in Block Kit Builder: ${blockKitBuilderLink(message.blocks ?? [])}\n`);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid_payload');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/console`, server };
}
