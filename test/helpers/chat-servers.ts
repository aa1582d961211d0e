import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/** How a fake chat service answers a path, in the service's own words (shared/reference). */
export type ChatBehaviour =
  | { kind: 'ok' }
  /** The service's error answer: Teams `{"error":{"code":…}}`, Google `{"error":{"code":…,"status":…}}`. */
  | { kind: 'error'; status: number; code: string }
  /** 429 in the service's words, with Retry-After when given. */
  | { kind: 'throttled'; retryAfterSeconds?: number }
  | { kind: 'hang' }
  /** Answered as `ok` only when the test calls `release()`: a post still under way while the test acts. */
  | { kind: 'hold' }
  /** The documented rate: more than `perSecond` posts within a second get 429. */
  | { kind: 'rate'; perSecond: number };

export interface ChatRequest {
  path: string;
  /** The query string, as received (`?…`). */
  query: string;
  body: unknown;
  headers: IncomingMessage['headers'];
  receivedAt: number;
  answeredStatus: number;
}

export interface FakeChat {
  url(path?: string, query?: string): string;
  requests: ChatRequest[];
  /** Posts the service accepted. */
  accepted(path?: string): ChatRequest[];
  setBehaviour(path: string, behaviour: ChatBehaviour): void;
  /** The next `count` requests to `path` get `behaviour`, then the path's usual behaviour again. */
  queue(path: string, behaviour: ChatBehaviour, count?: number): void;
  /** Answers every request held by a `hold` behaviour, as `ok` would have. */
  release(): void;
  close(): Promise<void>;
}

interface Dialect {
  ok(req: ChatRequest): { status: number; body: string };
  error(status: number, code: string): string;
  throttled: { code: string };
}

const TEAMS: Dialect = {
  // A workflow only queues the run: 202 and an empty body.
  ok: () => ({ status: 202, body: '' }),
  error: (_status, code) => JSON.stringify({ error: { code, message: `The request failed: ${code}.` } }),
  throttled: { code: 'WorkflowRequestsThrottled' },
};

let created = 0;
const GOOGLE_CHAT: Dialect = {
  ok: (req) => {
    const space = /spaces\/([^/]+)/.exec(req.path)?.[1] ?? 'AAAA';
    const key = (req.body as { thread?: { threadKey?: string } }).thread?.threadKey;
    const name = `spaces/${space}/messages/m${++created}`;
    return {
      status: 200,
      body: JSON.stringify({
        name,
        text: (req.body as { text?: string }).text,
        thread: { name: `spaces/${space}/threads/${key ?? name}` },
      }),
    };
  },
  error: (status, code) => JSON.stringify({ error: { code: status, message: `Request failed: ${code}.`, status: code } }),
  throttled: { code: 'RESOURCE_EXHAUSTED' },
};

async function startFakeChat(dialect: Dialect, defaultPath: string, defaultQuery: string): Promise<FakeChat> {
  const behaviours = new Map<string, ChatBehaviour>();
  const queued = new Map<string, ChatBehaviour[]>();
  const recent = new Map<string, number[]>();
  const requests: ChatRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const held: Array<() => void> = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path = '/', query = ''] = (req.url ?? '/').split(/(?=\?)/, 2);
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // kept as text
      }
      const request: ChatRequest = { path, query, body, headers: req.headers, receivedAt: Date.now(), answeredStatus: 0 };
      requests.push(request);
      const send = (status: number, text: string, headers: Record<string, string> = {}) => {
        request.answeredStatus = status;
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(text);
      };
      const throttle = (retryAfterSeconds?: number) =>
        send(
          429,
          dialect.error(429, dialect.throttled.code),
          retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
        );

      const behaviour = queued.get(path)?.shift() ?? behaviours.get(path) ?? { kind: 'ok' };
      switch (behaviour.kind) {
        case 'hang':
          hanging.add(res);
          return;
        case 'hold':
          hanging.add(res);
          held.push(() => {
            hanging.delete(res);
            const ok = dialect.ok(request);
            send(ok.status, ok.body);
          });
          return;
        case 'error':
          return send(behaviour.status, dialect.error(behaviour.status, behaviour.code));
        case 'throttled':
          return throttle(behaviour.retryAfterSeconds);
        case 'rate': {
          const now = Date.now();
          const window = (recent.get(path) ?? []).filter((t) => now - t < 1_000);
          if (window.length >= behaviour.perSecond) return throttle(1);
          recent.set(path, [...window, now]);
          break;
        }
        case 'ok':
          break;
      }
      const ok = dialect.ok(request);
      send(ok.status, ok.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = defaultPath, query = defaultQuery) => `http://127.0.0.1:${port}${path}${query}`,
    requests,
    accepted: (path) =>
      requests.filter((r) => r.answeredStatus >= 200 && r.answeredStatus < 300 && (path === undefined || r.path === path)),
    setBehaviour: (path, behaviour) => behaviours.set(path, behaviour),
    queue: (path, behaviour, count = 1) => {
      const list = queued.get(path) ?? [];
      for (let i = 0; i < count; i++) list.push(behaviour);
      queued.set(path, list);
    },
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
    close: () => closeServer(server, hanging),
  };
}

/** A loopback Teams Workflows webhook ("When a Teams webhook request is received"). */
export const startFakeTeams = () =>
  startFakeChat(
    TEAMS,
    '/workflows/abc/triggers/manual/paths/invoke',
    '?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=TEAMS-SIG-SECRET',
  );

/** A loopback Google Chat incoming webhook. */
export const startFakeGoogleChat = () =>
  startFakeChat(GOOGLE_CHAT, '/v1/spaces/AAAA/messages', '?key=GCHAT-KEY-SECRET&token=GCHAT-TOKEN-SECRET%3D');
