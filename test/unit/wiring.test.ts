import { describe, expect, it } from 'vitest';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { createRetryWorkerFromEnvironment } from '../../lib/retry/from-environment.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';

const request = { requestId: 'r1', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', isBase64Encoded: false };

describe('reading the environment: one policy for every function', () => {
  it('the relay refuses to guess at a mistyped setting: 503, and the log names the variable', async () => {
    const log = capturedLogger();
    const relay = createRelayFromEnvironment({ RELAY_CONFIG_SECRET_ID: 'file:/nowhere.json', SLACK_TIMEOUT_MS: '5s' }, { logger: log.logger });
    const response = await relay(request, { remainingTimeMs: () => 10_000 });
    expect(response.statusCode).toBe(503);
    expect(log.records()).toContainEqual(expect.objectContaining({ level: 'error', variables: ['SLACK_TIMEOUT_MS'] }));
  });

  it('a blank variable (a template parameter left empty) takes its default', async () => {
    const log = capturedLogger();
    const relay = createRelayFromEnvironment({ RELAY_CONFIG_SECRET_ID: 'file:/nowhere.json', SLACK_TIMEOUT_MS: ' ', DELIVERY_QUEUE_URL: '' }, { logger: log.logger });
    const response = await relay(request, { remainingTimeMs: () => 10_000 });
    // The file is missing: the configuration, not the environment, is what is wrong.
    expect(response.statusCode).toBe(503);
    expect(log.records()).toContainEqual(expect.objectContaining({ message: 'relay configuration is unavailable', reason: 'file_ENOENT' }));
  });

  it('delivery-retry with a bad environment hands every record back', async () => {
    const log = capturedLogger();
    const worker = createRetryWorkerFromEnvironment({ DELIVERY_MAX_ATTEMPTS: 'many' }, log.logger);
    const records = [{ messageId: 'a', receiptHandle: 'h', body: '{}', attributes: {} }];
    expect(await worker(records, () => 10_000)).toEqual({ batchItemFailures: [{ itemIdentifier: 'a' }] });
    expect(log.records()[0]).toMatchObject({ variables: expect.arrayContaining(['DELIVERY_QUEUE_URL', 'DELIVERY_MAX_ATTEMPTS']) });
  });
});
