import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { createLogger } from '../../lib/log/logger.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { emfMetrics, metricsFromEnvironment } from '../../lib/metrics/emf.js';
import {
  answerLatencyMetric,
  answerMetric,
  deliveryMetric,
  METRICS_NAMESPACE,
  parkedMetric,
  rotationMetric,
} from '../../lib/metrics/metrics.js';
import { budgetOf } from '../helpers/budget.js';
import {
  capturedLogger,
  chatServices,
  fakeChatService,
  manualClock,
  memoryDeadLetters,
  memoryRetryQueue,
} from '../helpers/fake-delivery-ports.js';
import { emfRecords, memoryMetrics } from '../helpers/memory-metrics.js';

const URL = 'https://hooks.slack.com/services/T0/B0/metric-secret';
const message = webhookMessageSchema.parse({
  metadata: { object_type: 'anomaly_alert' },
  payload: { title: 'Spend up', message: 'private text' },
});
const target = { name: 'finops', destination: { url: URL } };

/** What the EMF writer writes to stdout while `run` runs (lines go out in a microtask, so wait for it). */
async function stdoutOf(run: () => void): Promise<string[]> {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    spy.mockRestore();
  }
  return written.join('').split('\n').filter(Boolean);
}

afterEach(() => vi.restoreAllMocks());

describe('metrics in Embedded Metric Format', () => {
  it('one line per point, in the project namespace, with the function as `service` and each dimension set', async () => {
    const metrics = emfMetrics('webhook-relay');
    const lines = await stdoutOf(() => {
      metrics.add(deliveryMetric('parked', 'slack'));
      metrics.add(parkedMetric('channel_not_found'));
      metrics.add(rotationMetric('createSecret', 'failed'));
    });
    const [delivery, parked, rotation] = emfRecords(lines);
    expect(lines).toHaveLength(3);
    expect(delivery).toMatchObject({ service: 'webhook-relay', outcome: 'parked', destinationType: 'slack', Deliveries: 1 });
    expect(delivery?._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [
        ['service', 'outcome'],
        ['service', 'outcome', 'destinationType'],
      ],
      Metrics: [{ Name: 'Deliveries', Unit: 'Count' }],
    });
    // [service] alone lets one alarm watch every parked alert, whatever the reason.
    expect(parked?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service'], ['service', 'reason']]);
    expect(rotation).toMatchObject({ outcome: 'failed', step: 'createSecret', Rotations: 1 });
  });

  it('points of one kind keep their own values and timestamp; the shared directive stays the same', async () => {
    let clock = 1_000;
    const metrics = emfMetrics('webhook-relay', undefined, () => clock);
    const lines = await stdoutOf(() => {
      metrics.add(deliveryMetric('delivered', 'slack'));
      clock = 2_000;
      metrics.add(deliveryMetric('queued', 'teams'));
      metrics.add(answerLatencyMetric(12.5));
      metrics.add(answerMetric(503));
    });
    const [first, second, latency, answer] = emfRecords(lines);
    expect(first).toMatchObject({ _aws: { Timestamp: 1_000 }, outcome: 'delivered', destinationType: 'slack', Deliveries: 1 });
    expect(second).toMatchObject({ _aws: { Timestamp: 2_000 }, outcome: 'queued', destinationType: 'teams', Deliveries: 1 });
    expect(second?._aws.CloudWatchMetrics).toEqual(first?._aws.CloudWatchMetrics);
    expect(latency).toEqual({
      _aws: {
        Timestamp: 2_000,
        CloudWatchMetrics: [
          { Namespace: METRICS_NAMESPACE, Dimensions: [['service']], Metrics: [{ Name: 'AnswerLatency', Unit: 'Milliseconds' }] },
        ],
      },
      service: 'webhook-relay',
      AnswerLatency: 12.5,
    });
    expect(answer).toMatchObject({ status: '503', Answers: 1, _aws: { CloudWatchMetrics: [{ Dimensions: [['service', 'status']] }] } });
  });

  it('points that differ only in their rollups get their own dimension sets', async () => {
    const metrics = emfMetrics('webhook-relay');
    const point = (rollups: string[][]) => ({ ...parkedMetric('x'), dimensions: { reason: 'x', step: 'y' }, rollups });
    const lines = await stdoutOf(() => {
      metrics.add(point([[]]));
      metrics.add(point([]));
      metrics.add(point([['reason'], ['step']]));
      metrics.add(point([['step'], ['reason']]));
    });
    expect(emfRecords(lines).map((record) => record?._aws.CloudWatchMetrics[0]?.Dimensions)).toEqual([
      [['service'], ['service', 'reason', 'step']],
      [['service', 'reason', 'step']],
      [
        ['service', 'reason'],
        ['service', 'step'],
        ['service', 'reason', 'step'],
      ],
      [
        ['service', 'step'],
        ['service', 'reason'],
        ['service', 'reason', 'step'],
      ],
    ]);
  });
});

