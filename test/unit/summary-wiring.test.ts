// The summary function as its handler wires it from the environment: the event it is invoked
// with, an environment it cannot use, and the real adapters against a loopback AWS fake.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log/logger.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import { summaryRequestOf } from '../../lib/summary/event.js';
import { createSummaryFromEnvironment } from '../../lib/summary/from-environment.js';
import { createSummaryRun, INDEX_SETTLE_SECONDS } from '../../lib/summary/run.js';
import { memorySummaryWeeks, type SummaryWeeks } from '../../lib/summary/store.js';
import { budgetOf } from '../helpers/budget.js';
import { type FakeAws, startFakeAws } from '../helpers/fake-aws.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const KEY = 'summary-wiring-key-0123456789abcdefghijklmnopq';
const NOW = Date.parse('2026-11-23T09:10:00Z');

describe('the event a summary run is invoked with', () => {
  it('is the hourly run unless it names summaryFor; then strictly a list of destinations, each once', () => {
    expect(summaryRequestOf({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toEqual({ kind: 'scheduled' });
    expect(summaryRequestOf({})).toEqual({ kind: 'scheduled' });
    expect(summaryRequestOf(null)).toEqual({ kind: 'scheduled' });
    expect(summaryRequestOf({ summaryFor: ['finops', 'ops', 'finops'] })).toEqual({ kind: 'now', destinations: ['finops', 'ops'] });
    for (const event of [{ summaryFor: 'finops' }, { summaryFor: [] }, { summaryFor: [''] }, { summaryFor: ['a'], extra: 1 }]) {
      const request = summaryRequestOf(event);
      expect(request, JSON.stringify(event)).toMatchObject({
        kind: 'invalid',
        problem: expect.stringMatching(/^The event is not \{"summaryFor"/),
      });
    }
  });
});

describe('the summary function, wired from its environment', () => {
  let aws: FakeAws;
  let hooks: FakeSlack;
  let configFile = '';
  const lines: string[] = [];
  const logger = createLogger({ sink: (line) => lines.push(line) });
  const saved = { ...process.env };

  beforeAll(async () => {
    [aws, hooks] = await Promise.all([startFakeAws(), startFakeSlack()]);
    // The AWS clients read the SDK's settings from the process, as in Lambda.
    Object.assign(process.env, { AWS_ENDPOINT_URL: aws.url, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' });
    configFile = join(mkdtempSync(join(tmpdir(), 'summary-wiring-')), 'relay.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        auth: { method: 'none' },
        destinations: {
          default: { url: hooks.url('/services/T0/B0/default'), summary: { weekday: 'monday', hour: 9 } },
          teams: { type: 'teams', url: 'https://prod-1.westeurope.logic.azure.com/workflows/x', summary: { weekday: 'friday', hour: 9 } },
        },
      }),
    );
  });
  afterAll(async () => {
    process.env = saved;
    await Promise.all([aws.close(), hooks.close()]);
  });

  const env = (extra: Record<string, string> = {}) => ({
    RELAY_CONFIG_SECRET_ID: `file:${configFile}`,
    ...extra,
  });

  it('an environment it cannot use: every run says which variable, and posts nothing', async () => {
    const bad = createSummaryFromEnvironment(env({ SLACK_API_URL: 'ftp://example.com', DEDUP_TABLE_NAME: 't' }), { logger });
    expect(await bad({}, budgetOf(10_000))).toEqual({
      summaries: [],
      error: "The summary function's environment is invalid: SLACK_API_URL.",
    });
    const metrics = memoryMetrics();
    const noTable = createSummaryFromEnvironment(env(), { logger, metrics });
    expect(await noTable({}, budgetOf(10_000))).toMatchObject({ error: expect.stringContaining('DEDUP_TABLE_NAME') });
    expect(lines.join('\n')).toContain('the summary function is misconfigured');
    // Counted, so the summary alarm sees runs that can post nothing.
    expect(metrics.count('Summaries', { outcome: 'failed', destinationType: 'unknown' })).toBe(1);
  });

  it("posts within the stack's post timeout (POST_TIMEOUT_MS), not a default of its own", async () => {
    aws.calls.length = 0;
    aws.answer('DynamoDB_20120810.PutItem', {});
    aws.answer('DynamoDB_20120810.GetItem', {});
    aws.answer('DynamoDB_20120810.Query', { Items: [] });
    hooks.setBehaviour('/services/T0/B0/default', { kind: 'hang' });
    const summary = createSummaryFromEnvironment(env({ DEDUP_TABLE_NAME: 'seen', POST_TIMEOUT_MS: '400' }), { logger, now: () => NOW });
    const started = performance.now();
    const answer = await summary({ source: 'aws.events' }, budgetOf(20_000), 'req-2');
    expect(answer.summaries[0]).toEqual({ destination: 'default', outcome: 'unconfirmed', reason: 'timeout' });
    // Well under the 5 s it used before, and no earlier than the stack's 400 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(performance.now() - started).toBeLessThan(4_000);
    hooks.setBehaviour('/services/T0/B0/default', { kind: 'ok' });
    aws.calls.length = 0;
  });

  it('an event it cannot read: says so, posts nothing', async () => {
    const summary = createSummaryFromEnvironment(env({ DEDUP_TABLE_NAME: 'seen' }), { logger, now: () => NOW });
    expect(await summary({ summaryFor: 'default' }, budgetOf(10_000))).toMatchObject({ summaries: [] });
    expect(aws.calls).toHaveLength(0);
  });

  it('reads the week from the summaries index and the link key from its secret, takes the week, posts, and counts it', async () => {
    // Last week's summary went out 20 minutes after its hour; this week's starts there.
    const lastEnded = NOW / 1000 - 7 * 86_400 - 10 * 60;
    aws.answer('secretsmanager.GetSecretValue', { SecretString: KEY });
    aws.answer('DynamoDB_20120810.PutItem', {});
    aws.answer('DynamoDB_20120810.GetItem', { Item: { state: { S: 'posted' }, coveredTo: { N: String(lastEnded) } } });
    aws.answer('DynamoDB_20120810.Query', {
      Items: [
        {
          id: { S: 'anomaly#1' },
          firstSeen: { N: String(NOW / 1000 - 3_600) },
          title: { S: 'EC2 spend rose' },
          accountId: { S: '1' },
          accountName: { S: '' },
          origin: { S: 'https://api.example.com' },
          followUps: { N: '0' },
        },
      ],
    });
    const metrics = memoryMetrics();
    const summary = createSummaryFromEnvironment(env({ DEDUP_TABLE_NAME: 'seen', TRIAGE_KEY_SECRET_ID: 'triage-key' }), {
      logger,
      metrics,
      now: () => NOW,
    });
    const answer = await summary({ source: 'aws.events' }, budgetOf(20_000), 'req-1');
    expect(answer.summaries).toEqual([
      { destination: 'default', outcome: 'posted', anomalies: 1 },
      { destination: 'teams', outcome: 'not_due' },
    ]);
    expect(aws.calls.map((c) => c.target)).toEqual([
      'DynamoDB_20120810.PutItem',
      'DynamoDB_20120810.GetItem',
      'DynamoDB_20120810.Query',
      'secretsmanager.GetSecretValue',
      'DynamoDB_20120810.PutItem',
    ]);
    expect(aws.calls[1]?.body).toMatchObject({ Key: { id: { S: 'summary#default#2026-W47' } }, ConsistentRead: true });
    expect(aws.calls[2]?.body['ExpressionAttributeValues']).toMatchObject({ ':from': { N: String(lastEnded) } });
    expect(aws.calls[4]?.body['Item']).toMatchObject({
      id: { S: 'summary#default#2026-W48' },
      state: { S: 'posted' },
      // A couple of minutes before the run: what the index may not show yet is next week's.
      coveredTo: { N: String(NOW / 1000 - INDEX_SETTLE_SECONDS) },
    });
    expect(JSON.stringify(hooks.accepted('/services/T0/B0/default')[0]?.body)).toMatch(
      /EC2 spend rose · 1 · open 1 h · no updates · <https:\/\/api\.example\.com\/triage\//,
    );
    expect(metrics.count('Summaries', { outcome: 'posted', destinationType: 'slack' })).toBe(1);
    expect(lines.join('\n')).toContain('summary cold start');
    expect(lines.join('\n')).not.toContain(KEY);
  });
});

describe('when the table misbehaves around a post', () => {
  it('a week that cannot be taken is not posted; a week not given back or not marked is only a warning', async () => {
    const lines: string[] = [];
    const hooks = await startFakeSlack();
    try {
      const config = {
        config: {
          auth: { method: 'none' as const, headers: [] },
          destinations: {
            default: { url: hooks.url('/services/T0/B0/d'), summary: { weekday: 'monday' as const, hour: 9, timeZone: 'UTC' } },
          },
          routes: [],
        },
      };
      const failing = (what: keyof SummaryWeeks): SummaryWeeks => {
        const weeks = memorySummaryWeeks(() => NOW);
        return { ...weeks, [what]: () => Promise.reject(new Error('table unreachable')) };
      };
      const run = (weeks: SummaryWeeks, linkKey: () => Promise<string | undefined> = async () => KEY) =>
        createSummaryRun({
          config: () => config,
          records: {
            since: async () => [
              {
                id: 'a#1',
                title: 'T',
                accountId: '1',
                accountName: '',
                origin: 'https://api.example.com',
                firstSeen: NOW / 1000 - 600,
                followUps: 0,
              },
            ],
          },
          weeks,
          linkKey,
          services: createChatServices(),
          postTimeoutMs: 2_000,
          logger: createLogger({ sink: (line) => lines.push(line) }),
          metrics: memoryMetrics(),
          now: () => NOW,
        })({ kind: 'scheduled' }, budgetOf(20_000));
      expect((await run(failing('take'))).summaries).toEqual([{ destination: 'default', outcome: 'failed', reason: 'Error' }]);
      expect((await run(failing('coveredTo'))).summaries).toEqual([{ destination: 'default', outcome: 'failed', reason: 'Error' }]);
      expect(hooks.requests).toHaveLength(0);
      expect((await run(failing('posted'))).summaries).toEqual([{ destination: 'default', outcome: 'posted', anomalies: 1 }]);
      expect(lines.join('\n')).toContain('could not mark the week posted');
      hooks.setBehaviour('/services/T0/B0/d', { kind: 'error', status: 404, body: 'no_service' });
      expect((await run(failing('release'))).summaries).toEqual([{ destination: 'default', outcome: 'failed', reason: 'no_service' }]);
      expect(lines.join('\n')).toContain('could not give the week back');
      // A key that cannot be read costs the summary its links, not the summary.
      hooks.setBehaviour('/services/T0/B0/d', { kind: 'ok' });
      const noKey = await run(
        memorySummaryWeeks(() => NOW),
        () => Promise.reject(new Error('no key')),
      );
      expect(noKey.summaries).toEqual([{ destination: 'default', outcome: 'posted', anomalies: 1 }]);
      expect(JSON.stringify(hooks.accepted().at(-1)?.body)).not.toContain('Triage');
      expect(lines.join('\n')).toContain('summaries go without Triage links');
    } finally {
      await hooks.close();
    }
  });
});
