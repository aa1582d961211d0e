// Escalation (lib/escalation): an anomaly nobody picked up at a destination goes once to another.
// Decisions run in process through the ports, with an in-memory ledger, queues and chat services
// and a clock the tests move; test/integration/escalation.test.ts proves the wiring in the bundles.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatService, PostContext, PostOutcome } from '../../lib/chat/service.js';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';
import { deliverOnce, retryLedger } from '../../lib/dedup/once.js';
import { createDelivery, targetOf } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { type EscalationJob, escalationJob } from '../../lib/escalation/job.js';
import { parseEscalationJob } from '../../lib/escalation/job-schema.js';
import {
  afterClaim,
  DEFER_SECONDS,
  KEEP_AFTER_DUE_SECONDS,
  MARK_AGAIN_SECONDS,
  MAX_HOP_SECONDS,
  planEscalation,
  UNSHOWN_AGAIN_SECONDS,
} from '../../lib/escalation/plan.js';
import { processEscalation } from '../../lib/escalation/process.js';
import type { EscalationQueue } from '../../lib/escalation/queue.js';
import { escalationWatcher } from '../../lib/escalation/watch.js';
import { durationText, escalationLine } from '../../lib/format/escalation.js';
import type { GroupCloseJob } from '../../lib/group/job.js';
import { joinGroup } from '../../lib/group/join.js';
import { inMemoryGroupStore } from '../../lib/group/store.js';
import { anomalyRecordId } from '../../lib/message/anomaly.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { destinationType } from '../../lib/notify/kinds.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { createPacer } from '../../lib/retry/pacer.js';
import { processBatch, type QueueRecord } from '../../lib/retry/process-batch.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, manualClock, memoryDeadLetters, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { memoryLedger } from '../helpers/memory-ledger.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { UNPOSTED_ESCALATION_ANSWERS, unpostedEscalationClaims } from '../helpers/unposted-escalation-claims.js';

const HOOK_SECRET = 'https://hooks.slack.com/services/T0/B0/escalation-secret';
const FLOW_SECRET = 'https://prod-1.westus.logic.azure.com/workflows/oncall/invoke?sig=ONCALLSECRET';
const WAIT_MINUTES = 240;

const alert = (message = 'up 340%', title = 'EC2 spend rose') =>
  webhookMessageSchema.parse({
    metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
    payload: { title, message, account_id: '123456789012' },
  });

const configOf = (finops: Record<string, unknown> = {}, oncall: Record<string, unknown> = {}) =>
  relayConfigSchema.parse({
    auth: { method: 'none' },
    destinations: {
      default: { url: 'https://hooks.slack.com/services/T0/B0/default' },
      finops: { url: HOOK_SECRET, escalate: { afterMinutes: WAIT_MINUTES, to: 'oncall' }, ...finops },
      oncall: { type: 'teams', url: FLOW_SECRET, ...oncall },
      pager: { type: 'teams', url: 'https://prod-1.westus.logic.azure.com/workflows/pager/invoke?sig=PAGERSECRET' },
    },
  });

type Seen = { address: string; message: string; anomaly: unknown; escalation: PostContext['escalation'] };

/** A chat service that records what each post was about, the escalation's mark included, and answers from a script. */
function recordingService(): ChatService & { posts: Seen[]; answer(...next: PostOutcome[]): void } {
  const posts: Seen[] = [];
  const answers: PostOutcome[] = [];
  return {
    posts,
    answer: (...next) => answers.push(...next),
    minIntervalMs: 0,
    paceKey: (a) => a,
    format: (message, _destination, anomaly, _triage, context) => ({
      message: message.payload.message,
      anomaly,
      escalation: context?.escalation,
    }),
    async post(address, payload) {
      posts.push({ address, ...(payload as Omit<Seen, 'address'>) });
      return answers.shift() ?? { kind: 'delivered' };
    },
  };
}

