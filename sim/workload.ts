import type { Random } from './random.js';
import type { FaultRates } from './world/faults.js';
import type { SimPayer } from './world/platform.js';

/**
 * What one seed asks of the relay: a configuration drawn from what the contract allows, the
 * platform's payers and cost centers, and a schedule of alerts (openings, follow-ups, identical
 * re-sends, storms, quiet tests, reports), directory changes, configuration changes and outage
 * windows. Everything is drawn here, before the run, from the seed; what users do in reaction to
 * what they see (triage) is drawn during the run from its own stream.
 */

export const DAY_MS = 86_400_000;
/** A Thursday before Europe's and New Zealand's clock changes, so that a 14-day run crosses both. */
export const START = Date.parse('2026-03-26T00:00:00Z');

/** A destination of the drawn configuration, with where its posts land at the simulated service. */
export interface DrawnDestination {
  name: string;
  kind: 'slack' | 'slack-app' | 'teams' | 'googlechat' | 'pagerduty' | 'jira' | 'eventbridge' | 'webhook';
  config: Record<string, unknown>;
  /** The `place` the simulated service shows its posts under. */
  place: string;
  /** Where a fault spell applies (faults.ts). */
  faultKey: string;
}

export interface Alert {
  /** Unique per delivery body: `simA<no>` is written at the start of its message. */
  no: number;
  at: number;
  anomaly: number;
  title: string;
  accountId: string;
  /** The account id is sent as a JSON number (its leading zeros lost), as the platform sometimes does. */
  numericAccount: boolean;
  cloud: string;
  objectType: string;
  body: string;
  quiet: boolean;
  /** A re-send of an earlier delivery, byte for byte. */
  resendOf?: number;
}

export type ScheduledChange =
  | { at: number; kind: 'move-account'; account: string; from: number; to: number; payer: number }
  | { at: number; kind: 'empty-payer-list'; until: number }
  | { at: number; kind: 'config'; describe: string; apply: (config: RelayConfig) => void };

export interface Outage {
  faultKey: string;
  from: number;
  until: number;
  rates: FaultRates;
}

export type RelayConfig = {
  auth: Record<string, unknown>;
  slack?: Record<string, unknown>;
  destinations: Record<string, Record<string, unknown>>;
  routes: Array<{ when: Record<string, unknown>; to: string[] }>;
};

export interface Workload {
  config: RelayConfig;
  destinations: DrawnDestination[];
  payers: SimPayer[];
  alerts: Alert[];
  changes: ScheduledChange[];
  outages: Outage[];
  /** Offsets of the hourly schedules within their hour. */
  summaryMinute: number;
  directoryMinute: number;
  basic: { username: string; password: string };
  slackApp: { botToken: string; signingSecret: string };
  /** The webhook destination's signing secret (`whsec_…`), which its receiver verifies with. */
  webhookSecret: string;
  end: number;
}

const ROUTING_KEY = 'R0SIM0PAGERDUTY0ROUTING0KEY00001';
const TIME_ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Pacific/Auckland', 'Pacific/Chatham', 'Australia/Lord_Howe'];
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const SERVICES = ['Amazon EC2', 'Amazon S3', 'Amazon RDS', 'AWS Lambda', 'Azure VMs', 'BigQuery', 'Amazon CloudFront'];
const COST_CENTERS = ['Data Platform', 'Web', 'Machine Learning', 'Finance', 'Growth'];

function account(random: Random): string {
  // A few ids start with zeros: sent as JSON numbers, they lose them.
  const digits = random.chance(0.2)
    ? `00${random.int(1_000_000_000, 9_999_999_999)}`
    : String(random.int(100_000_000_000, 999_999_999_999));
  return digits.padStart(12, '0').slice(-12);
}

