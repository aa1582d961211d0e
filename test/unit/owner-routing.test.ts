import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { alertView } from '../../lib/format/alert.js';
import type { HttpRequest } from '../../lib/inbound/types.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import type { OwnerDirectory } from '../../lib/owners/directory.js';
import { createOwnerLookup } from '../../lib/owners/lazy-owners.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { createRelay } from '../../lib/relay/relay.js';
import { ambiguousEntries, explainRoutes, routeFacts, selectDestinations } from '../../lib/routing/route.js';
import { errorReason } from '../../lib/shared/errors.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, fakeChatService, manualClock } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const HOOK = (name: string) => `https://hooks.slack.com/services/T0/B0/${name}`;
const config = relayConfigSchema.parse({
  auth: { method: 'none' },
  destinations: { default: { url: HOOK('default') }, data: { url: HOOK('data') }, finance: { url: HOOK('finance') } },
  routes: [
    { when: { costCenter: ['data platform'] }, to: ['data'] },
    { when: { costCenter: ['cc-7'], objectType: ['anomaly_alert'] }, to: ['finance'] },
  ],
});
const DATA = { id: 'cc-42', name: 'Data Platform' };
const FINANCE = { id: 'cc-7', name: 'Finance' };
const message = (account = '111111111111') =>
  webhookMessageSchema.parse({ metadata: { object_type: 'anomaly_alert' }, payload: { title: 'EC2 up', account_id: account } });

describe('routes by cost center', () => {
  const facts = (costCenters?: Array<{ id: string; name: string }>) => routeFacts(message(), costCenters);

  it('match a cost center of the account by name whatever its case, or by id; every matching route adds its destinations', () => {
    expect(selectDestinations(config, facts([DATA]))).toEqual(['data']);
    expect(selectDestinations(config, facts([FINANCE]))).toEqual(['finance']);
    expect(selectDestinations(config, facts([DATA, FINANCE]))).toEqual(['data', 'finance']);
  });

  it('never match when the cost centers are unknown: the alert goes where the other routes or default send it', () => {
    expect(selectDestinations(config, facts())).toEqual(['default']);
    expect(selectDestinations(config, facts([]))).toEqual(['default']);
    expect(selectDestinations(config, facts([{ id: 'cc-1', name: 'Marketing' }]))).toEqual(['default']);
  });

  it('tell payers apart: `<payer>:<id>` names one payer’s cost center; an id another payer uses too matches neither by itself', () => {
    const routes = {
      routes: [
        { when: { costCenter: ['7'] }, to: ['data'] },
        { when: { costCenter: ['12345:7'] }, to: ['finance'] },
      ],
    };
    const ours = { id: '7', name: 'Data', payer: '12345' };
    // Unambiguous: the bare id keeps working, and so does the payer's form.
    expect(selectDestinations(routes, routeFacts(message(), [ours]))).toEqual(['data', 'finance']);
    // Another payer's cost center 7 is not ours.
    expect(selectDestinations(routes, routeFacts(message(), [{ ...ours, payer: '67890', name: 'Marketing', idShared: true }]))).toEqual([
      'default',
    ]);
    expect(selectDestinations(routes, routeFacts(message(), [{ ...ours, idShared: true }]))).toEqual(['finance']);
    // By name it still matches, whatever the case and spaces around it.
    expect(
      selectDestinations(
        { routes: [{ when: { costCenter: [' data '] }, to: ['data'] }] },
        routeFacts(message(), [{ ...ours, idShared: true }]),
      ),
    ).toEqual(['data']);
    expect(ambiguousEntries(routes, routeFacts(message(), [{ ...ours, idShared: true }]))).toEqual([{ entry: '7', instead: ['12345:7'] }]);
    expect(ambiguousEntries(routes, routeFacts(message(), [ours]))).toEqual([]);
  });

  it('say which entry matched nothing for a shared id once, with each way to name it instead', () => {
    const routes = {
      routes: [
        { when: { objectType: ['anomaly_alert'] }, to: ['data'] },
        { when: { costCenter: ['7', ' 7 '] }, to: ['data'] },
        { when: { costCenter: ['7', 'Finance'] }, to: ['finance'] },
      ],
    };
    const shared = [
      { id: '7', name: 'Data', payer: '12345', idShared: true },
      { id: '7', name: '', idShared: true },
      { id: '7', name: 'Finance', idShared: true },
    ];
    // Each by its payer's form where the payer is known, else by its name (or, without one, its id); the route on "Finance" is no problem.
    expect(ambiguousEntries(routes, routeFacts(message(), shared))).toEqual([{ entry: '7', instead: ['12345:7', '7', 'Finance'] }]);
    expect(ambiguousEntries(routes, routeFacts(message()))).toEqual([]);
  });

  it('are configuration: a list of names or ids, checked by path', () => {
    const problems = relayConfigSchema.safeParse({ ...config, routes: [{ when: { costCenter: [] }, to: ['data'] }] });
    expect(problems.success).toBe(false);
    expect(JSON.stringify(problems.error?.issues.map((i) => i.path))).toContain('costCenter');
  });
});