/** The relay's first attempt and delivery-retry's escalation processing, sharing one ledger, one queue and one clock. */
function setup(options: { config?: ReturnType<typeof configOf>; retryQueue?: boolean; grouped?: boolean; windowSeconds?: number } = {}) {
  const clock = manualClock();
  const slack = recordingService();
  const teams = recordingService();
  const ledger = memoryLedger(clock.now, undefined, options.windowSeconds);
  const log = capturedLogger();
  const metrics = memoryMetrics();
  const retryQueue = memoryRetryQueue();
  const deadLetters = memoryDeadLetters();
  const waiting: Array<{ job: EscalationJob; delaySeconds: number }> = [];
  // How many of the next sends the queue refuses, as SQS does when the queue is gone or the role may not send.
  let refusals = 0;
  const queue: EscalationQueue = {
    async schedule(job, delaySeconds) {
      if (refusals > 0) {
        refusals--;
        throw Object.assign(new Error('The specified queue does not exist.'), { name: 'AWS.SimpleQueueService.NonExistentQueue' });
      }
      waiting.push({ job: structuredClone(job), delaySeconds });
    },
  };
  const delivery = createDelivery({
    services: chatServices({ slack, teams }),
    postTimeoutMs: 5_000,
    ...(options.retryQueue === false ? {} : { retryQueue }),
    deadLetters,
    logger: log.logger,
    metrics,
    now: clock.now,
    sleep: clock.sleep,
  });
  const held = escalationWatcher({
    ledger,
    queue,
    logger: log.logger,
    metrics,
    now: clock.now,
    windowSeconds: options.windowSeconds ?? 86_400,
    typeOf: destinationType,
  });
  // Where grouped alerts wait, and the closing jobs the relay scheduled for them.
  const groups = inMemoryGroupStore(clock.now);
  const closings: GroupCloseJob[] = [];
  const grouping = joinGroup(
    { store: groups, logger: log.logger, metrics, now: clock.now, schedule: async (job) => void closings.push(job) },
    delivery.first,
  );
  const first = deliverOnce({
    ledger,
    delivery: options.grouped ? { ...delivery, first: grouping } : delivery,
    logger: log.logger,
    metrics,
    now: clock.now,
    held,
  });
  const config = options.config ?? configOf();
  const store = memoryConfigStore({ config });
  const ports = { config: store, ledger, first, queue, held, logger: log.logger, metrics, now: clock.now };
  let records = 0;
  /** The relay's first attempt at a destination of the configuration (or of the one given, as the relay reads it now). */
  const send = (to: string, message = alert(), current = config) =>
    first({ deliveryId: `r${++records}`, target: targetOf(to, current.destinations[to]!, undefined), message }, budgetOf(10_000));
  /** Takes the oldest waiting job off the queue and processes it as delivery-retry does. */
  const next = () => {
    const taken = waiting.shift();
    if (!taken) throw new Error('no escalation job is waiting');
    return taken;
  };
  const process = (job: EscalationJob) => processEscalation(job, ports, budgetOf(60_000), `m${++records}`);
  const atDue = (job: EscalationJob) => clock.advance((job.firstSeen + WAIT_MINUTES * 60) * 1000 - clock.now());
  const anomaly = (destination = 'finops', message = alert()) => ledger.anomalies.get(anomalyRecordId(message, destination));
  return {
    clock,
    slack,
    teams,
    ledger,
    log,
    metrics,
    retryQueue,
    deadLetters,
    waiting,
    store,
    send,
    next,
    process,
    atDue,
    anomaly,
    ports,
    groups,
    closings,
    /** The queue refuses the next `count` sends. */
    refuse: (count = 1) => {
      refusals = count;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the escalation line every kind shows', () => {
  it('says the wait as people do: minutes, hours, days, largest first, none that is zero', () => {
    expect([1, 45, 60, 90, 240, 1440, 1530, 2880, 10_080].map(durationText)).toEqual([
      '1 min',
      '45 min',
      '1 h',
      '1 h 30 min',
      '4 h',
      '1 d',
      '1 d 1 h 30 min',
      '2 d',
      '7 d',
    ]);
    expect(escalationLine({ from: 'finops', afterMinutes: 240 })).toBe('Not acknowledged at finops within 4 h');
  });

  it("renders the destination's name inert and on one line, though it is the operator's text", () => {
    const line = escalationLine({ from: '<!channel> *fin*\nops www.evil.example \u202E', afterMinutes: 1 });
    expect(line).not.toMatch(/\*fin\*|\n|www\.evil|\u202E/);
    expect(line).toMatch(/^Not acknowledged at .*fin.* within 1 min$/);
  });
});

describe('setting an escalation waiting (the relay)', () => {
  it('an opening at a destination with escalate sets one job waiting on the retry queue: names, times and the message, no URL', async () => {
    const s = setup();
    expect(await s.send('finops')).toEqual({ kind: 'delivered' });
    expect(s.waiting).toHaveLength(1);
    const { job, delaySeconds } = s.waiting[0]!;
    const firstSeen = Math.floor(s.clock.now() / 1000);
    expect(job).toEqual({ version: 2, kind: 'escalation', from: 'finops', firstSeen, updates: 0, message: alert() });
    expect(s.anomaly()?.firstSeen).toBe(firstSeen);
    // SQS delays a message 15 minutes at the most: the wait is a series of hops.
    expect(delaySeconds).toBe(MAX_HOP_SECONDS);
    expect(parseEscalationJob(JSON.stringify(job))).toEqual(job);
    expect(JSON.stringify(job)).not.toContain('https://');
    expect(s.metrics.count('Escalations', { outcome: 'scheduled', destinationType: 'slack' })).toBe(1);
    // A window longer than the wait keeps the record anyway: no extra write.
    expect(s.ledger.calls).not.toContain('keep anomaly');
  });

  it('no job for a destination without escalate, a re-sent duplicate, or an anomaly someone triaged before its opening', async () => {
    const s = setup();
    await s.send('default');
    await s.send('oncall');
    expect(s.waiting).toHaveLength(0);
    await s.send('finops');
    await s.send('finops');
    expect(s.waiting).toHaveLength(1);
    s.waiting.length = 0;
    const message = alert('up 1%', 'S3 spend rose');
    s.ledger.anomalies.set(anomalyRecordId(message, 'finops'), { triage: { state: 'acknowledged', by: 'Dana', at: 1 } });
    expect(await s.send('finops', message)).toEqual({ kind: 'delivered' });
    expect(s.waiting).toHaveLength(0);
  });

  it('a quiet test delivery never escalates: it would page whoever is on call for a test', async () => {
    const s = setup();
    const quiet = targetOf('finops', configOf().destinations['finops']!, undefined, true);
    expect(await s.ports.first({ deliveryId: 'test', target: quiet, message: alert() }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    expect(s.waiting).toHaveLength(0);
  });

  it('an opening that nobody holds (refused, or not held without a queue) sets nothing waiting', async () => {
    const s = setup({ retryQueue: false });
    s.slack.answer({ kind: 'refused', reason: 'no_service' }, { kind: 'retryable', reason: 'http_500' });
    expect((await s.send('finops')).kind).toBe('refused');
    expect((await s.send('finops', alert('x', 'other'))).kind).toBe('unheld');
    expect(s.waiting).toHaveLength(0);
  });

  it('without a queue only the opening is counted failed: its follow-ups say it again in the log, and count nothing', async () => {
    const s = setup();
    const ports = { logger: s.log.logger, metrics: s.metrics, now: s.clock.now };
    const held = escalationWatcher({ ...ports, queue: undefined, ledger: s.ledger, windowSeconds: 86_400, typeOf: destinationType });
    const delivery = createDelivery({ ...ports, services: chatServices({ slack: s.slack }), postTimeoutMs: 5_000, sleep: s.clock.sleep });
    const first = deliverOnce({ ...ports, ledger: s.ledger, delivery, held });
    const target = targetOf('finops', configOf().destinations['finops']!, undefined);
    for (const [n, text] of ['up 10%', 'up 20%'].entries()) {
      expect(await first({ deliveryId: `q${n}`, target, message: alert(text) }, budgetOf(10_000))).toEqual({ kind: 'delivered' });
    }
    expect(s.slack.posts.map((p) => p.message)).toEqual(['up 10%', 'up 20%']);
    expect(s.metrics.count('Escalations', { outcome: 'failed', destinationType: 'slack' })).toBe(1);
    expect(s.log.records().filter((r) => String(r['message']).startsWith('escalation cannot wait here'))).toHaveLength(2);
  });

  it('an opening that waits on the retry queue or in a group starts the wait all the same', async () => {
    const s = setup();
    s.slack.answer({ kind: 'retryable', reason: 'http_503' });
    expect((await s.send('finops')).kind).toBe('queued');
    expect(s.waiting).toHaveLength(1);
  });

  it('keeps the record past the due time when the wait is longer than the dedup window', async () => {
    const clock = manualClock();
    const ledger = memoryLedger(clock.now);
    const plan = planEscalation(
      { afterMinutes: 2 * 1440, to: 'oncall' },
      { kind: 'opened', firstSeen: 1_000 },
      'delivered',
      1_000_000,
      86_400,
    );
    expect(plan).toMatchObject({
      firstSeen: 1_000,
      updates: 0,
      delaySeconds: MAX_HOP_SECONDS,
      keepUntil: 1_000 + 2 * 86_400 + KEEP_AFTER_DUE_SECONDS,
    });
    expect(
      planEscalation({ afterMinutes: 60, to: 'oncall' }, { kind: 'opened', firstSeen: 1_000 }, 'delivered', 1_000_000, 86_400),
    ).not.toHaveProperty('keepUntil');
    const log = capturedLogger();
    const watch = escalationWatcher({
      ledger,
      queue: { schedule: async () => undefined },
      logger: log.logger,
      now: clock.now,
      windowSeconds: 3_600,
      typeOf: destinationType,
    });
    const target = targetOf('finops', configOf().destinations['finops']!, undefined);
    const firstSeen = Math.floor(clock.now() / 1000);
    await watch({ deliveryId: 'r', target, message: alert() }, { kind: 'opened', firstSeen }, 'delivered', budgetOf(10_000));
    expect(ledger.calls).toContain('keep anomaly');
  });

  it('a wait that cannot be set is logged and told, and never fails the alert; one that cannot wait here at all is counted failed', async () => {
    const clock = manualClock();
    const log = capturedLogger();
    const metrics = memoryMetrics();
    const target = targetOf('finops', configOf().destinations['finops']!, undefined);
    const watch = (queue: EscalationQueue | undefined) =>
      escalationWatcher({ ledger: memoryLedger(clock.now), queue, logger: log.logger, metrics, now: clock.now, typeOf: destinationType })(
        { deliveryId: 'r', target, message: alert() },
        { kind: 'opened' },
        'delivered',
        budgetOf(10_000),
      );
    await expect(watch({ schedule: () => Promise.reject(new Error('AccessDenied')) })).resolves.toBe(false);
    // No queue is the stack's configuration, not a fault a re-send would get past.
    await expect(watch(undefined)).resolves.toBe(true);
    expect(metrics.count('Escalations', { outcome: 'failed' })).toBe(1);
    expect(log.records().map((r) => r['message'])).toEqual([
      'escalation could not be scheduled',
      'escalation cannot wait here: it needs the retry queue and the dedup table',
    ]);
  });

  it("an opening whose wait cannot be set is posted once and said undone; the platform's re-send sets it and posts nothing again", async () => {
    const s = setup();
    s.refuse();
    const firstSeen = Math.floor(s.clock.now() / 1000);
    expect(await s.send('finops')).toEqual({ kind: 'delivered', escalationUnscheduled: true });
    expect(s.slack.posts).toHaveLength(1);
    expect(s.waiting).toHaveLength(0);
    expect(s.metrics.count('Escalations', { outcome: 'unscheduled', destinationType: 'slack' })).toBe(1);

    // A re-send while the queue still refuses: still undone, still not posted again.
    s.clock.advance(30_000);
    s.refuse();
    expect(await s.send('finops')).toEqual({ kind: 'duplicate', state: 'delivered', escalationUnscheduled: true });
    s.clock.advance(30_000);
    expect(await s.send('finops')).toEqual({ kind: 'duplicate', state: 'delivered' });
    expect(s.slack.posts).toHaveLength(1);
    // The wait counts from the opening, not from the re-send.
    expect(s.waiting).toEqual([
      { job: { version: 2, kind: 'escalation', from: 'finops', firstSeen, updates: 0, message: alert() }, delaySeconds: 900 },
    ]);
    expect(s.metrics.count('Escalations', { outcome: 'unscheduled' })).toBe(2);
    expect(s.metrics.count('Escalations', { outcome: 'scheduled' })).toBe(1);
    // Set once: a later re-send is a plain duplicate.
    await s.send('finops');
    expect(s.waiting).toHaveLength(1);
    const { job } = s.next();
    s.atDue(job);
    await s.process(job);
    expect(s.teams.posts.map((p) => p.escalation)).toEqual([{ from: 'finops', afterMinutes: WAIT_MINUTES }]);
  });

  it('an opening held on the retry queue whose wait cannot be set is said undone too; its re-send neither posts nor queues it again', async () => {
    const s = setup();
    s.slack.answer({ kind: 'retryable', reason: 'http_503' });
    s.refuse();
    expect(await s.send('finops')).toMatchObject({ kind: 'queued', escalationUnscheduled: true });
    expect(await s.send('finops')).toEqual({ kind: 'duplicate', state: 'queued' });
    expect(s.retryQueue.jobs).toHaveLength(1);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.waiting).toHaveLength(1);
  });

  it('no re-send sets a wait for an opening someone triaged meanwhile, and a follow-up whose job cannot be sent leaves the one waiting', async () => {
    const s = setup();
    s.refuse();
    await s.send('finops', alert('up 10%'));
    const id = anomalyRecordId(alert(), 'finops');
    s.ledger.anomalies.set(id, { ...s.ledger.anomalies.get(id), triage: { state: 'acknowledged', by: 'Dana', at: 1 } });
    expect(await s.send('finops', alert('up 10%'))).toEqual({ kind: 'duplicate', state: 'delivered' });
    expect(s.waiting).toHaveLength(0);

    const t = setup();
    await t.send('finops', alert('up 10%'));
    t.refuse();
    expect(await t.send('finops', alert('up 20%'))).toEqual({ kind: 'delivered' });
    expect(t.waiting.map((w) => w.job.updates)).toEqual([0]);
    expect(t.metrics.count('Escalations', { outcome: 'unscheduled' })).toBe(0);
  });
});

describe('an escalation job on the retry queue (delivery-retry)', () => {
  it('goes back with the time left while it is not due: at most 900 s a hop, then exactly the remainder; nothing is posted', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    const due = job.firstSeen + WAIT_MINUTES * 60;
    s.clock.advance(900_000);
    expect(await s.process(job)).toBe('done');
    expect(s.next().delaySeconds).toBe(900);
    s.clock.advance((due - 37) * 1000 - s.clock.now() - 400);
    expect(await s.process(job)).toBe('done');
    // 37.4 s left: the hop rounds up, so the job never comes back early.
    expect(s.next().delaySeconds).toBe(38);
    expect(s.teams.posts).toHaveLength(0);
    expect(s.ledger.calls).not.toContain('claim escalation');
    expect(s.metrics.count('Escalations', { outcome: 'posted' })).toBe(0);
  });

  it('an untouched anomaly escalates once when due: to `to`, marked with where it waited and for how long', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const { job } = s.next();
    s.atDue(job);
    expect(await s.process(job)).toBe('done');
    expect(s.teams.posts).toHaveLength(1);
    expect(s.teams.posts[0]).toEqual({
      address: FLOW_SECRET,
      message: 'up 10%',
      anomaly: { kind: 'opening' },
      escalation: { from: 'finops', afterMinutes: WAIT_MINUTES },
    });
    expect(s.anomaly()).toMatchObject({ escalatedAt: Math.floor(s.clock.now() / 1000) });
    expect(s.anomaly()).not.toHaveProperty('escalationToken');
    // Opened at `to` as its own anomaly there.
    expect(s.anomaly('oncall')).toMatchObject({ firstSeen: Math.floor(s.clock.now() / 1000) });
    expect(s.metrics.count('Escalations', { outcome: 'posted', destinationType: 'slack' })).toBe(1);
    expect(s.log.records().find((r) => r['message'] === 'anomaly escalated')).toMatchObject({
      level: 'info',
      destination: 'finops',
      to: 'oncall',
      outcome: 'posted',
      waitedMinutes: WAIT_MINUTES,
    });
  });

  it('a job delivered twice escalates once', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    await s.process(job);
    expect(await s.process(structuredClone(job))).toBe('done');
    expect(s.teams.posts).toHaveLength(1);
    expect(s.waiting).toHaveLength(0);
    expect(s.metrics.count('Escalations', { outcome: 'dropped' })).toBe(1);
    // The anomaly's own mark stops it, before the dedup record at `to` would.
    expect(s.log.records().at(-1)).toMatchObject({ message: 'escalation not posted', reason: 'escalated_already' });
  });

  it('two copies at the same time: the one that finds the lease held goes back until it ends, then finds it escalated', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    const escalations = await s.ledger.escalations();
    const id = anomalyRecordId(alert(), 'finops');
    expect(await escalations.claimEscalation(id, { token: 'other', holdSeconds: 20, firstSeen: job.firstSeen, updates: 0 })).toEqual({
      kind: 'claimed',
    });
    await s.process(job);
    expect(s.teams.posts).toHaveLength(0);
    expect(s.next()).toEqual({ job, delaySeconds: 21 });
    await escalations.escalated(id, job.firstSeen);
    s.clock.advance(21_000);
    await s.process(job);
    expect(s.teams.posts).toHaveLength(0);
    expect(s.waiting).toHaveLength(0);
  });

  it.each([
    ['acknowledge', { state: 'acknowledged', by: 'Dana', at: 1 }],
    ['expected', { state: 'expected', by: 'Dana', at: 1 }],
    ['snooze', { state: 'snoozed', by: 'Dana', at: 1, until: 2 }],
    ['reopen', { state: 'open', by: 'Dana', at: 1 }],
  ] as const)('a triage action (%s) before it is due cancels it', async (_action, triage) => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    const id = anomalyRecordId(alert(), 'finops');
    s.ledger.anomalies.set(id, { ...s.ledger.anomalies.get(id), triage });
    s.atDue(job);
    await s.process(job);
    expect(s.teams.posts).toHaveLength(0);
    expect(s.waiting).toHaveLength(0);
    expect(s.metrics.count('Escalations', { outcome: 'cancelled' })).toBe(1);
  });

  it('the job of an opening that waited (grouped, queued) claims it only once it was shown; the in-memory ledger as the table', async () => {
    const ledger = inMemoryLedger(manualClock().now);
    expect(await unpostedEscalationClaims(ledger, anomalyRecordId(alert(), 'finops'))).toEqual(UNPOSTED_ESCALATION_ANSWERS);
  });

  it('an opening never shown by the time its record may expire is dropped, not asked after for ever', () => {
    expect(afterClaim({ kind: 'unshown' }, 0)).toEqual({ kind: 'again', delaySeconds: UNSHOWN_AGAIN_SECONDS });
    expect(afterClaim({ kind: 'unshown' }, KEEP_AFTER_DUE_SECONDS)).toEqual({ kind: 'drop', outcome: 'dropped', reason: 'never_shown' });
  });

  it("under npm start the triage page's own state cancels it too", async () => {
    const clock = manualClock();
    const triaged = new Set<string>();
    const ledger = inMemoryLedger(clock.now, (id) => (triaged.has(id) ? { state: 'acknowledged' } : undefined));
    const id = anomalyRecordId(alert(), 'finops');
    const start = await ledger.startAnomaly(id);
    const escalations = await ledger.escalations();
    const claim = { token: 't', holdSeconds: 5, firstSeen: start.kind === 'opened' ? (start.firstSeen ?? 0) : 0 };
    triaged.add(id);
    expect(await escalations.claimEscalation(id, claim)).toEqual({ kind: 'triaged' });
    triaged.clear();
    expect(await escalations.claimEscalation(id, claim)).toEqual({ kind: 'claimed' });
    expect(await escalations.claimEscalation(id, { ...claim, firstSeen: claim.firstSeen + 1 })).toEqual({ kind: 'gone' });
    await escalations.releaseEscalation(id, 'someone else');
    expect(await escalations.claimEscalation(id, { ...claim, token: 'u' })).toMatchObject({ kind: 'held' });
    await escalations.releaseEscalation(id, 't');
    expect(await escalations.claimEscalation(id, { ...claim, token: 'u' })).toEqual({ kind: 'claimed' });
    await escalations.escalated(id, claim.firstSeen + 1);
    expect(await escalations.claimEscalation(id, { ...claim, token: 'u' })).toEqual({ kind: 'claimed' });
    await escalations.keepAnomaly(id, claim.firstSeen, 0);
    expect(ledger.anomalies.get(id)?.firstSeen).toBe(claim.firstSeen);
  });

  it('a follow-up before it is due replaces the job: the latest content is escalated, the stale job defers once and then does nothing', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const stale = s.next().job;
    s.clock.advance(3_600_000);
    expect(await s.send('finops', alert('up 90%'))).toEqual({ kind: 'delivered' });
    const { job: latest, delaySeconds } = s.next();
    expect(latest).toMatchObject({ firstSeen: stale.firstSeen, updates: 1, message: alert('up 90%') });
    expect(delaySeconds).toBe(MAX_HOP_SECONDS);
    expect(s.metrics.count('Escalations', { outcome: 'scheduled' })).toBe(1);
    expect(s.log.records().filter((r) => /^escalation (re)?scheduled/.test(String(r['message'])))).toEqual([
      expect.objectContaining({ message: 'escalation scheduled', to: 'oncall', updates: 0, dueInSeconds: WAIT_MINUTES * 60 }),
      expect.objectContaining({
        message: 'escalation rescheduled with the latest content',
        to: 'oncall',
        updates: 1,
        dueInSeconds: WAIT_MINUTES * 60 - 3_600,
      }),
    ]);

    s.atDue(stale);
    await s.process(stale);
    expect(s.teams.posts).toHaveLength(0);
    const deferred = s.next();
    expect(deferred).toEqual({ job: { ...stale, deferred: true }, delaySeconds: DEFER_SECONDS });
    await s.process(latest);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 90%']);
    s.clock.advance(DEFER_SECONDS * 1000);
    await s.process(deferred.job);
    expect(s.teams.posts).toHaveLength(1);
    expect(s.waiting).toHaveLength(0);
    // After the escalation, follow-ups at finops stay there.
    await s.send('finops', alert('up 95%'));
    expect(s.waiting).toHaveLength(0);
    expect(s.teams.posts).toHaveLength(1);
  });

  it('a deferred job whose newer one was lost escalates with its own content', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const stale = s.next().job;
    await s.send('finops', alert('up 90%'));
    s.next();
    s.atDue(stale);
    await s.process(stale);
    await s.process(s.next().job);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 10%']);
  });

  /** Hands delivery-retry every waiting job as one round, a hop later; how many jobs each round held, until none waits. */
  const hopUntilDone = async (s: ReturnType<typeof setup>) => {
    const rounds: number[] = [];
    while (s.waiting.length > 0 && rounds.length < 100) {
      const round = s.waiting.splice(0);
      rounds.push(round.length);
      s.clock.advance(MAX_HOP_SECONDS * 1000);
      for (const { job } of round) await s.process(job);
    }
    return rounds;
  };

  it('follow-ups before it is due leave one job hopping: each one a later job replaced ends at its next hop', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    for (const text of ['up 20%', 'up 30%']) {
      s.clock.advance(600_000);
      await s.send('finops', alert(text));
    }
    const rounds = await hopUntilDone(s);
    // Three jobs for two hops (the latest one's is recorded at its first); from then on, only the latest one's.
    expect(rounds.slice(0, 2)).toEqual([3, 3]);
    expect(rounds.slice(2)).toEqual(rounds.slice(2).map(() => 1));
    expect(rounds.length).toBeGreaterThan(10);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 30%']);
    expect(s.metrics.count('Escalations', { outcome: 'dropped' })).toBe(2);
    expect(s.log.records().filter((r) => r['reason'] === 'replaced')).toHaveLength(2);
  });

  it('a later follow-up whose job never reached the queue replaces nothing: the job that waits escalates', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    s.clock.advance(600_000);
    await s.send('finops', alert('up 20%'));
    // Lost on its way to the queue: the anomaly counts the follow-up, but no job of it waits.
    s.waiting.pop();
    await hopUntilDone(s);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 10%']);
  });

  it('a table that cannot say whether a later job waits leaves the job hopping', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const { job } = s.next();
    s.clock.advance(MAX_HOP_SECONDS * 1000);
    s.ledger.fail = new Error('ProvisionedThroughputExceededException');
    expect(await s.process(job)).toBe('done');
    expect(s.next()).toEqual({ job, delaySeconds: MAX_HOP_SECONDS });
    expect(s.log.records().find((r) => r['level'] === 'warn')?.['message']).toMatch(/could not tell whether a later escalation job waits/);
  });

  it('each hop reads the table once and writes to it only to record a job with later content, once', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const first = s.next().job;
    const hop = async (job: EscalationJob) => {
      const before = s.ledger.calls.length;
      await s.process(job);
      return s.ledger.calls.slice(before);
    };
    s.clock.advance(MAX_HOP_SECONDS * 1000);
    expect(await hop(first)).toEqual(['waiting escalation']);
    await s.send('finops', alert('up 20%'));
    const latest = s.waiting.at(-1)!.job;
    s.waiting.splice(0);
    s.clock.advance(MAX_HOP_SECONDS * 1000);
    expect(await hop(latest)).toEqual(['waiting escalation', 'escalation waiting']);
    s.clock.advance(MAX_HOP_SECONDS * 1000);
    expect(await hop(latest)).toEqual(['waiting escalation']);
    expect(s.waiting.map((w) => w.delaySeconds)).toEqual([MAX_HOP_SECONDS, MAX_HOP_SECONDS]);
  });

  it('an item that lives exactly until an hour after the due time is not kept again, when the wait is set or at a hop', async () => {
    const s = setup({ windowSeconds: WAIT_MINUTES * 60 + KEEP_AFTER_DUE_SECONDS });
    await s.send('finops');
    const { job } = s.next();
    s.clock.advance(MAX_HOP_SECONDS * 1000);
    await s.process(job);
    expect(s.next().delaySeconds).toBe(MAX_HOP_SECONDS);
    expect(s.ledger.calls).not.toContain('keep anomaly');
    // One second shorter, and the wait keeps it.
    const t = setup({ windowSeconds: WAIT_MINUTES * 60 + KEEP_AFTER_DUE_SECONDS - 1 });
    await t.send('finops');
    expect(t.ledger.calls.filter((c) => c === 'keep anomaly')).toHaveLength(1);
  });

  it('a hop that keeps the item keeps it an hour past the due time: a follow-up a minute before it is due is still one', async () => {
    const s = setup({ windowSeconds: 3_600 });
    s.ledger.failing.add('keep anomaly');
    await s.send('finops', alert('up 10%'));
    const { job } = s.next();
    s.ledger.failing.clear();
    s.clock.advance(MAX_HOP_SECONDS * 1000);
    await s.process(job);
    expect(s.ledger.calls.filter((c) => c === 'keep anomaly')).toHaveLength(2);
    s.clock.advance((job.firstSeen + WAIT_MINUTES * 60 - 60) * 1000 - s.clock.now());
    expect(await s.send('finops', alert('up 90%'))).toEqual({ kind: 'delivered' });
    expect(s.slack.posts.map((p) => p.anomaly)).toEqual([{ kind: 'opening' }, expect.objectContaining({ kind: 'follow_up', updates: 1 })]);
  });

  it('no replacement for a follow-up only queued, one of a triaged anomaly, or one after the anomaly escalated', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const { job } = s.next();
    s.slack.answer({ kind: 'retryable', reason: 'http_503' });
    expect((await s.send('finops', alert('up 20%'))).kind).toBe('queued');
    expect(s.waiting).toHaveLength(0);
    const id = anomalyRecordId(alert(), 'finops');
    const before = s.ledger.anomalies.get(id);
    s.ledger.anomalies.set(id, { ...before, triage: { state: 'expected', by: 'Dana', at: 1 } });
    expect(await s.send('finops', alert('up 30%'))).toEqual({ kind: 'delivered' });
    expect(s.waiting).toHaveLength(0);
    s.ledger.anomalies.set(id, { ...s.ledger.anomalies.get(id), triage: undefined });
    s.atDue(job);
    await s.process(job);
    // The delivered follow-up is later content, which no job carries: this one defers once, then escalates.
    s.clock.advance(DEFER_SECONDS * 1000);
    await s.process(s.next().job);
    expect(s.teams.posts).toHaveLength(1);
    expect(await s.send('finops', alert('up 40%'))).toEqual({ kind: 'delivered' });
    expect(s.waiting).toHaveLength(0);
  });

  it('a follow-up after the due time, before the job runs, is what escalates: its job goes first, the older one then finds it done', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const { job } = s.next();
    // delivery-retry takes the due job a little late (a busy queue, a hop that rounded up).
    s.atDue(job);
    s.clock.advance(20_000);
    expect(await s.send('finops', alert('up 90%'))).toEqual({ kind: 'delivered' });
    const latest = s.next();
    expect(latest).toEqual({ job: expect.objectContaining({ updates: 1, message: alert('up 90%') }), delaySeconds: 0 });
    await s.process(job);
    const deferred = s.next().job;
    await s.process(latest.job);
    s.clock.advance(DEFER_SECONDS * 1000);
    await s.process(deferred);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 90%']);
    expect(s.waiting).toHaveLength(0);
  });

  it.each([
    ['waited on the retry queue', false],
    ['waited in a group', true],
  ] as const)(
    'a follow-up that %s replaces the job once delivery-retry delivers it: the escalation carries its content',
    async (_how, grouped) => {
      const s = setup({ config: configOf(grouped ? { group: { waitSeconds: 60 } } : {}), grouped });
      const opening = alert('up 10%');
      // A group's first alert waits in it too: the opening goes first, alone, so that only the follow-up is grouped.
      if (grouped)
        await s.ports.first(
          { deliveryId: 'o', target: targetOf('finops', configOf().destinations['finops']!, undefined), message: opening },
          budgetOf(10_000),
        );
      else await s.send('finops', opening);
      const first = s.next().job;
      s.clock.advance(600_000);
      if (!grouped) s.slack.answer({ kind: 'retryable', reason: 'http_503' });
      expect((await s.send('finops', alert('up 20%'))).kind).toBe(grouped ? 'grouped' : 'queued');
      expect(s.waiting).toHaveLength(0);

      s.clock.advance(60_000);
      const delivery = createDelivery({
        services: chatServices({ slack: s.slack }),
        postTimeoutMs: 5_000,
        logger: s.log.logger,
        now: s.clock.now,
        sleep: s.clock.sleep,
      });
      const body = grouped ? s.closings[0] : s.retryQueue.jobs[0]!.job;
      expect(await processBatch([record(JSON.stringify(body))], retryDeps(s, delivery))).toEqual({ batchItemFailures: [] });
      expect(s.slack.posts.at(-1)?.message).toBe('up 20%');
      expect(s.anomaly()).toMatchObject({ followUps: 1 });
      const latest = s.next().job;
      expect(latest).toMatchObject({ firstSeen: first.firstSeen, updates: 1, message: alert('up 20%') });

      // Both due together: the opening's job lets the latest go first, and then finds it escalated.
      s.atDue(first);
      await s.process(first);
      const deferred = s.next().job;
      await s.process(latest);
      s.clock.advance(DEFER_SECONDS * 1000);
      await s.process(deferred);
      expect(s.teams.posts.map((p) => p.message)).toEqual(['up 20%']);
    },
  );

  it('`to` cannot take it yet: it waits on the retry queue as a delivery job that keeps the mark, and delivery-retry posts it marked', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.teams.answer({ kind: 'retryable', reason: 'http_503' });
    await s.process(job);
    expect(s.retryQueue.jobs).toHaveLength(1);
    const queued = s.retryQueue.jobs[0]!.job;
    expect(queued).toMatchObject({ destination: 'oncall', escalation: { from: 'finops', afterMinutes: WAIT_MINUTES } });
    expect(parseDeliveryJob(JSON.stringify(queued))).toEqual(queued);
    expect(s.anomaly()).toHaveProperty('escalatedAt');
    expect(s.metrics.count('Escalations', { outcome: 'posted' })).toBe(1);

    const delivery = createDelivery({
      services: chatServices({ teams: s.teams }),
      postTimeoutMs: 5_000,
      logger: s.log.logger,
      now: s.clock.now,
      sleep: s.clock.sleep,
    });
    const result = await processBatch([record(JSON.stringify(queued))], {
      ...retryDeps(s, delivery),
    });
    expect(result.batchItemFailures).toEqual([]);
    expect(s.teams.posts.at(-1)?.escalation).toEqual({ from: 'finops', afterMinutes: WAIT_MINUTES });
  });

  it('an opening still on the retry queue when due waits for delivery-retry to post it, then escalates once; one parked never does', async () => {
    for (const last of ['delivered', 'parked'] as const) {
      const s = setup();
      s.slack.answer({ kind: 'retryable', reason: 'ratelimited', retryAfterMs: 1_000 });
      expect((await s.send('finops')).kind).toBe('queued');
      const { job } = s.next();
      s.atDue(job);
      // The chat still throttles it: nobody at finops has seen the anomaly.
      await s.process(job);
      expect(s.teams.posts).toEqual([]);
      expect(s.next()).toEqual({ job, delaySeconds: UNSHOWN_AGAIN_SECONDS });

      const delivery = createDelivery({
        services: chatServices({ slack: s.slack }),
        postTimeoutMs: 5_000,
        deadLetters: s.deadLetters,
        logger: s.log.logger,
        now: s.clock.now,
        sleep: s.clock.sleep,
      });
      if (last === 'parked') s.slack.answer({ kind: 'refused', reason: 'channel_not_found' });
      const queued = s.retryQueue.jobs[0]!.job;
      expect((await processBatch([record(JSON.stringify(queued))], retryDeps(s, delivery))).batchItemFailures).toEqual([]);
      expect(s.deadLetters.parked).toHaveLength(last === 'parked' ? 1 : 0);
      s.clock.advance(UNSHOWN_AGAIN_SECONDS * 1000);
      for (const copy of [job, job]) await s.process(copy);
      expect(s.teams.posts.map((post) => post.escalation)).toEqual(
        last === 'delivered' ? [{ from: 'finops', afterMinutes: WAIT_MINUTES }] : [],
      );
    }
  });

  it('`to` refuses it: parked for a human with the mark, counted failed, and not tried again', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.teams.answer({ kind: 'refused', reason: 'http_404' });
    await s.process(job);
    expect(s.deadLetters.parked).toHaveLength(1);
    expect(JSON.parse(s.deadLetters.parked[0]!.body)).toMatchObject({ escalation: { from: 'finops' } });
    expect(s.metrics.count('Escalations', { outcome: 'failed' })).toBe(1);
    // What docs/operations.md tells the operator to search for when the failed alarm fires.
    expect(s.log.records().find((r) => r['message'] === 'escalation not posted')).toMatchObject({
      level: 'error',
      to: 'oncall',
      outcome: 'failed',
      reason: 'http_404',
    });
    expect(s.waiting).toHaveLength(0);
    await s.process(job);
    expect(s.teams.posts).toHaveLength(1);
  });

  it('`to` neither takes nor holds it: the lease ends and the job comes back after the wait the service asked for', async () => {
    const s = setup({ retryQueue: false });
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.teams.answer({ kind: 'retryable', reason: 'http_429', retryAfterMs: 120_000 });
    await s.process(job);
    expect(s.next()).toEqual({ job, delaySeconds: 120 });
    expect(s.anomaly()).not.toHaveProperty('escalatedAt');
    expect(s.anomaly()).not.toHaveProperty('escalationToken');
    s.clock.advance(120_000);
    await s.process(job);
    expect(s.teams.posts.map((p) => p.escalation?.from)).toEqual(['finops', 'finops']);
    expect(s.anomaly()).toHaveProperty('escalatedAt');
    expect(s.metrics.count('Escalations', { outcome: 'posted' })).toBe(1);
  });

  it('a lease that cannot be ended is logged, and the job comes back after the wait all the same', async () => {
    const s = setup({ retryQueue: false });
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.teams.answer({ kind: 'retryable', reason: 'http_429', retryAfterMs: 120_000 });
    s.ledger.failing.add('release escalation');
    expect(await s.process(job)).toBe('done');
    expect(s.next()).toEqual({ job, delaySeconds: 120 });
    expect(s.log.records().filter((r) => r['level'] === 'warn')).toContainEqual(
      expect.objectContaining({ message: 'could not end the lease; it ends by itself', to: 'oncall' }),
    );
    expect(s.log.records().find((r) => r['message'] === 'escalation will be tried again')).toMatchObject({
      to: 'oncall',
      reason: 'http_429',
      delaySeconds: 120,
    });
    expect(s.metrics.count('Escalations', { outcome: 'failed' })).toBe(0);
  });

  it('another attempt delivering the same alert to `to` right now: the job comes back after it', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    const { deliveryRecordId } = await import('../../lib/dedup/fingerprint.js');
    await s.ledger.claim(deliveryRecordId(alert(), 'oncall'), { token: 'busy', holdSeconds: 9 });
    await s.process(job);
    expect(s.next()).toEqual({ job, delaySeconds: 9 });
    expect(s.teams.posts).toHaveLength(0);
  });

  it('snoozed where it would go: not posted there, counted cancelled, and not tried again', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.ledger.anomalies.set(anomalyRecordId(alert(), 'oncall'), {
      triage: { state: 'snoozed', until: Math.floor(s.clock.now() / 1000) + 600 },
    });
    await s.process(job);
    expect(s.teams.posts).toHaveLength(0);
    expect(s.metrics.count('Escalations', { outcome: 'cancelled' })).toBe(1);
    expect(s.anomaly()).toHaveProperty('escalatedAt');
  });

  it('`to` has the alert already (the platform sent it there too): nothing is posted again, and no other job of the opening tries', async () => {
    const s = setup();
    await s.send('finops');
    await s.send('oncall');
    expect(s.teams.posts).toHaveLength(1);
    const { job } = s.next();
    s.atDue(job);
    await s.process(job);
    expect(s.teams.posts).toHaveLength(1);
    expect(s.log.records().find((r) => r['message'] === 'escalation not posted')).toMatchObject({
      outcome: 'dropped',
      reason: 'already_there',
    });
    expect(s.metrics.count('Escalations', { outcome: 'dropped' })).toBe(1);
    expect(s.anomaly()).toHaveProperty('escalatedAt');
    await s.process({ ...job, deferred: true });
    expect(s.teams.posts).toHaveLength(1);
    expect(s.log.records().at(-1)).toMatchObject({ message: 'escalation not posted', reason: 'escalated_already' });
  });

  it('`escalated()` fails: the job keeps its lease and comes back at once to write the mark, so the job it replaced never posts again', async () => {
    const s = setup();
    await s.send('finops', alert('up 10%'));
    const stale = s.next().job;
    s.clock.advance(600_000);
    await s.send('finops', alert('up 90%'));
    const latest = s.next().job;
    s.atDue(stale);
    await s.process(stale);
    const deferred = s.next();
    s.ledger.failing.add('escalated');
    await s.process(latest);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 90%']);
    expect(s.metrics.count('Escalations', { outcome: 'posted' })).toBe(1);
    const marking = s.next();
    expect(marking).toEqual({ job: { ...latest, settled: true }, delaySeconds: MARK_AGAIN_SECONDS });
    expect(s.log.records().filter((r) => r['level'] === 'warn')).toContainEqual(
      expect.objectContaining({ message: 'could not mark the anomaly escalated; the job comes back to mark it', to: 'oncall' }),
    );
    expect(parseEscalationJob(JSON.stringify(marking.job))).toEqual(marking.job);
    // Still failing when it comes back: it comes back again, and posts nothing.
    s.clock.advance(MARK_AGAIN_SECONDS * 1000);
    await s.process(marking.job);
    expect(s.next()).toEqual(marking);
    s.ledger.failing.clear();
    s.clock.advance(MARK_AGAIN_SECONDS * 1000);
    await s.process(marking.job);
    expect(s.anomaly()).toHaveProperty('escalatedAt');
    // The job with the older content comes back after any lease would have ended: the mark stops it.
    s.clock.advance(3_600_000);
    await s.process(deferred.job);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 90%']);
    expect(s.waiting).toHaveLength(0);
    expect(s.metrics.count('Escalations', { outcome: 'posted' })).toBe(1);
  });

  it('a longer wait than its item was kept for keeps the item until the new due time: a later alert is its follow-up, and it escalates', async () => {
    // A dedup window of two hours, and a wait of 30 minutes that the operator raises to four hours after the opening.
    const s = setup({ windowSeconds: 7_200, config: configOf({ escalate: { afterMinutes: 30, to: 'oncall' } }) });
    await s.send('finops', alert('up 10%'));
    const { job } = s.next();
    const raised = configOf();
    s.store.set({ config: raised });
    s.clock.advance(900_000);
    await s.process(job);
    // Three hours in: past the window, before the new due time.
    s.clock.advance(3 * 3_600_000 - 900_000);
    expect(await s.send('finops', alert('up 90%'), raised)).toEqual({ kind: 'delivered' });
    expect(s.slack.posts.map((p) => p.anomaly)).toEqual([{ kind: 'opening' }, expect.objectContaining({ kind: 'follow_up', updates: 1 })]);
    const latest = s.waiting.at(-1)!.job;
    expect(latest).toMatchObject({ firstSeen: job.firstSeen, updates: 1 });
    s.atDue(latest);
    await s.process(latest);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 90%']);
  });

  it('`keepAnomaly` fails when the wait is set: the first hop keeps the item instead', async () => {
    const s = setup({ windowSeconds: 3_600 });
    s.ledger.failing.add('keep anomaly');
    await s.send('finops', alert('up 10%'));
    expect(s.log.records().find((r) => r['level'] === 'warn')).toMatchObject({
      message: 'the anomaly may expire before its escalation is due',
    });
    const { job } = s.next();
    s.ledger.failing.clear();
    s.clock.advance(900_000);
    await s.process(job);
    s.clock.advance(2 * 3_600_000);
    expect((await s.send('finops', alert('up 90%'))).kind).toBe('delivered');
    const latest = s.waiting.at(-1)!.job;
    expect(latest).toMatchObject({ firstSeen: job.firstSeen, updates: 1 });
    s.atDue(latest);
    await s.process(latest);
    expect(s.teams.posts.map((p) => p.message)).toEqual(['up 90%']);
  });

  it('a job that fails in delivery-retry (the table cannot be used) is counted failed and handed back by the queue', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.ledger.failing.add('claim escalation');
    // The services the escalation posts through: delivery-retry keeps their pace.
    const delivery = createDelivery({
      services: chatServices({ teams: s.teams }),
      deadLetters: s.deadLetters,
      postTimeoutMs: 5_000,
      logger: s.log.logger,
      now: s.clock.now,
      sleep: s.clock.sleep,
    });
    const failing = record(JSON.stringify(job));
    expect(await processBatch([failing], retryDeps(s, delivery))).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(s.metrics.count('Escalations', { outcome: 'failed', destinationType: 'slack' })).toBe(1);
    expect(s.teams.posts).toHaveLength(0);
    s.ledger.failing.clear();
    expect(await processBatch([failing], retryDeps(s, delivery))).toEqual({ batchItemFailures: [] });
    expect(s.teams.posts).toHaveLength(1);
  });

  it('reads the configuration when due: escalate removed drops the job, a changed wait or `to` applies', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.store.set({ config: configOf({ escalate: { afterMinutes: WAIT_MINUTES + 60, to: 'oncall' } }) });
    await s.process(job);
    expect(s.next().delaySeconds).toBe(900);
    s.store.set({ config: configOf({ escalate: { afterMinutes: 30, to: 'pager' } }) });
    await s.process(job);
    expect(s.teams.posts.map((p) => p.address)).toEqual([expect.stringContaining('/workflows/pager/')]);
    expect(s.teams.posts[0]?.escalation).toEqual({ from: 'finops', afterMinutes: 30 });

    const t = setup();
    await t.send('finops');
    const second = t.next().job;
    t.atDue(second);
    t.store.set({ config: configOf({ escalate: undefined }) });
    await t.process(second);
    t.store.set({
      config: relayConfigSchema.parse({ auth: { method: 'none' }, destinations: { default: { url: HOOK_SECRET } } }),
    });
    await t.process(second);
    expect(t.teams.posts).toHaveLength(0);
    expect(t.waiting).toHaveLength(0);
    expect(t.metrics.count('Escalations', { outcome: 'dropped' })).toBe(2);
  });

  it('an opening forgotten or replaced by a later one drops the job', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.ledger.anomalies.delete(anomalyRecordId(alert(), 'finops'));
    await s.process(job);
    expect(s.teams.posts).toHaveLength(0);
    expect(s.log.records().find((r) => r['message'] === 'escalation not posted')).toMatchObject({ reason: 'opening_gone' });
  });

  it('escalations chain: the escalated opening at a destination that escalates sets its own job waiting', async () => {
    const s = setup({ config: configOf({}, { escalate: { afterMinutes: 30, to: 'pager' } }) });
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    await s.process(job);
    const chained = s.next();
    expect(chained.job).toMatchObject({ from: 'oncall', updates: 0, firstSeen: Math.floor(s.clock.now() / 1000) });
    s.clock.advance(30 * 60_000);
    await s.process(chained.job);
    expect(s.teams.posts.map((p) => p.escalation)).toEqual([
      { from: 'finops', afterMinutes: WAIT_MINUTES },
      { from: 'oncall', afterMinutes: 30 },
    ]);
  });

  it("a chained escalation's own wait that cannot be set: posted once, and the job comes back to set it without posting again", async () => {
    const s = setup({ config: configOf({}, { escalate: { afterMinutes: 30, to: 'pager' } }) });
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    s.refuse();
    await s.process(job);
    expect(s.teams.posts).toHaveLength(1);
    expect(s.metrics.count('Escalations', { outcome: 'unscheduled', destinationType: 'teams' })).toBe(1);
    expect(s.metrics.count('Escalations', { outcome: 'posted' })).toBe(1);
    expect(s.log.records().find((r) => r['message'] === 'anomaly escalated')).toMatchObject({
      to: 'oncall',
      outcome: 'posted',
      waitedMinutes: WAIT_MINUTES,
    });
    const back = s.next();
    expect(back).toEqual({ job, delaySeconds: 30 });
    s.clock.advance(30_000);
    await s.process(back.job);
    expect(s.teams.posts).toHaveLength(1);
    const chained = s.next();
    expect(chained.job).toMatchObject({ from: 'oncall', updates: 0 });
    expect(s.anomaly()).toHaveProperty('escalatedAt');
    s.clock.advance(30 * 60_000);
    await s.process(chained.job);
    expect(s.teams.posts.map((p) => p.escalation?.from)).toEqual(['finops', 'oncall']);
  });

  it('a configuration that cannot be read leaves the record on the queue', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.store.set(new Error('unreadable'));
    const delivery = createDelivery({
      services: chatServices({}),
      postTimeoutMs: 5_000,
      logger: s.log.logger,
      now: s.clock.now,
      sleep: s.clock.sleep,
    });
    const failed = record(JSON.stringify(job));
    expect(await processBatch([failed], retryDeps(s, delivery))).toEqual({ batchItemFailures: [{ itemIdentifier: failed.messageId }] });
    expect(await s.process(job)).toBe('retry_later');
    expect(s.metrics.count('ConfigurationUnavailable', {})).toBe(2);
    expect(s.metrics.count('Escalations', { outcome: 'failed' })).toBe(0);
  });

  it('through delivery-retry: a due job is done and escalated, and one that does not fit the invocation is left for the next', async () => {
    const s = setup();
    await s.send('finops');
    const { job } = s.next();
    s.atDue(job);
    // The services the escalation posts through: delivery-retry keeps their pace.
    const delivery = createDelivery({
      services: chatServices({ teams: s.teams }),
      deadLetters: s.deadLetters,
      postTimeoutMs: 5_000,
      logger: s.log.logger,
      now: s.clock.now,
      sleep: s.clock.sleep,
    });
    const visibility: number[] = [];
    const short = {
      ...retryDeps(s, delivery),
      budget: budgetOf(3_000),
      messages: { changeVisibility: async (_r: string, n: number) => void visibility.push(n), send: async () => undefined },
    };
    const late = record(JSON.stringify(job));
    expect(await processBatch([late], short)).toEqual({ batchItemFailures: [{ itemIdentifier: late.messageId }] });
    expect(visibility).toEqual([1]);
    expect(await processBatch([record(JSON.stringify(job))], retryDeps(s, delivery))).toEqual({ batchItemFailures: [] });
    expect(s.teams.posts).toHaveLength(1);
    // Without the table delivery-retry cannot escalate: such a job is parked, not lost.
    const { escalations: _none, ...withoutTable } = retryDeps(s, delivery);
    await processBatch([record(JSON.stringify(job))], withoutTable);
    expect(s.deadLetters.parked.at(-1)).toMatchObject({ reason: 'malformed_message' });
  });

  it('the job is strict: anything a queue sender adds, or a URL in place of a name, is not an escalation job', () => {
    const job = escalationJob(
      {
        deliveryId: 'r',
        target: targetOf('finops', configOf().destinations['finops']!, undefined),
        message: alert(),
        origin: 'https://api.example.com',
      },
      1,
      0,
    );
    expect(parseEscalationJob(JSON.stringify(job))).toEqual(job);
    // The body as sent rides along for a bus at the end of the escalation, exactly as it came.
    const received = { metadata: { object_type: 'anomaly_alert', rule_id: 'r-17' }, payload: { account_id: 123456789012, service: null } };
    const withBody = { ...job, message: { ...job.message, received } };
    expect(parseEscalationJob(JSON.stringify(withBody))).toEqual(withBody);
    expect(parseEscalationJob(JSON.stringify({ ...job, url: HOOK_SECRET }))).toBeUndefined();
    expect(parseEscalationJob(JSON.stringify({ ...job, to: 'oncall' }))).toBeUndefined();
    expect(parseEscalationJob(JSON.stringify({ ...job, kind: 'group_close' }))).toBeUndefined();
    expect(parseEscalationJob('{')).toBeUndefined();
    expect(
      parseDeliveryJob(JSON.stringify({ ...newJob('d', 'oncall', alert(), 'x', 0), escalation: { from: 'finops', afterMinutes: 0 } })),
    ).toBeUndefined();
  });
});

