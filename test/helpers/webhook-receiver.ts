import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { closeServer } from './loopback-server.js';

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