export function drawWorkload(random: Random, days: number): Workload {
  const end = START + days * DAY_MS;
  const basic = { username: 'relay', password: `sim-basic-${random.int(100000, 999999)}-password` };
  const slackApp = {
    botToken: `xoxb-sim-${random.int(100000, 999999)}-token`,
    signingSecret: `sim-signing-secret-${random.int(100000, 999999)}`,
  };

  // --- the platform: payers, their cost centers and the accounts they cover -------------------
  const payers: SimPayer[] = [];
  const allAccounts: Array<{ id: string; cloud: string }> = [];
  const payerCount = random.int(2, 3);
  for (let p = 0; p < payerCount; p++) {
    const cloudTypeId = p === 2 ? 1 : 0;
    const costCenters = [];
    const names = [...COST_CENTERS].sort(() => random.next() - 0.5).slice(0, random.int(2, 4));
    for (const [i, name] of names.entries()) {
      const linked = Array.from({ length: random.int(1, 4) }, () => account(random));
      for (const id of linked) allAccounts.push({ id, cloud: cloudTypeId === 1 ? 'azure' : 'aws' });
      // Two payers may number their cost centers alike: an id names a cost center within its payer only.
      costCenters.push({ id: i + 1, name, linked });
    }
    payers.push({
      accountKey: 1000 + p,
      accountId: account(random),
      accountName: `Payer ${p}`,
      cloudTypeId,
      costCenters,
      ...(random.chance(0.3) ? { v1Only: true } : {}),
    });
  }
  const strangers = Array.from({ length: 3 }, () => ({ id: account(random), cloud: 'aws' }));
  allAccounts.push(...strangers);

  // --- destinations -----------------------------------------------------------------------------
  const destinations: DrawnDestination[] = [];
  const add = (name: string, kind: DrawnDestination['kind'], config: Record<string, unknown>, place: string, faultKey: string) =>
    destinations.push({ name, kind, config, place, faultKey });
  const summary = () =>
    random.chance(0.6) ? { summary: { weekday: random.pick(WEEKDAYS), hour: random.int(0, 23), timeZone: random.pick(TIME_ZONES) } } : {};
  const group = (p: number) => (random.chance(p) ? { group: { waitSeconds: random.int(10, 90) } } : {});

  add(
    'default',
    'slack',
    { url: 'https://hooks.slack.com/services/TSIM/B000/default0000', ...summary() },
    '/services/TSIM/B000/default0000',
    'slack:hooks.slack.com/services/TSIM/B000/default0000',
  );
  add('oncall', 'pagerduty', { type: 'pagerduty', routingKey: ROUTING_KEY, severity: 'error' }, ROUTING_KEY, `pagerduty:${ROUTING_KEY}`);
  add(
    'storm',
    'slack',
    { url: 'https://hooks.slack.com/services/TSIM/B001/storm00000', ...group(1), ...summary() },
    '/services/TSIM/B001/storm00000',
    'slack:hooks.slack.com/services/TSIM/B001/storm00000',
  );
  add(
    'teams',
    'teams',
    {
      url: 'https://prod-01.westus.logic.azure.com/workflows/sim01/triggers/manual/paths/invoke?sig=simsig01',
      ...group(0.4),
      ...summary(),
    },
    '/workflows/sim01/triggers/manual/paths/invoke',
    'teams:prod-01.westus.logic.azure.com/workflows/sim01/triggers/manual/paths/invoke',
  );
  add(
    'gchat',
    'googlechat',
    { url: 'https://chat.googleapis.com/v1/spaces/SIMSPACE/messages?key=simkey&token=simtoken', ...group(0.4), ...summary() },
    '/v1/spaces/SIMSPACE/messages',
    'googlechat:chat.googleapis.com/v1/spaces/SIMSPACE/messages',
  );
  add('app', 'slack-app', { type: 'slack', channel: 'C0SIMAPP1', ...group(0.3), ...summary() }, 'C0SIMAPP1', 'slack-app:C0SIMAPP1');
  add(
    'tickets',
    'jira',
    {
      type: 'jira',
      site: 'https://simcorp.atlassian.net',
      project: 'SIM',
      email: 'bot@simcorp.example',
      apiToken: `ATATT-sim-${random.int(1000, 9999)}`,
      ...summary(),
    },
    'SIM',
    'jira:simcorp.atlassian.net',
  );

  // Escalations lead onwards, never back: each one to a destination later in the list.
  const byName = new Map(destinations.map((d) => [d.name, d]));
  const escalate = (from: string, to: string, p: number, chance = random) => {
    const d = byName.get(from);
    if (d && chance.chance(p)) d.config['escalate'] = { afterMinutes: chance.int(15, 240), to };
  };
  escalate('storm', random.pick(['oncall', 'tickets']), 0.9);
  escalate('teams', 'oncall', 0.5);
  escalate('app', random.pick(['oncall', 'tickets']), 0.6);
  escalate('gchat', 'teams', 0.4);

  // The kinds read by programs: a bus and a webhook receiver. Drawn from a stream of their own, so
  // that every other draw of a seed stays what it was before they joined.
  const programs = random.fork('programs');
  const webhookSecret = `whsec_${Buffer.from(Array.from({ length: 32 }, () => programs.int(0, 255))).toString('base64')}`;
  const programSummary = () =>
    programs.chance(0.6)
      ? { summary: { weekday: programs.pick(WEEKDAYS), hour: programs.int(0, 23), timeZone: programs.pick(TIME_ZONES) } }
      : {};
  add('bus', 'eventbridge', { type: 'eventbridge', eventBus: 'finops-sim', ...programSummary() }, 'finops-sim', 'eventbridge:finops-sim');
  add(
    'hooks',
    'webhook',
    { type: 'webhook', url: 'https://hooks.receiver.example/cost/sim', secret: webhookSecret, ...programSummary() },
    '/cost/sim',
    'webhook:hooks.receiver.example/cost/sim',
  );
  byName.set('bus', destinations[destinations.length - 2] as DrawnDestination);
  byName.set('hooks', destinations[destinations.length - 1] as DrawnDestination);
  // The receiver is where an anomaly left open at a chat without an escalation of its own may go.
  const free = ['teams', 'app', 'gchat'].filter((name) => !byName.get(name)?.config['escalate']);
  if (free.length > 0) escalate(programs.pick(free), 'hooks', 0.8, programs);

  const stormAccounts = allAccounts.slice(0, Math.max(2, Math.floor(allAccounts.length / 3))).map((a) => a.id);
  const appAccounts = allAccounts.slice(-2).map((a) => a.id);
  // One account pages on-call directly, so that PagerDuty sees follow-ups and triage, not only escalations.
  const pagedAccounts = allAccounts.slice(stormAccounts.length, stormAccounts.length + 1).map((a) => a.id);
  const ccNames = payers.flatMap((p) => p.costCenters.map((c) => c.name));
  const routedCostCenter = random.pick(ccNames);
  const config: RelayConfig = {
    auth: { method: 'basic', basic: basic },
    slack: { botToken: slackApp.botToken, signingSecret: slackApp.signingSecret },
    destinations: Object.fromEntries(destinations.map((d) => [d.name, d.config])),
    routes: [
      { when: { accountId: stormAccounts }, to: ['storm'] },
      { when: { costCenter: [routedCostCenter] }, to: ['teams'] },
      { when: { cloudProvider: ['azure'] }, to: ['gchat'] },
      { when: { accountId: appAccounts }, to: ['app'] },
      { when: { accountId: pagedAccounts }, to: ['oncall'] },
      { when: { objectType: ['recommendation_report'] }, to: ['tickets'] },
      // Alerts that also go elsewhere: one storm account onto the bus, the paged one and one of the app's to the receiver.
      { when: { accountId: stormAccounts.slice(0, 1) }, to: ['bus'] },
      { when: { accountId: [...pagedAccounts, ...appAccounts.slice(0, 1)] }, to: ['hooks'] },
    ],
  };

  // --- alerts ---------------------------------------------------------------------------------
  const alerts: Alert[] = [];
  let anomalies = 0;
  const body = (a: Omit<Alert, 'body' | 'no'> & { no: number }) => {
    const accountValue = a.numericAccount ? String(Number(a.accountId)) : JSON.stringify(a.accountId);
    return `{"metadata":{"object_type":${JSON.stringify(a.objectType)},"timestamp":${JSON.stringify(new Date(a.at).toISOString())}},"payload":{"title":${JSON.stringify(a.title)},"message":${JSON.stringify(`simA${a.no} Daily cost of ${a.title.split(': ')[1] ?? 'a service'} rose ${10 + (a.no % 300)}% above expected.`)},"cloud_provider_type":${JSON.stringify(a.cloud)},"account_id":${accountValue},"account_name":"Account ${a.accountId.slice(-4)}"}}`;
  };
  const push = (fields: Omit<Alert, 'body' | 'no'>) => {
    const no = alerts.length + 1;
    const alert = { ...fields, no };
    // A re-send is the same body, byte for byte: its marker is the original's.
    const original = fields.resendOf === undefined ? undefined : alerts.find((a) => a.no === fields.resendOf);
    alerts.push({ ...alert, body: original?.body ?? body(alert) });
    return alerts[alerts.length - 1] as Alert;
  };
  const anomaly = (at: number, accounts: ReadonlyArray<{ id: string; cloud: string }>, followUpsMax: number) => {
    const n = ++anomalies;
    const where = random.pick(accounts);
    const objectType = random.chance(0.08) ? 'recommendation_report' : 'anomaly_alert';
    const title = objectType === 'anomaly_alert' ? `Cost anomaly ${n}: ${random.pick(SERVICES)}` : `Recommendations ${n}: rightsizing`;
    const fields = {
      anomaly: n,
      title,
      accountId: where.id,
      // Only an AWS account id is all digits; another cloud's (an Azure subscription) never comes as a number.
      numericAccount: random.chance(0.15) && where.cloud === 'aws',
      cloud: where.cloud,
      objectType,
      quiet: false,
    };
    const opening = push({ ...fields, at });
    if (random.chance(0.2)) push({ ...opening, at: at + random.int(1_000, 300_000), resendOf: opening.no });
    let t = at;
    // Follow-ups within the day: a later alert after the anomaly's record expired opens it anew.
    for (let f = random.int(0, followUpsMax); f > 0; f--) {
      t += random.int(5 * 60_000, 6 * 3_600_000);
      if (t >= end || t - at > 20 * 3_600_000) break;
      const followUp = push({ ...fields, at: t });
      if (random.chance(0.1)) push({ ...followUp, at: t + random.int(1_000, 60_000), resendOf: followUp.no });
    }
  };
  for (let i = 0, count = days * random.int(6, 12); i < count; i++)
    anomaly(START + random.int(0, days * DAY_MS - 3_600_000), allAccounts, 3);
  // Storms: a burst of anomalies for the grouped destination within a minute.
  const storms: number[] = [];
  for (let s = random.int(2, 4); s > 0; s--) {
    const at = START + random.int(DAY_MS / 4, days * DAY_MS - DAY_MS / 4);
    storms.push(at);
    const stormSet = allAccounts.filter((a) => stormAccounts.includes(a.id));
    for (let i = random.int(6, 25); i > 0; i--) anomaly(at + random.int(0, 45_000), stormSet, 1);
  }
  // Quiet test deliveries (`npm run send -- --test`): not anomalies.
  for (let q = 0; q < 2; q++) {
    push({
      anomaly: 0,
      at: START + random.int(0, days * DAY_MS),
      title: 'Test alert from Cost Alert Relay',
      accountId: '000000000000',
      numericAccount: false,
      cloud: 'aws',
      objectType: 'anomaly_alert',
      quiet: true,
    });
  }
  alerts.sort((a, b) => a.at - b.at || a.no - b.no);

  // --- the directory changes ------------------------------------------------------------------
  const changes: ScheduledChange[] = [];
  for (let m = random.int(1, 4); m > 0; m--) {
    const payer = random.int(0, payers.length - 1);
    const centers = (payers[payer] as SimPayer).costCenters;
    const from = random.int(0, centers.length - 1);
    const linked = (centers[from] as { linked: string[] }).linked;
    if (centers.length < 2 || linked.length === 0) continue;
    const to = (from + 1) % centers.length;
    changes.push({
      at: START + random.int(DAY_MS / 2, days * DAY_MS),
      kind: 'move-account',
      account: random.pick(linked),
      from,
      to,
      payer,
    });
  }
  if (random.chance(0.7)) {
    const at = START + random.int(DAY_MS, days * DAY_MS - DAY_MS);
    changes.push({ at, kind: 'empty-payer-list', until: at + random.int(2, 30) * 3_600_000 });
  }
  // A configuration change: another group wait, or an escalation switched off, mid-run.
  if (random.chance(0.6)) {
    const wait = random.int(10, 60);
    changes.push({
      at: START + random.int(DAY_MS, days * DAY_MS),
      kind: 'config',
      describe: `storm groups for ${wait} s`,
      apply: (c) => {
        (c.destinations['storm'] as Record<string, unknown>)['group'] = { waitSeconds: wait };
      },
    });
  }
  changes.sort((a, b) => a.at - b.at);

  // --- outages --------------------------------------------------------------------------------
  // A destination throttled for a while, often while a storm folds at another: its backlog on
  // the retry queue must delay no one else.
  const outages: Outage[] = [];
  for (const at of storms) {
    if (!random.chance(0.8)) continue;
    // Only `default` (accounts no route claims) and `app` (its accounts) can be given a backlog of their own.
    const victim = random.pick(['default', 'app']);
    const accounts = victim === 'default' ? strangers : allAccounts.filter((a) => appAccounts.includes(a.id));
    const from = at - random.int(2, 10) * 60_000;
    const until = at + random.int(5, 30) * 60_000;
    outages.push({
      faultKey: (byName.get(victim) as DrawnDestination).faultKey,
      from,
      until,
      rates: { throttle: 0.9, unavailable: 0.05, hang: 0, late: 0, lost: 0 },
    });
    for (let i = random.int(10, 30); i > 0; i--) anomaly(from + random.int(0, until - from), accounts, 0);
  }
  alerts.sort((a, b) => a.at - b.at || a.no - b.no);

  return {
    config,
    destinations,
    payers,
    alerts,
    changes,
    outages,
    summaryMinute: random.int(0, 59),
    directoryMinute: random.int(0, 59),
    basic,
    slackApp,
    webhookSecret,
    end,
  };
}
