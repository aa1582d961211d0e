import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SlackMessage } from '../../lib/notify/slack/format.js';
import { classifySlackAnswer, createSlackPoster } from '../../lib/notify/slack/post.js';
import { freePort } from '../helpers/ports.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

// The poster's default transport is node:http(s), not fetch; these run it against loopback servers.
const message: SlackMessage = {
  text: 'Cost anomaly – Amazon EC2 in us-east-1: 42 € über Plan 🚨',
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Größer als erwartet 🚨 <not a link>', verbatim: true } }],
};
const postSlack = createSlackPoster();
// A deadline a busy machine always meets; the tests of a hang pass a short one.
const post = (url: string, payload: SlackMessage, timeoutMs = 5_000) => postSlack(url, payload, { timeoutMs });

/** A server that answers every request with `answer` and records what it was asked. */
async function startServer(answer: (res: ServerResponse) => void): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

describe('posting to a Slack incoming webhook', () => {
  let slack: FakeSlack;
  const path = '/services/T0/B0/post';
  const others: Server[] = [];

  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterEach(() => slack.reset());
  afterAll(async () => {
    for (const server of others) {
      server.closeAllConnections();
      server.close();
    }
    await slack.close();
  });

  it('delivers the message as JSON, non-ASCII text intact', async () => {
    expect(await post(slack.url(path), message)).toEqual({ kind: 'delivered' });
    const [received] = slack.accepted(path);
    expect(received?.body).toEqual(message);
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(message))));
  });

  it("reads Slack's answers: Retry-After on 429, refusal words, server errors", async () => {
    slack.queue(path, { kind: 'rate_limited', retryAfterSeconds: 7 });
    expect(await post(slack.url(path), message)).toEqual({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 7000 });
    slack.queue(path, { kind: 'error', status: 404, body: 'channel_not_found' });
    expect(await post(slack.url(path), message)).toEqual({ kind: 'refused', reason: 'channel_not_found' });
    slack.queue(path, { kind: 'error', status: 503, body: 'service unavailable, try later' });
    expect(await post(slack.url(path), message)).toEqual({ kind: 'retryable', reason: 'http_503' });
  });

  it('gives up on a webhook that does not answer within the timeout', async () => {
    slack.setBehaviour(path, { kind: 'hang' });
    const started = Date.now();
    expect(await post(slack.url(path), message, 400)).toEqual({ kind: 'retryable', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('gives up on an answer whose body never ends, within the same timeout', async () => {
    const trickling = await startServer((res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('o');
    });
    others.push(trickling.server);
    const started = Date.now();
    expect(await post(`${trickling.url}${path}`, message, 400)).toEqual({ kind: 'retryable', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('follows no redirect: the target never sees the message', async () => {
    const target = await startServer((res) => res.writeHead(200).end('ok'));
    const redirecting = await startServer((res) => res.writeHead(302, { location: `${target.url}${path}` }).end());
    others.push(target.server, redirecting.server);
    expect(await post(`${redirecting.url}${path}`, message)).toEqual({ kind: 'refused', reason: 'redirect_refused' });
    expect(redirecting.hits).toEqual([path]);
    expect(target.hits).toEqual([]);
  });

  it('reports a refused connection and an answer cut short as network errors, without hanging', async () => {
    expect(await post(`http://127.0.0.1:${await freePort()}${path}`, message)).toEqual({ kind: 'retryable', reason: 'network_error' });
    const cutting = await startServer((res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('o');
      res.socket?.destroy();
    });
    others.push(cutting.server);
    expect(await post(`${cutting.url}${path}`, message)).toEqual({ kind: 'retryable', reason: 'network_error' });
  });
});

describe("classifying Slack's answers", () => {
  it('a blank or unreadable Retry-After means the default wait, not zero', () => {
    for (const header of ['', '   ', 'soon', null]) {
      expect(classifySlackAnswer(429, '', header)).toEqual({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 1_000 });
    }
    expect(classifySlackAnswer(429, '', '0')).toEqual({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 0 });
  });

  it('408 and other timeouts may pass: retryable, not refused', () => {
    expect(classifySlackAnswer(408, 'Request Timeout', null)).toEqual({ kind: 'retryable', reason: 'http_408' });
    expect(classifySlackAnswer(504, '', null)).toEqual({ kind: 'retryable', reason: 'http_504' });
    expect(classifySlackAnswer(404, 'no_service', null)).toEqual({ kind: 'refused', reason: 'no_service' });
  });
});
