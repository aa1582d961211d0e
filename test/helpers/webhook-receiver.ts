import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { closeServer } from './loopback-server.js';
import { freePort } from './ports.js';

/** One request a receiver got, verified as a receiver's code verifies it: with `standardwebhooks`. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The event `standardwebhooks` handed back, or undefined when it refused the request (`refusal` says why). */
  event?: { type: string; timestamp: string; data: Record<string, unknown> };
  refusal?: string;
}

export interface WebhookAnswer {
  status: number;
  headers?: Record<string, string>;
}

export interface FakeWebhookReceiver {
  /** The URL of one receiver on the server (`/hooks/<name>`). */
  url(name: string): string;
  /** What `name` answers next, in order; after the script, 204. */
  script(name: string, ...answers: WebhookAnswer[]): void;
  /** Every request to `name`, in order. */
  received(name: string): ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * Receivers of signed webhooks on loopback, one per path, each with its own secret: every request
 * is kept as it came and verified with the Standard Webhooks reference library, whatever it is
 * answered.
 */
export async function startWebhookReceiver(secrets: Readonly<Record<string, string>>): Promise<FakeWebhookReceiver> {
  const requests: ReceivedWebhook[] = [];
  const scripts = new Map<string, WebhookAnswer[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const name = /^\/hooks\/([\w-]+)$/.exec(req.url ?? '')?.[1] ?? '';
      const body = Buffer.concat(chunks).toString('utf8');
      const got: ReceivedWebhook = { path: req.url ?? '', headers: req.headers, body };
      const secret = secrets[name];
      try {
        if (!secret) throw new Error(`no receiver at ${req.url}`);
        got.event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as ReceivedWebhook['event'];
      } catch (error) {
        got.refusal = (error as Error).message;
      }
      requests.push(got);
      const answer = scripts.get(name)?.shift() ?? { status: 204 };
      res.writeHead(answer.status, answer.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (name) => `${base}/hooks/${name}`,
    script: (name, ...answers) => scripts.set(name, [...(scripts.get(name) ?? []), ...answers]),
    received: (name) => requests.filter((request) => request.path === `/hooks/${name}`),
    close: () => closeServer(server),
  };
}

export interface DocumentedReceiver {
  url: string;
  /** What it printed: a line per event it handled. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The receiver docs/webhook.md shows (its one `js` block), run as written: saved as
 * `receiver.mjs` in a folder of its own whose `node_modules` is this repository's (where
 * `npm install standardwebhooks` would put the library), started with `node` and the variables
 * the page names. Resolves once it listens.
 */
export async function startDocumentedReceiver(secret: string): Promise<DocumentedReceiver> {
  const page = await readFile(new URL('../../docs/webhook.md', import.meta.url), 'utf8');
  const code = /^```js\n([\s\S]*?)^```/m.exec(page)?.[1];
  if (!code) throw new Error('docs/webhook.md shows no receiver (a ```js block)');
  const dir = await mkdtemp(join(tmpdir(), 'webhook-receiver-'));
  await symlink(fileURLToPath(new URL('../../node_modules', import.meta.url)), join(dir, 'node_modules'));
  await writeFile(join(dir, 'receiver.mjs'), code);
  const port = await freePort();
  const child = spawn(process.execPath, ['receiver.mjs'], {
    cwd: dir,
    env: { PATH: process.env['PATH'], WEBHOOK_SECRET: secret, PORT: String(port) },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill();
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  const deadline = Date.now() + 15_000;
  while (!(await listening())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the receiver of docs/webhook.md did not listen:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${port}/cost`, output: () => output, stop };
}
