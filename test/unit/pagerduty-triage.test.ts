// A PagerDuty alert follows what was decided about its anomaly, with the Events API's merge rules:
// a trigger merges into an open incident (acknowledged or not) without notifying anyone, and after
// a resolve it opens a new incident, which pages. The relay's first attempt (lib/dedup), the
// triage notes, and delivery-retry (lib/retry), in process with an injected clock, against a
// loopback PagerDuty that counts pages (test/helpers/pagerduty-server.ts).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverOnce, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery, type Target } from '../../lib/delivery/deliver.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import { createChatServices, KINDS, serviceFor } from '../../lib/notify/kinds.js';
import type { PagerDutyDestination } from '../../lib/notify/pagerduty/config.js';
import type { QueueMessageOps } from '../../lib/queue/sqs.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch } from '../../lib/retry/process-batch.js';
import { fetchOverNodeHttp } from '../../lib/transport/fetch-over-node-http.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { SNOOZE_SECONDS, type TriageAction } from '../../lib/vocabulary/triage.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, manualClock, memoryDeadLetters, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { type FakePagerDuty, startFakePagerDuty } from '../helpers/pagerduty-server.js';

const KEY = 'R0ONCALL0KEY0123456789abcdefABCD';
const oncall: PagerDutyDestination = { type: 'pagerduty', routingKey: KEY };
const target: Target = { name: 'oncall', destination: oncall };
const LINK = 'https://cost-alerts.example.org/triage/token-1';

const alert = (message: string): WebhookMessage =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
    payload: { title: 'EC2 spend rose', message, account_id: '123456789012', cloud_provider_type: 'aws' },
  });
const DEDUP_KEY = anomalyRecordId(alert('any'), 'oncall');

let fake: FakePagerDuty;
beforeAll(async () => {
  fake = await startFakePagerDuty();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.alerts.clear();
  fake.incidents.length = 0;
});

function setup() {
  const clock = manualClock();
  const log = capturedLogger();
  const store = memoryTriageStore(clock.now);
  // The anomaly's item holds its triage state as the triage function wrote it.
  const ledger = memoryLedger(clock.now, (id) => store.records.get(id)?.triage);
  const services = createChatServices(fetchOverNodeHttp, { PAGERDUTY_EVENTS_URL: fake.url });
  const retryQueue = memoryRetryQueue();
  const delivery = createDelivery({
    services,
    postTimeoutMs: 2_000,
    retryQueue,
    deadLetters: memoryDeadLetters(),
    logger: log.logger,
    now: clock.now,
    sleep: clock.sleep,
    triage: () => ({ link: LINK }),
  });
  const first = deliverOnce({ ledger, delivery, logger: log.logger, now: clock.now });
  let sent = 0;
  /** The platform sends the anomaly again, with something changed: an opening first, then follow-ups. */
  const send = (text: string) => first({ deliveryId: `d${++sent}`, target, message: alert(text) }, budgetOf(10_000));
  /** An action on the anomaly's Triage page: recorded, then its note posted, as the triage function does. */
  const act = async (action: TriageAction) => {
    const at = Math.floor(clock.now() / 1000);
    expect((await store.apply(DEDUP_KEY, action, 'Dana', at)).kind).toBe('applied');
    const note = (await KINDS.pagerduty.extras()).triageNote(oncall, {
      action,
      line: `${action} by Dana`,
      by: 'Dana',
      at,
      destination: 'oncall',
      anomalyId: DEDUP_KEY,
      title: 'EC2 spend rose',
      link: LINK,
    });
    return serviceFor(services, oncall).post(KEY, note, { timeoutMs: 2_000 });
  };
  /** delivery-retry takes what waits on the retry queue. */
  const retry = () => {
    const jobs = retryQueue.jobs.splice(0);
    const records = jobs.map(({ job }, i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: JSON.stringify(job),
      attributes: { ApproximateReceiveCount: '1' },
    }));
    return processBatch(records, {
      config: memoryConfigStore({
        config: { auth: { method: 'none', headers: [] }, destinations: { default: oncall, oncall }, routes: [] },
      }),
      delivery,
      messages: { changeVisibility: async () => {} } as unknown as QueueMessageOps,
      pacer: createPacer(clock.now, clock.sleep),
      maxAttempts: 5,
      postTimeoutMs: 2_000,
      logger: log.logger,
      ledger: retryLedger({ ledger, logger: log.logger, now: clock.now }),
      budget: budgetOf(30_000),
    });
  };
  const actions = () => fake.accepted().map((r) => r.body['event_action']);
  return { send, act, retry, clock, ledger, retryQueue, actions };
}