/** A directory that knows one account, covered by the given cost centers, as an owners file would name them. */
const knowing = (accountId: string, costCenters: Array<{ id: string; name: string }>): OwnerDirectory => ({
  read: async (id) => (id === accountId ? { accountId, costCenters, routing: costCenters, readAt: 1 } : undefined),
});

function setup(directory: OwnerDirectory | undefined, routes = config.routes, ownerRouting = false) {
  const clock = manualClock();
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const slack = fakeChatService();
  const reads: string[] = [];
  const counted: OwnerDirectory | undefined = directory && {
    read: (accountId, signal) => {
      reads.push(accountId);
      return directory.read(accountId, signal);
    },
  };
  const lookup = createOwnerLookup({ directory: counted, ttlSeconds: 300, now: clock.now, logger: log.logger, metrics, errorReason });
  const store = memoryConfigStore({ config: { ...config, routes } });
  const relay = createRelay({
    config: store,
    authenticate: createRequestAuthenticator({ check: createAuthenticator(), store, graceMs: 0, now: clock.now }),
    first: createDelivery({
      services: chatServices({ slack }),
      postTimeoutMs: 5_000,
      logger: log.logger,
      now: clock.now,
      sleep: clock.sleep,
    }).first,
    owners: lookup,
    ownerRouting,
    logger: log.logger,
    now: clock.now,
  });
  const send = (account: string | number | null = '111111111111', budgetMs = 10_000, cloud?: string) => {
    const request: HttpRequest = {
      requestId: 'r',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        metadata: { object_type: 'anomaly_alert' },
        payload: { title: 'EC2 up', account_id: account, ...(cloud ? { cloud_provider_type: cloud } : {}) },
      }),
      isBase64Encoded: false,
    };
    return relay(request, budgetOf(budgetMs));
  };
  return { send, slack, reads, log, clock, metrics };
}

const to = (slack: ReturnType<typeof fakeChatService>) => slack.posts.map((p) => p.url.split('/').at(-1));

