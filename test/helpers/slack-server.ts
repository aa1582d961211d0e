import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

export type SlackBehaviour =
  | { kind: 'ok' }
  /** Slack's error answers: a plain-text word such as `channel_is_archived` with a status. */
  | { kind: 'error'; status: number; body: string }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'hang' }
  /**
   * Slack's documented limit: one message per second per webhook, 429 + Retry-After: 1 above it.
   * `windowMs` shortens the window for tests that show the same behaviour on a faster clock;
   * Retry-After stays whole seconds, as Slack sends it.
   */
  | { kind: 'one_per_second'; windowMs?: number };

export interface SlackRequest {
  path: string;
  body: unknown;
  headers: IncomingMessage['headers'];
  receivedAt: number;
  answeredStatus: number;
}

export interface FakeSlack {
  url(path?: string): string;
  /** Every request, answered or not, in arrival order. */
  requests: SlackRequest[];
  /** Only the posts Slack accepted (HTTP 200). */
  accepted(path?: string): SlackRequest[];
  setBehaviour(path: string, behaviour: SlackBehaviour): void;
  /** The next `count` requests to `path` get `behaviour`, then the path's usual behaviour again. */
  queue(path: string, behaviour: SlackBehaviour, count?: number): void;
  reset(): void;
  close(): Promise<void>;
}

/** A loopback stand-in for Slack incoming webhooks with their documented behaviours. */
export async function startFakeSlack(): Promise<FakeSlack> {
  const behaviours = new Map<string, SlackBehaviour>();
  const queued = new Map<string, SlackBehaviour[]>();
  const lastAccepted = new Map<string, number>();
  const requests: SlackRequest[] = [];
  const hanging = new Set<ServerResponse>();

  const answer = (req: IncomingMessage, res: ServerResponse, path: string, raw: string) => {
    const behaviour = queued.get(path)?.shift() ?? behaviours.get(path) ?? { kind: 'ok' };
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // keep the raw text
    }
    const record = (status: number) => requests.push({ path, body, headers: req.headers, receivedAt: Date.now(), answeredStatus: status });

    switch (behaviour.kind) {
      case 'hang':
        record(0);
        hanging.add(res);
        return;
      case 'error':
        record(behaviour.status);
        res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end(behaviour.body);
        return;
      case 'rate_limited':
        record(429);
        res.writeHead(429, { 'retry-after': String(behaviour.retryAfterSeconds), 'content-type': 'text/plain' }).end('rate_limited');
        return;
      case 'one_per_second': {
        const last = lastAccepted.get(path);
        const now = Date.now();
        if (last !== undefined && now - last < (behaviour.windowMs ?? 1000)) {
          record(429);
          res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('rate_limited');
          return;
        }
        lastAccepted.set(path, now);
        record(200);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      }
      case 'ok':
        record(200);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, req.url ?? '/', Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: (path = '/services/T000/B000/XXXX') => `http://127.0.0.1:${port}${path}`,
    requests,
    accepted: (path) => requests.filter((r) => r.answeredStatus === 200 && (path === undefined || r.path === path)),
    setBehaviour: (path, behaviour) => behaviours.set(path, behaviour),
    queue: (path, behaviour, count = 1) => {
      const list = queued.get(path) ?? [];
      for (let i = 0; i < count; i++) list.push(behaviour);
      queued.set(path, list);
    },
    reset: () => {
      behaviours.clear();
      queued.clear();
      lastAccepted.clear();
      requests.length = 0;
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    close: () => closeServer(server, hanging),
  };
}
