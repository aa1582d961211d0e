import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLevelFrom } from '../../lib/log/logger.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { createRetryWorkerFromEnvironment } from '../../lib/retry/from-environment.js';
import type { NodeFetch } from '../../lib/transport/fetch-over-node-http.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const request = { requestId: 'r1', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', isBase64Encoded: false };

describe('reading the environment: one policy for every function', () => {
  it('the relay refuses to guess at a mistyped setting: 503, the log names the variable, the metric counts it', async () => {
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: 'file:/nowhere.json', SLACK_TIMEOUT_MS: '5s' },
      { logger: log.logger, metrics },
    );
    const response = await relay(request, budgetOf(10_000));
    expect(response.statusCode).toBe(503);
    expect(log.records()).toContainEqual(expect.objectContaining({ level: 'error', variables: ['SLACK_TIMEOUT_MS'] }));
    expect(metrics.count('ConfigurationUnavailable')).toBe(1);
  });

  it('a blank variable (a template parameter left empty) takes its default', async () => {
    const log = capturedLogger();
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: 'file:/nowhere.json', SLACK_TIMEOUT_MS: ' ', DELIVERY_QUEUE_URL: '' },
      { logger: log.logger, metrics: memoryMetrics() },
    );
    const response = await relay(request, budgetOf(10_000));
    // The file is missing: the configuration, not the environment, is what is wrong.
    expect(response.statusCode).toBe(503);
    expect(log.records()).toContainEqual(expect.objectContaining({ message: 'relay configuration is unavailable', reason: 'file_ENOENT' }));
  });

  it.each([
    { env: { POST_TIMEOUT_MS: '1234' }, timeoutMs: 1234 },
    { env: { SLACK_TIMEOUT_MS: '1234' }, timeoutMs: 1234 },
    { env: { POST_TIMEOUT_MS: '2345', SLACK_TIMEOUT_MS: '1234' }, timeoutMs: 2345 },
    { env: {}, timeoutMs: 5_000 },
  ])('the relay posts through the chat services it is given, with the post timeout set by $env', async ({ env, timeoutMs }) => {
    const dir = mkdtempSync(join(tmpdir(), 'wiring-'));
    const url = 'https://hooks.slack.com/services/T0/B0/wiring-secret';
    writeFileSync(join(dir, 'relay.json'), JSON.stringify({ auth: { method: 'none' }, destinations: { default: { url } } }));
    const posts: Array<{ url: string; body: unknown; timeoutMs: number | undefined }> = [];
    const answered: NodeFetch = async (input, init) => {
      posts.push({ url: String(input), body: JSON.parse(String(init?.body)), timeoutMs: init?.timeoutMs });
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
    try {
      const log = capturedLogger();
      const relay = createRelayFromEnvironment(
        { RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}`, ...env },
        { logger: log.logger, metrics: memoryMetrics(), services: createChatServices(answered) },
      );
      const body = readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8');
      const response = await relay({ ...request, body }, budgetOf(10_000));
      expect(response.statusCode).toBe(200);
      expect(posts).toEqual([{ url, body: expect.objectContaining({ blocks: expect.any(Array) }), timeoutMs }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('delivery-retry with a bad environment fails its invocation, so Lambda counts an error and the batch stays queued', async () => {
    const log = capturedLogger();
    const worker = createRetryWorkerFromEnvironment({ DELIVERY_MAX_ATTEMPTS: 'many' }, { logger: log.logger, metrics: memoryMetrics() });
    const records = [{ messageId: 'a', receiptHandle: 'h', body: '{}', attributes: {} }];
    const failure = await worker(records, budgetOf(10_000)).catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'RetryWorkerMisconfiguredError', reason: 'environment_invalid' });
    expect(String((failure as Error).message)).toContain('DELIVERY_MAX_ATTEMPTS');
    expect(log.records()[0]).toMatchObject({ variables: expect.arrayContaining(['DELIVERY_QUEUE_URL', 'DELIVERY_MAX_ATTEMPTS']) });
  });

  it("AWS_LAMBDA_LOG_LEVEL (the function's application log level) wins over LOG_LEVEL", () => {
    expect(logLevelFrom({ LOG_LEVEL: 'debug' })).toBe('debug');
    expect(logLevelFrom({ LOG_LEVEL: 'debug', AWS_LAMBDA_LOG_LEVEL: 'WARN' })).toBe('warn');
    expect(logLevelFrom({ AWS_LAMBDA_LOG_LEVEL: 'TRACE' })).toBe('debug');
    expect(logLevelFrom({ AWS_LAMBDA_LOG_LEVEL: 'FATAL' })).toBe('error');
    expect(logLevelFrom({ AWS_LAMBDA_LOG_LEVEL: ' ', LOG_LEVEL: 'error' })).toBe('error');
    expect(logLevelFrom({})).toBe('info');
  });
});