describe('switching the lines off', () => {
  it('POWERTOOLS_METRICS_DISABLED=true writes nothing; unset or anything else writes the lines', async () => {
    const lines = (env: Record<string, string>) => stdoutOf(() => metricsFromEnvironment('webhook-relay', env).add(parkedMetric('x')));
    expect(await lines({ POWERTOOLS_METRICS_DISABLED: 'true' })).toEqual([]);
    expect(await lines({ POWERTOOLS_METRICS_DISABLED: ' TRUE ' })).toEqual([]);
    expect(await lines({})).toHaveLength(1);
    expect(await lines({ POWERTOOLS_METRICS_DISABLED: 'false' })).toHaveLength(1);
  });
});

describe('stdout lines', () => {
  it('the lines of one synchronous stretch go out in one write, in order, before anything awaiting it goes on', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      const metrics = emfMetrics('webhook-relay');
      const log = createLogger();
      const invocation = (async () => {
        log.info('delivery');
        metrics.add(parkedMetric('a'));
        metrics.add(parkedMetric('b'));
        return 'answer';
      })();
      const seenAtAnswer = await invocation.then(() => writes.length);
      expect(seenAtAnswer).toBe(1);
      expect(
        writes[0]
          ?.split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line).message ?? JSON.parse(line).reason),
      ).toEqual(['delivery', 'a', 'b']);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('what the delivery core counts', () => {
  const setup = (script: Parameters<typeof fakeChatService>[0], queue: boolean) => {
    const metrics = memoryMetrics();
    const clock = manualClock();
    const delivery = createDelivery({
      services: chatServices({ slack: fakeChatService(script) }),
      postTimeoutMs: 5_000,
      ...(queue ? { retryQueue: memoryRetryQueue() } : {}),
      deadLetters: memoryDeadLetters(),
      logger: capturedLogger().logger,
      metrics,
      now: clock.now,
      sleep: clock.sleep,
    });
    return { delivery, metrics };
  };

  it('each first attempt by outcome and destination type; each parked alert by its reason', async () => {
    const { delivery, metrics } = setup(
      [{ kind: 'delivered' }, { kind: 'retryable', reason: 'http_503' }, { kind: 'refused', reason: 'invalid_token' }],
      true,
    );
    for (const id of ['a', 'b', 'c']) await delivery.first({ deliveryId: id, target, message }, budgetOf(10_000));
    expect(metrics.count('Deliveries', { outcome: 'delivered', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'queued', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('Deliveries', { outcome: 'parked', destinationType: 'slack' })).toBe(1);
    expect(metrics.count('AlertsParked', { reason: 'invalid_token' })).toBe(1);
    expect(JSON.stringify(metrics.points)).not.toMatch(/metric-secret|private text|Spend up|finops/);
  });

  it('a destination neither delivered nor queued is counted as unheld', async () => {
    const { delivery, metrics } = setup([{ kind: 'retryable', reason: 'timeout' }], false);
    await delivery.first({ deliveryId: 'a', target, message }, budgetOf(10_000));
    expect(metrics.count('Deliveries', { outcome: 'unheld' })).toBe(1);
  });
});
