import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHttpsOrLoopbackUrl, parseHttpsOrLoopbackUrl } from '../../lib/transport/allowed-url.js';
import { fetchOverNodeHttp } from '../../lib/transport/fetch-over-node-http.js';

describe('fetch over node:http, as the chat posters and SSO downloads read it', () => {
  let base = '';
  const server = createServer((req, res) => {
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.writeHead(201, { 'content-type': 'application/json', 'x-request': req.method ?? '' }).end('{"ok":true,"emoji":"🚨"}');
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers with the status, headers (repeated ones joined, absent ones null), text, JSON and bytes', async () => {
    const response = await fetchOverNodeHttp(`${base}/x`, { method: 'POST', body: '{}', timeoutMs: 2_000 });
    expect([response.ok, response.status, response.url]).toEqual([true, 201, `${base}/x`]);
    expect(response.headers.get('X-Request')).toBe('POST');
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(response.headers.get('retry-after')).toBeNull();
    expect(Object.fromEntries(response.headers.entries())).toMatchObject({ 'content-type': 'application/json', 'x-request': 'POST' });
    expect(await response.json()).toEqual({ ok: true, emoji: '🚨' });
    expect(Buffer.from(await response.arrayBuffer()).toString('utf8')).toBe(await response.text());
  });

  it('sends only string bodies: what it cannot send as one write is refused before anything leaves', async () => {
    await expect(fetchOverNodeHttp(`${base}/x`, { method: 'POST', body: new Uint8Array([1]) as unknown as string })).rejects.toThrow(
      TypeError,
    );
  });
});

describe('where credentials may travel', () => {
  it('https anywhere, plain http only to this machine, nothing that is not a URL', () => {
    expect(parseHttpsOrLoopbackUrl('https://hooks.slack.com/services/x')?.hostname).toBe('hooks.slack.com');
    for (const url of ['http://127.0.0.1:3000/x', 'http://localhost/x', 'http://[::1]:9/']) expect(isHttpsOrLoopbackUrl(url)).toBe(true);
    for (const url of ['http://hooks.slack.com/x', 'ftp://127.0.0.1/', 'not a url', 'http://127.0.0.1.example.com/'])
      expect(isHttpsOrLoopbackUrl(url)).toBe(false);
  });
});
