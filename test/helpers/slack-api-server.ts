import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/** One answer of Slack's Web API, as its documentation describes them. */
export type WebApiAnswer =
  | { kind: 'ok' }
  /** HTTP 200 with `{"ok": false, "error": word}`: how the Web API says almost everything went wrong. */
  | { kind: 'error'; error: string; retryAfterSeconds?: number }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'status'; status: number };

export interface WebApiCall {
  method: string;
  body: Record<string, unknown>;
  authorization: string | undefined;
  answeredOk: boolean;
}

/** A message as the fake workspace holds it: its latest content and its thread. */
export interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
  edits: number;
  replies: Array<{ text: string; blocks: unknown[] }>;
}

export interface FakeSlackApi {
  url: string;
  calls: WebApiCall[];
  /** Top-level messages per channel, in posting order. */
  messages: StoredMessage[];
  /** The next `count` calls of `method` get `answer`. */
  queue(method: string, answer: WebApiAnswer, count?: number): void;
  /** The message is gone, as when someone deleted it: chat.update answers message_not_found. */
  deleteMessage(ts: string): void;
  close(): Promise<void>;
}

/**
 * A loopback stand-in for Slack's Web API (`chat.postMessage`, `chat.update`), holding the
 * workspace's messages and threads, with the answers Slack documents: `ok:false` errors with
 * HTTP 200, 429 with Retry-After, 5xx. It accepts only the token it was given.
 */
export async function startFakeSlackApi(token: string): Promise<FakeSlackApi> {
  const calls: WebApiCall[] = [];
  const messages: StoredMessage[] = [];
  const queued = new Map<string, WebApiAnswer[]>();
  let clock = 1_716_812_345;

  const handle = (req: IncomingMessage, raw: string): { status: number; headers?: Record<string, string>; body: unknown } => {
    const method = (req.url ?? '/').replace(/^\/api\//, '').replace(/^\//, '');
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // an unreadable body is answered like Slack does: invalid_arguments
    }
    const call: WebApiCall = { method, body, authorization: req.headers.authorization, answeredOk: false };
    calls.push(call);
    const scripted = queued.get(method)?.shift();
    if (scripted?.kind === 'rate_limited') {
      return { status: 429, headers: { 'retry-after': String(scripted.retryAfterSeconds) }, body: { ok: false, error: 'ratelimited' } };
    }
    if (scripted?.kind === 'status') return { status: scripted.status, body: 'upstream trouble' };
    if (scripted?.kind === 'error') {
      const headers: Record<string, string> = scripted.retryAfterSeconds ? { 'retry-after': String(scripted.retryAfterSeconds) } : {};
      return { status: 200, headers, body: { ok: false, error: scripted.error } };
    }
    if (req.headers.authorization !== `Bearer ${token}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    const channel = String(body['channel'] ?? '');
    const text = String(body['text'] ?? '');
    const blocks = (body['blocks'] as unknown[] | undefined) ?? [];
    if (method === 'chat.postMessage') {
      const threadTs = body['thread_ts'];
      if (typeof threadTs === 'string') {
        const parent = messages.find((m) => m.ts === threadTs && m.channel === channel);
        if (!parent) return { status: 200, body: { ok: false, error: 'thread_not_found' } };
        parent.replies.push({ text, blocks });
        call.answeredOk = true;
        return { status: 200, body: { ok: true, channel, ts: `${clock++}.000100` } };
      }
      const ts = `${clock++}.000100`;
      messages.push({ channel, ts, text, blocks, edits: 0, replies: [] });
      call.answeredOk = true;
      return { status: 200, body: { ok: true, channel, ts, message: { text } } };
    }
    if (method === 'chat.update') {
      const message = messages.find((m) => m.ts === body['ts'] && m.channel === channel);
      if (!message) return { status: 200, body: { ok: false, error: 'message_not_found' } };
      Object.assign(message, { text, blocks, edits: message.edits + 1 });
      call.answeredOk = true;
      return { status: 200, body: { ok: true, channel, ts: message.ts } };
    }
    return { status: 200, body: { ok: false, error: 'unknown_method' } };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { status, headers = {}, body } = handle(req, Buffer.concat(chunks).toString('utf8'));
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    messages,
    queue: (method, answer, count = 1) => {
      const list = queued.get(method) ?? [];
      for (let i = 0; i < count; i++) list.push(answer);
      queued.set(method, list);
    },
    deleteMessage: (ts) => {
      const index = messages.findIndex((m) => m.ts === ts);
      if (index >= 0) messages.splice(index, 1);
    },
    close: () => closeServer(server),
  };
}