describe('a PagerDuty alert follows what was decided about its anomaly', () => {
  it('after Expected, a follow-up is not triggered (it would open a new incident and page); it counts as delivered', async () => {
    const s = setup();
    expect(await s.send('up 212%')).toEqual({ kind: 'delivered' });
    expect(await s.act('expected')).toEqual({ kind: 'delivered' });
    expect(fake.alerts.get(DEDUP_KEY)?.status).toBe('resolved');

    expect(await s.send('up 340%')).toEqual({ kind: 'delivered' });
    expect(await s.send('up 410%')).toEqual({ kind: 'delivered' });
    expect(s.actions()).toEqual(['trigger', 'resolve']);
    expect(fake.pages(DEDUP_KEY)).toBe(1);
    // Recorded as delivered: a re-send of either is a duplicate, and the anomaly counts both.
    expect(s.ledger.anomalies.get(DEDUP_KEY)?.followUps).toBe(2);
    expect(await s.send('up 410%')).toEqual({ kind: 'duplicate', state: 'delivered' });
  });

  it('Reopen after Acknowledge resolves the acknowledged incident, so that its trigger opens a new one and pages', async () => {
    const s = setup();
    await s.send('up 212%');
    await s.act('acknowledge');
    expect(fake.alerts.get(DEDUP_KEY)?.status).toBe('acknowledged');

    expect(await s.act('reopen')).toEqual({ kind: 'delivered' });
    expect(s.actions()).toEqual(['trigger', 'acknowledge', 'resolve', 'trigger']);
    expect(fake.pages(DEDUP_KEY)).toBe(2);
    expect(fake.alerts.get(DEDUP_KEY)).toMatchObject({ status: 'triggered', triggers: 1, summary: 'EC2 spend rose' });
    // The reopened anomaly's follow-ups go to that new incident, without paging again.
    await s.send('up 340%');
    expect(fake.pages(DEDUP_KEY)).toBe(2);
    expect(fake.alerts.get(DEDUP_KEY)?.triggers).toBe(2);
  });

  it('Reopen after Expected pages again too; an acknowledged anomaly’s follow-ups merge without paging', async () => {
    const s = setup();
    await s.send('up 212%');
    await s.act('acknowledge');
    await s.send('up 300%');
    expect(fake.pages(DEDUP_KEY)).toBe(1);
    expect(fake.alerts.get(DEDUP_KEY)).toMatchObject({ status: 'acknowledged', triggers: 2 });
    await s.act('expected');
    await s.act('reopen');
    expect(fake.pages(DEDUP_KEY)).toBe(2);
    expect(fake.alerts.get(DEDUP_KEY)?.status).toBe('triggered');
  });

  it('when a snooze ends, the next follow-up resolves the incident the snooze acknowledged and pages; the one after merges', async () => {
    const s = setup();
    await s.send('up 212%');
    await s.act('snooze');
    expect(fake.alerts.get(DEDUP_KEY)?.status).toBe('acknowledged');
    // While it holds, nothing of the anomaly is posted.
    expect(await s.send('up 300%')).toEqual({ kind: 'snoozed' });

    s.clock.advance(SNOOZE_SECONDS * 1000);
    expect(await s.send('up 340%')).toEqual({ kind: 'delivered' });
    expect(s.actions()).toEqual(['trigger', 'acknowledge', 'resolve', 'trigger']);
    expect(fake.pages(DEDUP_KEY)).toBe(2);
    expect(fake.alerts.get(DEDUP_KEY)?.status).toBe('triggered');

    s.clock.advance(60_000);
    expect(await s.send('up 410%')).toEqual({ kind: 'delivered' });
    expect(s.actions().at(-1)).toBe('trigger');
    expect(fake.pages(DEDUP_KEY)).toBe(2);
    expect(fake.alerts.get(DEDUP_KEY)?.triggers).toBe(2);
  });
});

describe('a PagerDuty follow-up retried from the queue keeps to what was decided', () => {
  it('one queued while the anomaly was open and retried after Expected sends nothing, and counts as delivered', async () => {
    const s = setup();
    await s.send('up 212%');
    fake.queue(KEY, { kind: 'throttled', retryAfterSeconds: 1 });
    expect(await s.send('up 340%')).toMatchObject({ kind: 'queued' });
    expect(s.retryQueue.jobs[0]?.job.anomaly).toEqual({ kind: 'follow_up', firstSeenAt: '2026-11-22T12:00:00Z', updates: 1 });
    await s.act('expected');

    expect(await s.retry()).toEqual({ batchItemFailures: [] });
    expect(s.actions()).toEqual(['trigger', 'resolve']);
    expect(fake.pages(DEDUP_KEY)).toBe(1);
    expect(s.ledger.anomalies.get(DEDUP_KEY)?.followUps).toBe(1);
  });

  it('the first follow-up after a snooze, throttled and retried, still resolves before its trigger and pages once', async () => {
    const s = setup();
    await s.send('up 212%');
    await s.act('snooze');
    s.clock.advance(SNOOZE_SECONDS * 1000 + 1_000);
    fake.setBehaviour(KEY, { kind: 'throttled' }, 'trigger');
    expect(await s.send('up 340%')).toMatchObject({ kind: 'queued' });
    expect(s.retryQueue.jobs[0]?.job.anomaly).toMatchObject({ afterSnooze: true });
    fake.setBehaviour(KEY, { kind: 'ok' }, 'trigger');

    expect(await s.retry()).toEqual({ batchItemFailures: [] });
    expect(fake.pages(DEDUP_KEY)).toBe(2);
    expect(fake.alerts.get(DEDUP_KEY)?.status).toBe('triggered');
    // Posted now: the next follow-up merges into the new incident.
    await s.send('up 410%');
    expect(fake.pages(DEDUP_KEY)).toBe(2);
  });

  it('a queued follow-up whose table cannot be read is sent as it was queued', async () => {
    const s = setup();
    await s.send('up 212%');
    fake.queue(KEY, { kind: 'throttled' });
    await s.send('up 340%');
    s.ledger.fail = new Error('ProvisionedThroughputExceededException');
    expect(await s.retry()).toEqual({ batchItemFailures: [] });
    expect(s.actions()).toEqual(['trigger', 'trigger']);
    expect(fake.pages(DEDUP_KEY)).toBe(1);
  });
});