describe('the relay and the owner directory', () => {
  const known = knowing('111111111111', [DATA]);

  it('routes an alert to the team whose cost center covers its account', async () => {
    const { send, slack } = setup(known);
    expect((await send()).statusCode).toBe(200);
    expect(to(slack)).toEqual(['data']);
  });

  it('reads an account once per configuration lifetime, not per delivery', async () => {
    const { send, reads, clock } = setup(known);
    await send();
    await send();
    expect(reads).toEqual(['111111111111']);
    clock.advance(301_000);
    await send();
    expect(reads).toHaveLength(2);
  });

  it('reads an account id sent as a number as the same account, and nothing for an alert without one', async () => {
    const { send, reads, slack } = setup({
      read: async (accountId) => ({ accountId, costCenters: [DATA], routing: [DATA], readAt: 1 }),
    });
    await send(222222222222);
    await send(null);
    expect(reads).toEqual(['222222222222']);
    expect(to(slack)).toEqual(['data', 'default']);
  });

  it('looks up an AWS account id that lost its leading zero as a JSON number in its twelve-digit form', async () => {
    const { send, reads, slack } = setup(knowing('012345678901', [DATA]));
    await send(12345678901);
    await send(12345678901, 10_000, 'AWS');
    expect(to(slack)).toEqual(['data', 'data']);
    expect(reads).toEqual(['012345678901']);
    // Another cloud's numeric id is looked up as it came, and so is text.
    const other = setup(knowing('012345678901', [DATA]));
    await other.send(12345678901, 10_000, 'gcp');
    await other.send('12345678901');
    expect(other.reads).toEqual(['12345678901']);
    expect(to(other.slack)).toEqual(['default', 'default']);
  });

  it('with owner routing on, names the account’s cost centers in every message, though no route uses them', async () => {
    const plain = [{ when: { objectType: ['anomaly_alert'] }, to: ['finance'] }];
    const on = setup(known, plain, true);
    await on.send();
    expect(on.reads).toEqual(['111111111111']);
    expect(on.slack.posts.at(-1)?.payload.costCenters).toEqual(['Data Platform']);
    const off = setup(known, plain, false);
    await off.send();
    expect(off.reads).toEqual([]);
    expect(off.slack.posts.at(-1)?.payload.costCenters).toBeUndefined();
  });

  it('reads nothing for a configuration without cost-center routes', async () => {
    const { send, reads, slack } = setup(known, [{ when: { cloudProvider: ['aws'] }, to: ['data'] }]);
    await send();
    expect(reads).toEqual([]);
    expect(to(slack)).toEqual(['default']);
  });

  it('an unknown account, a failing directory or a hung one sends the alert to default, in time and with a warning', async () => {
    const unknown = setup(known);
    await unknown.send('999');
    expect(to(unknown.slack)).toEqual(['default']);

    const failing = setup({ read: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) });
    expect((await failing.send()).statusCode).toBe(200);
    expect(to(failing.slack)).toEqual(['default']);
    expect(failing.log.lines.join('\n')).toContain('owner directory unavailable');
    // Counted for the alarm: the alert went where routes without cost centers send it.
    expect(failing.metrics.count('OwnerDirectoryUnavailable', {})).toBe(1);
    expect(unknown.metrics.count('OwnerDirectoryUnavailable', {})).toBe(0);

    const hung = setup({
      read: (_id, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
    });
    const started = Date.now();
    expect((await hung.send('111111111111', 3_000)).statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(to(hung.slack)).toEqual(['default']);
    expect(hung.metrics.count('OwnerDirectoryUnavailable', {})).toBe(1);
  });

  it('a queued alert keeps the cost centers it arrived with (ids and names), and nothing else', () => {
    const job = newJob('d', 'data', message(), 'http_503', 0, undefined, undefined, false, [DATA]);
    expect(parseDeliveryJob(JSON.stringify(job))?.costCenters).toEqual([DATA]);
    expect(parseDeliveryJob(JSON.stringify({ ...job, costCenters: [{ ...DATA, key: 'x' }] }))).toBeUndefined();
  });
});

describe('why a delivery goes where it goes (npm run config -- explain)', () => {
  it('names each destination with the routes that send it there, and default when none match', () => {
    const facts = (costCenters?: Array<{ id: string; name: string }>) => ({
      ...routeFacts(message()),
      ...(costCenters ? { costCenters } : {}),
    });
    expect(explainRoutes(config, facts([DATA, FINANCE]))).toEqual([
      { destination: 'data', routes: [0] },
      { destination: 'finance', routes: [1] },
    ]);
    expect(explainRoutes(config, facts())).toEqual([{ destination: 'default', routes: [] }]);
  });

  it('every message names the cost centers, in the plural when there are several', () => {
    const facts = (costCenters: Array<{ id: string; name: string }>) =>
      Object.fromEntries(alertView(message(), costCenters).facts.map((f) => [f.label, f.value]));
    expect(facts([DATA])).toMatchObject({ 'Cost center': 'Data Platform' });
    expect(facts([DATA, { id: 'cc-9', name: '' }])).toMatchObject({ 'Cost centers': 'Data Platform, cc-9' });
  });
});

describe('the relay as its environment wires it, with an owners file (npm start)', () => {
  it('routes by the cost centers the directory names, and to default while the directory fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'owners-wiring-'));
    writeFileSync(
      join(dir, 'relay.json'),
      JSON.stringify({ auth: { method: 'none' }, destinations: config.destinations, routes: config.routes }),
    );
    const posts: string[] = [];
    const answered: NodeFetch = async (input) => {
      posts.push(String(input).split('/').at(-1) ?? '');
      return {
        ok: true,
        status: 200,
        statusText: 'OK',
        url: String(input),
        headers: { get: () => null, entries: () => [] },
        text: async () => 'ok',
        json: async () => 'ok',
        arrayBuffer: async () => new ArrayBuffer(0),
      };
    };
    let failing = false;
    const owners: OwnerDirectory = {
      read: async (accountId) => {
        if (failing) throw new Error('owners file unreadable');
        return { accountId, costCenters: [DATA], routing: [DATA] };
      },
    };
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`, RELAY_CONFIG_TTL_SECONDS: '0' },
      { logger: log.logger, metrics, services: createChatServices(answered), owners },
    );
    const body = (title: string) =>
      JSON.stringify({ metadata: { object_type: 'anomaly_alert' }, payload: { title, account_id: '111111111111' } });
    const request = { requestId: 'r', method: 'POST', headers: { 'content-type': 'application/json' }, isBase64Encoded: false };
    try {
      expect((await relay({ ...request, body: body('one') }, budgetOf(10_000))).statusCode).toBe(200);
      failing = true;
      expect((await relay({ ...request, body: body('two') }, budgetOf(10_000))).statusCode).toBe(200);
      expect(posts).toEqual(['data', 'default']);
      expect(log.lines.join('\n')).toContain('owner directory unavailable');
      expect(metrics.count('OwnerDirectoryUnavailable', {})).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
