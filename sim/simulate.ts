import { createHash, createHmac } from 'node:crypto';
import { globSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DYNAMODB, SECRETS_MANAGER } from '../lib/aws/json-client.js';
import { EVENTBRIDGE } from '../lib/notify/eventbridge/lazy-eventbridge-post.js';
import { declaredTableShape } from './aws/declared-table.js';
import { memoryTable } from './aws/dynamodb.js';
import { memorySecrets } from './aws/secrets.js';
import { memorySqs } from './aws/sqs.js';
import { installClock } from './clock.js';
import { readDeployment } from './deployment.js';
import { deploy, InvocationTimedOutError, type Output } from './functions.js';
import { checkInvariants, eventsOf, type History, isEscalationText, type Violation } from './invariants.js';
import { type Random, seeded } from './random.js';
import { type Alert, DAY_MS, drawWorkload, START, type Workload } from './workload.js';
import { type FaultRates, NO_FAULTS, spellFaults } from './world/faults.js';
import { simPlatform } from './world/platform.js';
import { MARKER, type Shown, simServices } from './world/services.js';

/**
 * One seed of the simulation: the workload it draws, run through the five functions as deployed,
 * against the stand-ins, on simulated time; then the invariants. The trace is every event that a
 * user or an operator would see, in order, hashed: the same seed gives the same trace.
 */

export interface SeedResult {
  seed: number;
  trace: string;
  counts: {
    alerts: number;
    faults: number;
    triage: number;
    escalations: number;
    groupClosings: number;
    summaries: number;
    directoryRuns: number;
  };
  violations: Violation[];
  line: string;
  /** The last events of a violation's anomaly, for its report. */
  eventsOf(anomaly: number): Array<{ at: number; text: string }>;
  /** Everything the run recorded, for a closer look at a seed. */
  history: History;
  /** The events the trace hashes, in order. */
  traceLines: string[];
}

export interface SeedOptions {
  days: number;
  /** Faults on (the default), or a quiet world. */
  faults?: boolean;
}

/** The API's domain: links in messages lead to https://<this>/triage/... */
const DOMAIN = 'sim1234567.execute-api.us-east-1.amazonaws.com';
/** After the last alert the world runs on this long without faults, so that queues drain and escalations fall due. */
const DRAIN_MS = 2 * DAY_MS;

const BASE_RATES: FaultRates = { throttle: 0.01, unavailable: 0.01, hang: 0.003, late: 0.003, lost: 0.003 };

/**
 * Every module our code loads with import(), loaded before the clock starts: a first import reads
 * files (real I/O, real time), which would make the order of events depend on the disk. Once
 * loaded, an import() settles in promise jobs alone, the same way every run.
 */
let preloaded: Promise<unknown> | undefined;
function preload(): Promise<unknown> {
  const lib = fileURLToPath(new URL('../lib/', import.meta.url));
  const lazy = globSync('**/lazy-*.ts', { cwd: lib }).sort();
  preloaded ??= Promise.all([...lazy.map((file) => import(pathToFileURL(join(lib, file)).href)), import('@aws-sdk/client-sqs')]);
  return preloaded;
}

export async function runSeed(seed: number, options: SeedOptions): Promise<SeedResult> {
  await preload();
  const random = seeded(seed);
  const workload = drawWorkload(random.fork('workload'), options.days);
  const faultsOn = options.faults !== false;
  const clock = installClock(START - 3_600_000, random.fork('math').next);
  try {
    return await simulate(seed, workload, random, faultsOn, clock);
  } finally {
    clock.uninstall();
  }
}

