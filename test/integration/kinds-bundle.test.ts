// The kinds' contract through the built relay (dist/webhook-relay): every registered kind, each
// way it posts, against a loopback server playing its service. In process (kinds-contract.test.ts)
// a kind's lazily bundled poster shares our classes with the cold path; here it is the bundle
// Lambda runs, where a poster that reads the cold path's errors with copies of its own would
// answer a redirect 503 `network_error` instead of 502 `redirect_refused`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KindTools } from '../../lib/notify/kind.js';
import { DESTINATION_TYPES, type DestinationType } from '../../lib/notify/kinds.js';
import { toolsOf } from '../../lib/notify/tools.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { closeServer } from '../helpers/loopback-server.js';

type Answer = { status: number; headers?: Record<string, string>; body?: string };

/** A loopback server playing one kind's service: it answers every request with `answer`. */
async function playService() {
  const played = { answer: { status: 200 } as Answer, requests: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      played.requests += 1;
      res.writeHead(played.answer.status, played.answer.headers).end(played.answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(played, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) });
}

interface Case {
  type: DestinationType;
  name: string;
  destination: object;
  account: string;
}

describe('the kinds’ contract through the built relay bundle', () => {
  const services = new Map<DestinationType, Awaited<ReturnType<typeof playService>>>();
  const tools = new Map<DestinationType, KindTools>();
  const cases: Case[] = [];
  let relay: RunningBundle;
  let folder: string;

  beforeAll(async () => {
    const env: Record<string, string> = {};
    let app: object | undefined;
    for (const type of DESTINATION_TYPES) {
      const service = await playService();
      services.set(type, service);
      const kindTools = await toolsOf(type);
      tools.set(type, kindTools);
      for (const variant of kindTools.conformance.variants(service.url)) {
        Object.assign(env, variant.env);
        app ??= variant.app;
        // Each variant its own destination, reached by an account of its own.
        cases.push({
          type,
          name: `${type}-${cases.length}`,
          destination: variant.destination,
          account: String(310000000000 + cases.length),
        });
      }
    }
    const [first] = cases;
    const config = {
      auth: { method: 'none' },
      ...(app ? { slack: app } : {}),
      destinations: Object.fromEntries([['default', first?.destination], ...cases.map(({ name, destination }) => [name, destination])]),
      routes: cases.map(({ name, account }) => ({ when: { accountId: [account] }, to: [name] })),
    };
    folder = mkdtempSync(join(tmpdir(), 'kinds-bundle-'));
    const file = join(folder, 'relay.config.json');
    writeFileSync(file, JSON.stringify(config));
    // No queue: what a destination cannot take yet is the sender's to retry (503), so each answer
    // says at once what the kind made of its service's.
    relay = await startBundle('webhook-relay', {
      ...env,
      RELAY_CONFIG_SECRET_ID: `file:${file}`,
      AWS_REGION: 'eu-west-1',
      POST_TIMEOUT_MS: '3000',
    });
  });

  afterAll(async () => {
    await relay?.stop();
    await Promise.all([...services.values()].map((service) => service.close()));
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  /** One alert routed to the case's destination alone, its service answering `answer`. */
  async function send(one: Case, answer: Answer) {
    const service = services.get(one.type)!;
    service.answer = answer;
    const before = service.requests;
    const body = JSON.stringify({
      metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z' },
      payload: { title: `EC2 spend rose (${answer.status})`, message: 'up 212%', account_id: one.account, cloud_provider_type: 'aws' },
    });
    const reply = await relay.invoke<{ statusCode: number; body: string }>(
      httpApiEvent({ headers: { 'content-type': 'application/json' }, body }),
      { timeoutMs: 12_000 },
    );
    return { status: reply.statusCode, body: JSON.parse(reply.body) as Record<string, unknown>, posted: service.requests - before };
  }

  it('every registered kind is here, with each way it posts', () => {
    expect(new Set(cases.map((one) => one.type))).toEqual(new Set(DESTINATION_TYPES));
  });

  it('a post the service takes is delivered (200)', async () => {
    for (const one of cases) {
      const { status, body, posted } = await send(one, tools.get(one.type)!.conformance.accepted);
      expect({ status, posted: posted > 0 }, one.name).toEqual({ status: 200, posted: true });
      expect(body['delivered'], one.name).toEqual([one.name]);
    }
  });

  it('a redirect is refused for good (502 redirect_refused), never retried as a network error', async () => {
    for (const one of cases) {
      const { status, body } = await send(one, { status: 302, headers: { location: 'https://elsewhere.example/' } });
      expect(status, one.name).toBe(502);
      expect(body['destinations'], one.name).toEqual([{ name: one.name, reason: 'redirect_refused' }]);
    }
  });

  it('a 4xx is refused (502); a 5xx may pass, so the sender is asked to send it again (503)', async () => {
    for (const one of cases) {
      expect((await send(one, { status: 403, body: '{}' })).status, `${one.name} 403`).toBe(502);
      const unavailable = await send(one, { status: 500, body: '{}' });
      expect(unavailable.status, `${one.name} 500`).toBe(503);
      expect(unavailable.body['destinations'], one.name).toEqual([one.name]);
    }
  });
});