/**
 * The relay as `npm start` wires it, with the configuration in a file; `send` posts a body as a
 * request would carry it, within a generous budget.
 */
function localRelay(destinations: Record<string, unknown>, options: Parameters<typeof createRelayFromEnvironment>[1]) {
  const dir = mkdtempSync(join(tmpdir(), 'escalation-'));
  writeFileSync(join(dir, 'relay.json'), JSON.stringify({ auth: { method: 'none' }, destinations }));
  const relay = createRelayFromEnvironment({ RELAY_CONFIG_SECRET_ID: `file:${join(dir, 'relay.json')}` }, options);
  const send = (body: unknown, requestId = 'a') =>
    relay(
      { requestId, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), isBase64Encoded: false },
      budgetOf(10_000),
    );
  return { send };
}

describe('escalations under npm start', () => {
  it('an in-process timer escalates an untouched anomaly after the wait, once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const slack = recordingService();
    const teams = recordingService();
    const { send } = localRelay(
      {
        default: { url: 'http://127.0.0.1:9/finops', escalate: { afterMinutes: 1, to: 'oncall' } },
        oncall: { type: 'teams', url: 'http://127.0.0.1:9/oncall' },
      },
      {
        logger: capturedLogger().logger,
        metrics: memoryMetrics(),
        services: chatServices({ slack, teams }),
        ledger: inMemoryLedger(),
        localEscalations: true,
      },
    );
    const answer = await send(alert());
    expect(answer.statusCode).toBe(200);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(teams.posts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(teams.posts).toHaveLength(1);
    expect(teams.posts[0]?.escalation).toEqual({ from: 'default', afterMinutes: 1 });
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(teams.posts).toHaveLength(1);
  });

  it('an escalation to a bus carries the body as the platform sent it, though the anomaly waited at a chat', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const slack = recordingService();
    const onBus: unknown[] = [];
    const bus: ChatService = {
      minIntervalMs: 0,
      paceKey: (a) => a,
      format: (message) => message.received,
      async post(_address, payload) {
        onBus.push(payload);
        return { kind: 'delivered' };
      },
    };
    const { send } = localRelay(
      {
        default: { url: 'http://127.0.0.1:9/finops', escalate: { afterMinutes: 1, to: 'bus' } },
        bus: { type: 'eventbridge', eventBus: 'default' },
      },
      {
        logger: capturedLogger().logger,
        metrics: memoryMetrics(),
        services: chatServices({ slack, eventbridge: bus }),
        ledger: inMemoryLedger(),
        localEscalations: true,
      },
    );
    // A member the relay does not know, a numeric account id and a null: what a rule on the bus may match.
    const asSent = {
      metadata: { object_type: 'anomaly_alert', rule_id: 'r-17' },
      payload: { title: 'EC2 spend rose', message: 'up 340%', account_id: 123456789012, service: null },
    };
    const answer = await send(asSent);
    expect(answer.statusCode).toBe(200);
    expect(slack.posts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(61_000);
    expect(onBus).toEqual([asSent]);
  });

  it('a follow-up that waited in a local group carries its content to the escalation', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const slack = recordingService();
    const teams = recordingService();
    const { send } = localRelay(
      {
        default: { url: 'http://127.0.0.1:9/finops', group: { waitSeconds: 30 }, escalate: { afterMinutes: 2, to: 'oncall' } },
        oncall: { type: 'teams', url: 'http://127.0.0.1:9/oncall' },
      },
      {
        logger: capturedLogger().logger,
        metrics: memoryMetrics(),
        services: chatServices({ slack, teams }),
        ledger: inMemoryLedger(),
        localGroups: true,
        localEscalations: true,
      },
    );
    const post = (text: string) => send(alert(text), text);
    // A closing loads its kind's digest code first: real time, which the fake clock does not move.
    const closed = (posts: number) => vi.waitFor(() => expect(slack.posts).toHaveLength(posts));
    expect((await post('up 10%')).statusCode).toBe(202);
    await vi.advanceTimersByTimeAsync(31_000);
    await closed(1);
    expect((await post('up 20%')).statusCode).toBe(202);
    await vi.advanceTimersByTimeAsync(31_000);
    await closed(2);
    expect(slack.posts.map((p) => p.message)).toEqual(['up 10%', 'up 20%']);
    await vi.advanceTimersByTimeAsync(300_000);
    expect(teams.posts.map((p) => p.message)).toEqual(['up 20%']);
  });

  it('without a queue, a table or npm start the relay says the escalation cannot wait, and delivers the alert', async () => {
    const slack = recordingService();
    const log = capturedLogger();
    const { send } = localRelay(
      {
        default: { url: 'http://127.0.0.1:9/x', escalate: { afterMinutes: 1, to: 'oncall' } },
        oncall: { url: 'http://127.0.0.1:9/y' },
      },
      { logger: log.logger, metrics: memoryMetrics(), services: chatServices({ slack }), ledger: inMemoryLedger() },
    );
    const answer = await send(alert());
    expect(answer.statusCode).toBe(200);
    expect(slack.posts).toHaveLength(1);
    expect(log.records().some((r) => String(r['message']).startsWith('escalation cannot wait here'))).toBe(true);
  });
});

let recordCount = 0;
function record(body: string): QueueRecord {
  recordCount++;
  return { messageId: `q${recordCount}`, receiptHandle: `rh${recordCount}`, body, attributes: { ApproximateReceiveCount: '1' } };
}

/** delivery-retry's dependencies around the test's ledger, queue and clock. */
function retryDeps(s: ReturnType<typeof setup>, delivery: ReturnType<typeof createDelivery>) {
  return {
    config: s.store,
    delivery,
    messages: { changeVisibility: async () => undefined, send: async () => undefined },
    pacer: createPacer(s.clock.now, s.clock.sleep),
    maxAttempts: 5,
    postTimeoutMs: 1_000,
    logger: s.log.logger,
    metrics: s.metrics,
    budget: budgetOf(60_000),
    now: s.clock.now,
    ledger: retryLedger({ ledger: s.ledger, logger: s.log.logger, metrics: s.metrics }),
    groups: s.groups,
    sleep: s.clock.sleep,
    escalations: { ledger: s.ports.ledger, first: s.ports.first, queue: s.ports.queue, held: s.ports.held },
  };
}