async function simulate(
  seed: number,
  workload: Workload,
  random: Random,
  faultsOn: boolean,
  clock: ReturnType<typeof installClock>,
): Promise<SeedResult> {
  const now = () => Date.now();
  const trace = createHash('sha256');
  const traceLines: string[] = [];
  const record = (line: string) => {
    const entry = `${now()} ${line}`;
    traceLines.push(entry);
    trace.update(`${entry}\n`);
  };
  (globalThis as { __simTrace?: (line: string) => void }).__simTrace = record;
  const drainFrom = workload.end;

  // --- the world ----------------------------------------------------------------------------
  const faultRandom = random.fork('faults');
  const rates = (key: string): FaultRates => {
    if (!faultsOn || now() >= drainFrom) return NO_FAULTS;
    const outage = workload.outages.find((o) => o.faultKey === key && now() >= o.from && now() < o.until);
    return outage?.rates ?? BASE_RATES;
  };
  const faults = spellFaults(faultRandom.next, rates);
  const worldRandom = random.fork('world');
  const deployment = readDeployment({
    OwnerRouting: 'Enabled',
    PlatformUsername: 'sim-user',
    PlatformPassword: 'unused',
    EventBusArns: '',
  });
  const table = memoryTable({
    tableName: deployment.tableName,
    now,
    ...declaredTableShape(),
    indexLagMs: () => worldRandom.int(0, 1_500),
    ttlDelayMs: () => worldRandom.int(0, 6 * 3_600_000),
  });
  const sqs = memorySqs({ now, random: worldRandom.next, duplicateRate: faultsOn ? 0.01 : 0, onChange: () => poller.wake() });
  sqs.create(deployment.queue.deadLetterUrl, { visibilityTimeoutSeconds: 30 });
  sqs.create(deployment.queue.url, {
    visibilityTimeoutSeconds: deployment.queue.visibilityTimeoutSeconds,
    maxReceiveCount: deployment.queue.maxReceiveCount,
    deadLetterUrl: deployment.queue.deadLetterUrl,
  });
  const secrets = memorySecrets({ now });
  secrets.put(deployment.secrets.config, JSON.stringify(workload.config));
  const triageKey = `sim-triage-key-${seed}-`.padEnd(64, 'k');
  secrets.put(deployment.secrets.triageKey, triageKey);
  const services = simServices({
    now,
    faults,
    latencyMs: () => worldRandom.int(40, 400),
    retryAfterSeconds: () => worldRandom.int(1, 30),
    slackBotToken: workload.slackApp.botToken,
    webhookSecret: workload.webhookSecret,
  });
  const platform = simPlatform({ now, faults, latencyMs: () => worldRandom.int(50, 600), payers: workload.payers });
  secrets.put(deployment.secrets.platform, JSON.stringify({ username: platform.username, password: platform.password }));
  const output: Output[] = [];
  const functions = deploy(deployment, {
    aws: {
      json: (service) =>
        service === DYNAMODB
          ? table.call
          : service === SECRETS_MANAGER
            ? secrets.call
            : service.signingName === EVENTBRIDGE.signingName
              ? services.events
              : table.call,
      sqs: sqs.lazySqs,
    },
    transport: services.fetch,
    platformFetch: platform.fetch,
    now,
    random: random.fork('containers'),
    output,
  });

  const history: History = {
    seed,
    workload,
    answers: [],
    shown: services.shown,
    incidents: services.incidents,
    pages: services.pages,
    clicks: [],
    directoryRuns: [],
    summaryRuns: [],
    output,
    timeouts: [],
    deadLetters: () => sqs.messages(deployment.queue.deadLetterUrl),
    sentMessages: sqs.log,
    faultLog: services.faultLog,
    retryQueue: () => sqs.messages(deployment.queue.url),
    drainFrom,
    end: 0,
    configChanges: [],
    secrets: [
      workload.basic.password,
      workload.slackApp.botToken,
      workload.slackApp.signingSecret,
      triageKey,
      platform.password,
      workload.webhookSecret,
    ],
    webhookRequests: services.webhookRequests,
  };
  const timedOut = (error: unknown) => {
    if (error instanceof InvocationTimedOutError) {
      history.timeouts.push({ at: now(), fn: error.fn });
      return true;
    }
    return false;
  };

  // --- the platform's deliveries, and its re-sends after a 503 ---------------------------------
  const senderRandom = random.fork('sender');
  const authorization = `Basic ${Buffer.from(`${workload.basic.username}:${workload.basic.password}`).toString('base64')}`;
  const deliver = async (alert: Alert, attempt: number): Promise<void> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization };
    if (alert.quiet) headers['x-cost-alert-relay-test'] = 'quiet';
    let answer: Awaited<ReturnType<typeof functions.relay>>;
    try {
      answer = await functions.relay({ headers, body: alert.body, domain: DOMAIN });
    } catch (error) {
      if (!timedOut(error)) throw error;
      answer = { statusCode: 504, headers: {}, body: '' };
    }
    const at = now();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      // The invariants say what an answer that is no JSON means.
    }
    history.answers.push({ alert, at, status: answer.statusCode, body, raw: answer.body, attempt });
    record(`answer simA${alert.no} ${answer.statusCode}`);
    // The platform tries again after a 503 (or a gateway timeout), a few times, as a careful sender would.
    if ((answer.statusCode === 503 || answer.statusCode === 504) && attempt < 6 && senderRandom.chance(0.9)) {
      const wait = Math.max(1, Number(answer.headers['retry-after'] ?? '0') || 0) * 1000 + senderRandom.int(0, 30_000);
      setTimeout(() => void deliver(alert, attempt + 1), wait);
    }
  };
  for (const alert of workload.alerts) setTimeout(() => void deliver(alert, 1), alert.at - now());

  // --- Lambda's SQS event source mapping -------------------------------------------------------
  let running = 0;
  let wakeTimer: NodeJS.Timeout | undefined;
  const poller = {
    wake() {
      if (running >= deployment.eventSource.maximumConcurrency) return;
      const next = sqs.nextVisibleAt(deployment.queue.url);
      if (next === undefined) return;
      // Lambda's pollers long-poll: a visible message is taken within a moment.
      const at = Math.max(next, now()) + 20;
      if (wakeTimer) clearTimeout(wakeTimer);
      wakeTimer = setTimeout(() => {
        wakeTimer = undefined;
        poller.poll();
      }, at - now());
    },
    poll() {
      while (running < deployment.eventSource.maximumConcurrency) {
        const records = sqs.receive(deployment.queue.url, deployment.eventSource.batchSize);
        if (records.length === 0) break;
        running += 1;
        void functions
          .retry(records)
          .then(
            (result) => {
              const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
              for (const r of records) if (!failed.has(r.messageId)) sqs.delete(deployment.queue.url, r.receiptHandle);
            },
            (error: unknown) => {
              // A failed invocation leaves the whole batch to its visibility timeout.
              if (!timedOut(error)) history.timeouts.push({ at: now(), fn: 'retry', error: String(error) });
            },
          )
          .finally(() => {
            running -= 1;
            poller.wake();
          });
      }
      poller.wake();
    },
  };

  // --- the hourly schedules --------------------------------------------------------------------
  const hourly = (minute: number, run: () => void) => {
    const first = START + minute * 60_000;
    setTimeout(() => {
      run();
      setInterval(run, 3_600_000);
    }, first - now());
  };
  hourly(workload.summaryMinute, () => {
    const at = now();
    void functions.summary({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date(at).toISOString() }).then(
      (answer) => {
        history.summaryRuns.push({ at, answer });
        record(`summary run ${JSON.stringify(answer).length}`);
      },
      (error: unknown) => {
        if (!timedOut(error)) history.summaryRuns.push({ at, error: String(error) });
      },
    );
  });
  hourly(workload.directoryMinute, () => {
    const at = now();
    platform.takeFaultCount();
    const emptyList = platform.emptyPayerList;
    const coverage = platform.coverage();
    void functions.directory().then(
      (summary) => {
        history.directoryRuns.push({ at, end: now(), summary, emptyList, faults: platform.takeFaultCount(), coverage });
        record(`directory run ${String(summary['outcome'])}`);
      },
      (error: unknown) => {
        if (!timedOut(error))
          history.directoryRuns.push({ at, end: now(), summary: { error: String(error) }, emptyList, faults: 0, coverage });
      },
    );
  });

  // --- the workload's changes ------------------------------------------------------------------
  const config = structuredClone(workload.config);
  for (const change of workload.changes) {
    setTimeout(() => {
      record(`change ${change.kind}`);
      if (change.kind === 'move-account') {
        const payer = workload.payers[change.payer];
        const from = payer?.costCenters[change.from];
        const to = payer?.costCenters[change.to];
        if (from && to) {
          from.linked = from.linked.filter((a) => a !== change.account);
          to.linked.push(change.account);
        }
      } else if (change.kind === 'empty-payer-list') {
        platform.emptyPayerList = true;
        setTimeout(() => {
          platform.emptyPayerList = false;
        }, change.until - now());
      } else {
        change.apply(config);
        secrets.put(deployment.secrets.config, JSON.stringify(config));
        history.configChanges.push({ at: now(), config: structuredClone(config) });
      }
    }, change.at - now());
  }

  // --- people: they triage what they see ---------------------------------------------------------
  const people = random.fork('people');
  const placeToDestination = new Map(workload.destinations.map((d) => [d.place, d]));
  let seenShown = 0;
  const click = async (
    request: { method: string; path: string; headers: Record<string, string>; body: string },
    what: Omit<History['clicks'][number], 'status' | 'answeredAt'>,
  ) => {
    let status = 0;
    try {
      status = (await functions.triage({ ...request, domain: DOMAIN })).statusCode;
    } catch (error) {
      if (!timedOut(error)) throw error;
    }
    history.clicks.push({ ...what, status, answeredAt: now() });
    record(`triage ${what.destination} ${what.anomaly} ${what.action} ${status}`);
  };
  /** The value of the first button whose action id is (or, ending in `_`, starts with) `actionId`, in a posted body. */
  const buttonValueIn = (body: unknown, actionId: string): string | undefined => {
    const stack: unknown[] = [body];
    while (stack.length > 0) {
      const node = stack.shift();
      if (typeof node !== 'object' || node === null) continue;
      const { action_id: id, value } = node as { action_id?: unknown; value?: unknown };
      const matches =
        typeof id === 'string' && (actionId.endsWith('_') ? id.startsWith(actionId) && id !== 'triage_link' : id === actionId);
      if (matches && typeof value === 'string') return value;
      stack.push(...Object.values(node));
    }
    return undefined;
  };
  const reactTo = (post: Shown) => {
    const destination = placeToDestination.get(post.place.split('#')[0] ?? post.place) ?? placeToDestination.get(post.place);
    if (!destination || post.how === 'edit') return;
    const anomaly = anomalyOf(post.text);
    if (anomaly === undefined || !people.chance(0.55)) return;
    const links = [...post.text.matchAll(/https:\/\/[^"\\\s]+\/triage\/([A-Za-z0-9._~-]+)/g)].map((m) => m[1] as string);
    const buttons = post.service === 'slack-app' && post.text.includes('triage_acknowledge');
    if (links.length === 0 && !buttons) return;
    // Late clicks, doubled clicks, clicks long after the record expired.
    const delay = people.chance(0.05) ? people.int(2 * DAY_MS, 10 * DAY_MS) : people.int(60_000, 8 * 3_600_000);
    const action = people.pick(['acknowledge', 'acknowledge', 'expected', 'snooze', 'reopen'] as const);
    const twice = people.chance(0.1);
    if (links.length > 0) {
      // A digest links each anomaly it names; people act on one of them (the first named here).
      const token = links[0] as string;
      const body = new URLSearchParams({ action, name: `Sim ${people.int(1, 9)}` }).toString();
      const send = () =>
        void click(
          { method: 'POST', path: `/triage/${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
          { at: now(), destination: destination.name, anomaly, action, via: 'page' },
        );
      setTimeout(send, delay);
      if (twice) setTimeout(send, delay + people.int(100, 5_000));
      return;
    }
    const ts = /"ts":"([\d.]+)"/.exec(post.text)?.[1];
    // The button's value as the app wrote it (the anomaly, and what a cost event needs): Slack sends it back.
    const value = buttonValueIn(post.body, `triage_${action}`) ?? buttonValueIn(post.body, 'triage_');
    if (!value) return;
    setTimeout(() => {
      const payload = JSON.stringify({
        type: 'block_actions',
        user: { id: 'U0SIMUSER', username: 'sim.user' },
        container: { channel_id: post.place, message_ts: ts ?? '0' },
        message: { text: '', blocks: [] },
        actions: [{ action_id: `triage_${action}`, value }],
      });
      const body = new URLSearchParams({ payload }).toString();
      const timestamp = String(Math.floor(now() / 1000));
      const signature = `v0=${createHmac('sha256', workload.slackApp.signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      const request = {
        method: 'POST',
        path: '/slack/interactions',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': signature,
        },
        body,
      };
      void click(request, { at: now(), destination: destination.name, anomaly, action, via: 'button' });
      // A replay of the same signed request: it must change nothing.
      if (twice)
        setTimeout(
          () => void click(request, { at: now(), destination: destination.name, anomaly, action, via: 'replay' }),
          people.int(100, 60_000),
        );
    }, delay);
  };

  // --- run -------------------------------------------------------------------------------------
  const stop = drainFrom + DRAIN_MS;
  for (let t = now(); t < stop; ) {
    t = Math.min(stop, t + 60_000);
    await clock.runUntil(t);
    while (seenShown < services.shown.length) {
      const post = services.shown[seenShown++] as Shown;
      record(`shown ${post.service} ${post.place} ${post.how} ${post.markers.join(',')}`);
      reactTo(post);
    }
  }
  history.end = now();
  await clock.settle();

  const violations = checkInvariants(history);
  const escalations = services.shown.filter((s) => isEscalationText(s.text) && s.how !== 'edit').length;
  const counts = {
    alerts: history.answers.filter((a) => a.attempt === 1).length,
    faults: [...services.faults.entries()].filter(([f]) => f !== 'none').reduce((n, [, c]) => n + c, 0),
    triage: history.clicks.length,
    escalations,
    groupClosings: output.filter((o) => o.fn === 'retry' && /"message":"group closed/.test(o.line)).length,
    summaries: output.filter((o) => o.fn === 'summary' && /"Summaries"/.test(o.line)).length,
    directoryRuns: history.directoryRuns.length,
  };
  const hex = trace.digest('hex');
  const line = `seed ${seed}: trace ${hex}, alerts ${counts.alerts}, faults ${counts.faults}, triage ${counts.triage}, escalations ${counts.escalations}, group closings ${counts.groupClosings}, summaries ${counts.summaries}, directory runs ${counts.directoryRuns}, violations ${violations.length}`;
  return { seed, trace: hex, counts, violations, line, eventsOf: (anomaly) => eventsOf(history, anomaly), history, traceLines };
}

/** The anomaly a post names: the workload's titles carry its number. */
export function anomalyOf(text: string): number | undefined {
  const match = /(?:Cost anomaly|Recommendations) (\d+):/.exec(text);
  if (match) return Number(match[1]);
  const marker = text.match(MARKER)?.[0];
  return marker === undefined ? undefined : undefined;
}
