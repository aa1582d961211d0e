// npm run bench: cold-path bytes, cold start, memory and warm latency of the relay next to two
// floors, on Lambda's Node.js with Lambda's flags and environment, and the calls the relay
// makes to its dependencies. Prints tables and budgets, and writes bench/results.json.

import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { webhookMessageSchema } from '../lib/message/schema.js';
import { formatSlackMessage } from '../lib/notify/slack/format.js';
import { signChartToken } from '../lib/triage-link/chart.js';
import { buildFunction } from '../scripts/esbuild-options.mjs';
import { httpApiEvent } from '../scripts/http-api-event.js';
import { type AwsProxy, startAwsProxy } from '../test/helpers/aws-proxy.js';
import { startFakePlatform } from '../test/helpers/cost-platform.js';
import { createSigningKey, signToken, startKeyServer } from '../test/helpers/key-server.js';
import { motoAvailable, startMoto } from '../test/helpers/moto.js';
import { type FakeSlackApi, startFakeSlackApi } from '../test/helpers/slack-api-server.js';
import { type FakeSlack, startFakeSlack } from '../test/helpers/slack-server.js';
import { type ChildArgs, type ContainerRun, type Runtime, runContainer } from './containers.js';
import { LAMBDA_REGION, lambdaEnvironment, lambdaNodeArgs, lambdaNodeBinary, nodeVersion, readRelayTemplate } from './lambda.js';
import { type BundleSize, bundleSize, isSdkOrigin } from './sizes.js';
import { median, percentile } from './stats.js';
import {
  BACKLOG_STORM,
  BACKLOG_STORM_BUDGET,
  BACKLOG_STORM_HEADER,
  backlogStormRows,
  measureStorm,
  STORM,
  STORM_BUDGET,
  stormRows,
} from './storm.js';
import { printTable, type Row } from './table.js';

// The benchmark's own clients (creating secrets) run on whatever Node runs the benchmark.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out');
// Odd, so that the median is one real run; 21 keeps a noisy shared machine's median steady.
const COLD_RUNS = Math.max(1, Number(process.env['BENCH_COLD_RUNS'] ?? 21));
const WARM_DELIVERIES = Math.max(1, Number(process.env['BENCH_WARM_DELIVERIES'] ?? 2000));
/** Warm containers per subject, interleaved: one warm run is at the mercy of what else the machine does. */
const WARM_ROUNDS = Math.max(1, Number(process.env['BENCH_WARM_ROUNDS'] ?? 5));
/** The TTL scenario: deliveries spaced out so that a 1 s configuration TTL expires a few times. */
const TTL_SCENARIO = { ttlSeconds: 1, deliveries: 30, intervalMs: 100 };
/** Functions the contract names; the ones not built yet get a note instead of figures. */
const EXPECTED_FUNCTIONS = ['webhook-relay', 'api-key-rotation', 'delivery-retry', 'triage'];
const TRIAGE_SIGNING_SECRET = 'bench-triage-signing-secret';
const RELAY = 'webhook-relay';
const GET_SECRET = 'secretsmanager.GetSecretValue';
// Why each budget and its reference: bench/README.md, "Budgets".
const BUDGET = {
  /** The basic configuration (one webhook destination, no table): the Slack app issue's bound. */
  coldRatio: 1.5,
  deployedColdRatio: 1.7,
  /** A Slack app destination with the table, against a floor with the same round trips. */
  slackAppColdRatio: 1.8,
  peakMemoryRatio: 1.2,
  /** The cold path before Slack app destinations, plus 5 KiB: their code must stay off it. */
  relayColdPathKiB: 120,
  /** The triage function from spawn to the answer of a signed click: a third of Slack's 3 s. */
  triageColdMs: 1_000,
  /** A cold picture, platform on loopback: the contract's 3 s for the answer, less a share for the platform's own time. */
  chartColdMs: 2_000,
  /**
   * The relay's own work per warm delivery, its chat services answering in process, against the
   * SDK floor's own work in process in the same run: a ratio, so that it holds on any machine.
   * Set from a quiet run with every destination kind, escalation and summaries (bench/README.md).
   */
  ownWorkRatio: 30,
  /** The relay warm, against its own work followed by the SDK floor's post in one container. */
  warmRatioToOwnWorkThenPost: 1.15,
};
const FLOORS = {
  'limit floor': 'limit',
  'deployed limit floor': 'limit-deployed',
  'SDK floor': 'sdk',
  'Slack app limit floor': 'limit-slack-app',
} as const;
type Floor = keyof typeof FLOORS;

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);
const mib = (kibibytes: number) => (kibibytes / 1024).toFixed(1);
const us = (milliseconds: number) => (milliseconds * 1000).toFixed(0);
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
const verdict = (pass: boolean) => (pass ? 'pass' : 'FAIL');

// ---------------------------------------------------------------- Lambda's runtime
const template = readRelayTemplate(join(root, 'template.yaml'));
const MEMORY_MB = template.memoryMb;
const runtime: Runtime = { node: lambdaNodeBinary(), nodeArgs: lambdaNodeArgs(MEMORY_MB) };
const childNode = nodeVersion(runtime.node);
console.log(`\nContainers: Node ${childNode} (orchestrator ${process.version}), ${MEMORY_MB} MB as template.yaml deploys the relay`);
console.log(`  node ${runtime.nodeArgs.join(' ')}`);

// ---------------------------------------------------------------- bundles, and the floors'
const distDir = join(root, 'dist');
const functions = readdirSync(distDir)
  .filter((name) => existsSync(join(distDir, name, 'index.mjs')))
  .sort((a, b) => Number(b === RELAY) - Number(a === RELAY) || a.localeCompare(b));
if (!functions.includes(RELAY)) throw new Error('dist/webhook-relay/index.mjs is missing: run `npm run build` first');
const bundlePath = (name: string) => join(distDir, name, 'index.mjs');
const missing = EXPECTED_FUNCTIONS.filter((name) => !functions.includes(name));

const sizes: Record<string, BundleSize> = Object.fromEntries(
  functions.map((name) => [name, bundleSize(join(distDir, name), JSON.parse(readFileSync(join(distDir, 'meta', `${name}.json`), 'utf8')))]),
);
/**
 * Builds a bench source into a fresh `out/<name>` the build's own way (bundleOptions, lazy
 * bundles), so that it differs from the relay only in its source.
 */
async function buildBenchBundle(source: string, name: string): Promise<{ entry: string; size: BundleSize }> {
  const dir = join(out, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const size = bundleSize(dir, await buildFunction(join(root, 'bench', source), dir));
  return { entry: join(dir, 'index.mjs'), size };
}
const floorPath: Record<Floor, string> = {} as Record<Floor, string>;
for (const [floor, source] of Object.entries(FLOORS) as Array<[Floor, string]>) {
  const { entry, size } = await buildBenchBundle(`floor/${source}.ts`, `floor-${source}`);
  sizes[`(${floor})`] = size;
  floorPath[floor] = entry;
}
// The relay with chat services that answer in process: its own work per warm delivery, no network.
const inProcessRelay = (await buildBenchBundle('in-process.ts', 'relay-in-process')).entry;
// The same own work, then the SDK floor's post: the own work as it runs between network waits.
const ownWorkThenPost = (await buildBenchBundle('own-work-then-post.ts', 'own-work-then-post')).entry;
const relaySize = sizes[RELAY]!;
const relayColdPathPass = relaySize.coldPathBytes <= BUDGET.relayColdPathKiB * 1024;

console.log('\nBundles (minified ESM; cold path = index.mjs and the chunks it imports statically; folder = all that is deployed)');
printTable(
  ['function', 'cold path KiB', 'files', 'AWS SDK KiB', 'folder KiB', 'largest non-SDK parts on the cold path', 'budget'],
  Object.entries(sizes).map(
    ([name, size]): Row => [
      name,
      kib(size.coldPathBytes),
      String(size.coldPathFiles.length),
      kib(size.sdkBytes),
      kib(size.folderBytes),
      size.largest
        .filter((part) => !isSdkOrigin(part.from))
        .slice(0, 3)
        .map((part) => `${part.from} ${kib(part.bytes)}`)
        .join(', '),
      name === RELAY ? `<= ${BUDGET.relayColdPathKiB} KiB ${verdict(relayColdPathPass)}` : '',
    ],
  ),
);
for (const name of missing) console.log(`  ${name}: not built yet (no functions/${name}/handler.ts in this build); no figures`);
console.log(`\nLargest contributors to the cold path of ${RELAY}, by package`);
printTable(
  ['package', 'KiB', 'share'],
  relaySize.largest.map((part): Row => [part.from, kib(part.bytes), `${Math.round((part.bytes / relaySize.coldPathBytes) * 100)}%`]),
);

if (!motoAvailable()) {
  console.error("\nmoto_server is not installed (pip install 'moto[server]'); it plays Secrets Manager, DynamoDB and SQS for the timings.");
  process.exit(1);
}

// ---------------------------------------------------------------- dependencies on loopback
const moto = await startMoto();
let proxy: AwsProxy | undefined;
let slack: FakeSlack | undefined;
let slackApi: FakeSlackApi | undefined;
const BOT_TOKEN = 'xoxb-bench-0000-token';
try {
  proxy = await startAwsProxy(moto.url);
  slack = await startFakeSlack();
  slackApi = await startFakeSlackApi(BOT_TOKEN);
  const measured = await measure(proxy, slack, slackApi);
  const storm = await measureStorm(moto.url);
  console.log(`\nStorm: ${STORM.alerts} alerts in ${STORM.seconds} s to one Slack webhook that takes one message a second (429 above it)`);
  printTable(['run', 'posts', '429s', 'named', 'last post, s'], stormRows(storm));
  console.log(
    `\nA grouped storm (${BACKLOG_STORM.alerts} alerts in ${BACKLOG_STORM.seconds} s) while delivery-retry works through ${BACKLOG_STORM.backlog} paced retries for another webhook`,
  );
  printTable(BACKLOG_STORM_HEADER, backlogStormRows(storm));
  const stormBudgets = [
    { budget: `grouped storm: <= ${STORM_BUDGET.posts} posts`, value: storm.grouped.posts, pass: storm.pass.posts },
    {
      budget: `grouped storm: last post <= wait + ${STORM_BUDGET.lastPostAfterWaitSeconds} s`,
      value: storm.grouped.lastPostMs / 1000,
      pass: storm.pass.lastPost,
    },
    { budget: 'grouped storm: every alert named', value: storm.grouped.named, pass: storm.pass.everyAlert },
    {
      budget: `grouped storm beside another webhook's backlog: last post <= wait + ${BACKLOG_STORM_BUDGET.lastPostAfterWaitSeconds} s, every alert named`,
      value: storm.withBacklog.lastPostMs / 1000,
      pass: storm.pass.backlogLastPost,
    },
  ];
  printTable(
    ['budget', 'value', 'verdict'],
    stormBudgets.map((b): Row => [b.budget, String(b.value), verdict(b.pass)]),
  );
  const results = {
    ...measured,
    storm,
    budgets: [...measured.budgets, ...stormBudgets],
    failedBudgets: [...measured.failedBudgets, ...stormBudgets.filter((b) => !b.pass).map((b) => b.budget)],
  };
  writeFileSync(join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('\nwrote bench/results.json');
} finally {
  await Promise.allSettled([slack?.close(), slackApi?.close(), proxy?.close()]);
  await moto.stop();
}

async function measure(proxy: AwsProxy, slack: FakeSlack, slackApi: FakeSlackApi) {
  const awsAdmin = { endpoint: moto.url, region: LAMBDA_REGION, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
  const admin = new SecretsManagerClient(awsAdmin);
  const createSecret = async (name: string, value: unknown) => {
    const id = `bench-${name}-${Date.now()}`;
    await admin.send(new CreateSecretCommand({ Name: id, SecretString: JSON.stringify(value) }));
    return id;
  };
  const slackPath = '/services/T0/B0/bench';
  const password = 'bench-password-5d1f0c';
  const channelToken = 'bench-channel-token-9a2e';
  const basicSecret = await createSecret('basic', {
    auth: { method: 'basic', basic: { username: 'relay', password }, headers: [{ key: 'X-Channel-Token', value: channelToken }] },
    destinations: { default: { url: slack.url(slackPath) } },
  });
  const keys = await startKeyServer('/oauth2/bench');
  const signingKey = await createSigningKey('RS256', 'bench-key');
  keys.publish([signingKey.publicJwk]);
  const sso = { issuer: keys.issuer, clientId: 'bench-client', scope: 'cost-alerts' };
  const ssoSecret = await createSecret('sso', { auth: { method: 'sso', sso }, destinations: { default: { url: slack.url(slackPath) } } });

  // As the stack runs the relay: dedup table and both queues.
  const tableName = `bench-seen-${Date.now()}`;
  await new DynamoDBClient(awsAdmin).send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
  const sqsAdmin = new SQSClient(awsAdmin);
  const queueUrl = async (name: string) => (await sqsAdmin.send(new CreateQueueCommand({ QueueName: `${name}-${Date.now()}` }))).QueueUrl!;
  // The template's resources the relay's variables refer to, as the benchmark stands them in.
  const basicResources = { RelayConfigSecret: basicSecret };
  const deployedResources = {
    ...basicResources,
    // The stack generates a 64-character key; the deployed relay reads it to sign Triage links.
    TriageKeySecret: await createSecret('triage-key', randomBytes(32).toString('hex')),
    DedupTable: tableName,
    DeliveryQueue: await queueUrl('bench-deliveries'),
    DeliveryDeadLetterQueue: await queueUrl('bench-undelivered'),
  };

  // A Slack app destination with the table: what an app delivery adds (the Web API client, anomaly state).
  const appSecret = await createSecret('slack-app', {
    auth: { method: 'basic', basic: { username: 'relay', password }, headers: [{ key: 'X-Channel-Token', value: channelToken }] },
    slack: { botToken: BOT_TOKEN },
    destinations: { default: { channel: 'CBENCH0001' } },
  });
  const appResources = { ...deployedResources, RelayConfigSecret: appSecret };

  const body = readFileSync(join(root, 'events', 'anomaly-alert.json'), 'utf8');
  const basicHeaders = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`relay:${password}`).toString('base64')}`,
    'x-channel-token': channelToken,
  };
  const eventFile = (name: string, headers: Record<string, string>, eventBody = body) => {
    const file = join(out, `${name}.event.json`);
    writeFileSync(file, JSON.stringify(httpApiEvent({ headers, body: eventBody })));
    return file;
  };
  const basicEvent = eventFile('basic', basicHeaders);
  // The dedup table rightly skips an alert it has seen: each deployed run sends another one (its own timestamp).
  let alerts = 0;
  // An app destination's run posts a new anomaly each time (its own title), so that each is an opening.
  const newAlertEvent = (newAnomaly = false) => {
    const message = JSON.parse(body) as { metadata: Record<string, string>; payload: Record<string, string> };
    message.metadata['timestamp'] = new Date(Date.UTC(2026, 0, 1, 0, alerts)).toISOString();
    if (newAnomaly) message.payload['title'] = `${message.payload['title']} #${alerts}`;
    alerts += 1;
    return eventFile('deployed', basicHeaders, JSON.stringify(message));
  };

  /** A container's environment: Lambda's own variables, the endpoint of the counting proxy, and the function's. */
  const environment = (bundle: string, functionEnv: Record<string, string>): Record<string, string> => ({
    ...lambdaEnvironment(bundle.split('/').at(-2)!, MEMORY_MB, join(bundle, '..')),
    AWS_ENDPOINT_URL: proxy.url,
    ...functionEnv,
  });
  const relayEnvironment = (bundle: string, resources: Record<string, string>, extra: Record<string, string> = {}) =>
    environment(bundle, { ...template.environment(resources), ...extra });

  /** One container, with the Secrets Manager reads, DynamoDB writes and Slack posts it caused. */
  const container = async (args: ChildArgs, env: Record<string, string>) => {
    proxy.reset();
    slack.reset();
    slackApi.calls.length = 0;
    const run = await runContainer(runtime, args, env);
    const tableActions = ['PutItem', 'DeleteItem', 'UpdateItem', 'GetItem'];
    return {
      run,
      reads: proxy.count(GET_SECRET),
      tableCalls: tableActions.reduce((sum, action) => sum + proxy.count(`DynamoDB_20120810.${action}`), 0),
      posts: slack.accepted().length + slackApi.calls.filter((call) => call.answeredOk).length,
    };
  };
  const expectDelivered = (what: string, run: ContainerRun, posts: number, expected: number) => {
    const statuses = run.statuses ?? { [String(run.firstStatus)]: 1 };
    const others = Object.keys(statuses).filter((status) => status !== '200');
    if (run.firstStatus !== 200 || others.length > 0 || posts !== expected) {
      throw new Error(
        `${what}: expected ${expected} deliveries answered 200, got statuses ${JSON.stringify(statuses)} and ${posts} Slack posts\n${run.output}`,
      );
    }
  };

  // ------------------------------------------------------------ cold start, interleaved
  const subjects = {
    relay: { bundle: bundlePath(RELAY), resources: basicResources, deployed: false },
    'limit floor': { bundle: floorPath['limit floor'], resources: basicResources, deployed: false },
    'SDK floor': { bundle: floorPath['SDK floor'], resources: basicResources, deployed: false },
    'relay deployed': { bundle: bundlePath(RELAY), resources: deployedResources, deployed: true },
    'deployed limit floor': { bundle: floorPath['deployed limit floor'], resources: deployedResources, deployed: true },
    'relay Slack app': { bundle: bundlePath(RELAY), resources: appResources, deployed: true },
    'Slack app limit floor': { bundle: floorPath['Slack app limit floor'], resources: appResources, deployed: true },
  };
  type Subject = keyof typeof subjects;
  const kinds = Object.keys(subjects) as Subject[];
  console.log(`\nCold start: ${COLD_RUNS} rounds of ${kinds.join(', ')}, order rotated each round, one delivery each`);
  const cold = Object.fromEntries(kinds.map((kind) => [kind, [] as ContainerRun[]])) as Record<Subject, ContainerRun[]>;
  const coldReads: number[] = [];
  const deployedTableCalls: number[] = [];
  const appTableCalls: number[] = [];
  for (let round = 0; round < COLD_RUNS; round++) {
    // Rotated, so that no subject always runs right after the same other one.
    const shift = round % kinds.length;
    for (const kind of [...kinds.slice(shift), ...kinds.slice(0, shift)]) {
      const subject = subjects[kind];
      const event = subject.deployed ? newAlertEvent(kind.includes('Slack app')) : basicEvent;
      const result = await container(
        ['cold', subject.bundle, event],
        relayEnvironment(subject.bundle, subject.resources, { SLACK_API_URL: slackApi.url }),
      );
      expectDelivered(`cold ${kind}`, result.run, result.posts, 1);
      cold[kind].push(result.run);
      if (kind === 'relay') coldReads.push(result.reads);
      if (kind === 'relay deployed') deployedTableCalls.push(result.tableCalls);
      if (kind === 'relay Slack app') appTableCalls.push(result.tableCalls);
    }
  }
  const coldFigures = (runs: ContainerRun[]) => ({
    wallMs: median(runs.map((r) => r.wallMs)),
    wallP90Ms: percentile(
      runs.map((r) => r.wallMs),
      90,
    ),
    importMs: median(runs.map((r) => r.importMs)),
    firstInvokeMs: median(runs.map((r) => r.firstInvokeMs!)),
    medianRssKiB: median(runs.map((r) => r.maxRssKiB)),
    peakRssKiB: Math.max(...runs.map((r) => r.maxRssKiB)),
  });
  type ColdFigures = ReturnType<typeof coldFigures>;
  // The triage function: spawn to the answer of a signed Slack click (the state write and chat.update included).
  const triageSecret = await createSecret('triage', {
    auth: { method: 'basic', basic: { username: 'relay', password }, headers: [{ key: 'X-Channel-Token', value: channelToken }] },
    slack: { botToken: BOT_TOKEN, signingSecret: TRIAGE_SIGNING_SECRET },
    destinations: { default: { channel: 'CBENCH0001' } },
  });
  const clickEvent = (round: number) => {
    const payload = {
      type: 'block_actions',
      user: { id: 'UBENCH', username: 'bench' },
      actions: [{ action_id: 'triage_acknowledge', value: `anomaly#bench-${round}` }],
      container: { channel_id: 'CBENCH0001', message_ts: '1700000000.000100' },
      message: { text: 'bench', blocks: [] },
    };
    const clickBody = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', TRIAGE_SIGNING_SECRET).update(`v0:${timestamp}:${clickBody}`).digest('hex')}`;
    const file = join(out, 'triage-click.event.json');
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    };
    writeFileSync(file, JSON.stringify(httpApiEvent({ path: '/slack/interactions', headers, body: clickBody })));
    return file;
  };
  const triageCold: ContainerRun[] = [];
  for (let round = 0; round < COLD_RUNS; round++) {
    const bundle = bundlePath('triage');
    const result = await container(
      ['cold', bundle, clickEvent(round)],
      environment(bundle, { RELAY_CONFIG_SECRET_ID: triageSecret, DEDUP_TABLE_NAME: tableName, SLACK_API_URL: slackApi.url }),
    );
    if (result.run.firstStatus !== 200) throw new Error(`cold triage: answered ${result.run.firstStatus}\n${result.run.output}`);
    triageCold.push(result.run);
  }
  const triageColdMs = median(triageCold.map((r) => r.wallMs));
  console.log(`triage cold start (spawn to the answer of a signed click): median ${ms(triageColdMs)} ms`);

  // The cost-trend picture (docs/platform.md): a cold triage container answering GET /chart/<token>,
  // the platform on loopback, the owner record in the table: reading, drawing and the PNG.
  const chart = await measureChart(admin, tableName, environment, container);

  const coldOf = Object.fromEntries(kinds.map((kind) => [kind, coldFigures(cold[kind])])) as Record<Subject, ColdFigures>;
  // Each run against the one of the same round: load from elsewhere on the machine hits both alike.
  const pairedRatio = (a: Subject, b: Subject) => ratio(median(cold[a].map((run, i) => run.wallMs / cold[b][i]!.wallMs)), 1);
  const coldRatio = ratio(coldOf.relay.wallMs, coldOf['limit floor'].wallMs);
  const deployedColdRatio = ratio(coldOf['relay deployed'].wallMs, coldOf['deployed limit floor'].wallMs);
  const slackAppColdRatio = ratio(coldOf['relay Slack app'].wallMs, coldOf['Slack app limit floor'].wallMs);
  const memoryRatio = ratio(coldOf.relay.medianRssKiB, coldOf['limit floor'].medianRssKiB);

  // ------------------------------------------------------------ other functions: import only
  const otherFunctions = functions.filter((f) => f !== RELAY);
  const importSubjects: Record<string, string> =
    otherFunctions.length > 0
      ? {
          '(limit floor)': floorPath['limit floor'],
          '(SDK floor)': floorPath['SDK floor'],
          ...Object.fromEntries(otherFunctions.map((name) => [name, bundlePath(name)])),
        }
      : {};
  const importRuns: Record<string, ContainerRun[]> = Object.fromEntries(Object.keys(importSubjects).map((name) => [name, []]));
  const importNames = Object.keys(importSubjects);
  for (let round = 0; round < (importNames.length > 0 ? COLD_RUNS : 0); round++) {
    const shift = round % importNames.length;
    for (const name of [...importNames.slice(shift), ...importNames.slice(0, shift)]) {
      const bundle = importSubjects[name]!;
      const env = environment(bundle, { RELAY_CONFIG_SECRET_ID: basicSecret });
      importRuns[name]!.push((await container(['import', bundle], env)).run);
    }
  }
  const importOnly = Object.fromEntries(
    Object.entries(importRuns).map(([name, runs]) => [
      name,
      {
        wallMs: median(runs.map((r) => r.wallMs)),
        importMs: median(runs.map((r) => r.importMs)),
        medianRssKiB: median(runs.map((r) => r.maxRssKiB)),
        peakRssKiB: Math.max(...runs.map((r) => r.maxRssKiB)),
      },
    ]),
  );

  // ------------------------------------------------------------ warm
  // What the relay posts for the bench's alert, for the SDK floor to post the same.
  const relayMessage = JSON.stringify(formatSlackMessage(webhookMessageSchema.parse(JSON.parse(body))));
  const warmSubjects = {
    relay: { bundle: bundlePath(RELAY), env: {}, posts: true },
    'SDK floor': { bundle: floorPath['SDK floor'], env: {}, posts: true },
    'limit floor': { bundle: floorPath['limit floor'], env: {}, posts: true },
    // Its chat services answer in process: Slack sees none of its posts.
    'relay in process': { bundle: inProcessRelay, env: {}, posts: false },
    // The reference of the relay's own work: the floor's, its post answered at once.
    'SDK floor in process': { bundle: floorPath['SDK floor'], env: { BENCH_POST_IN_PROCESS: '1' }, posts: false },
    "SDK floor, relay's message": { bundle: floorPath['SDK floor'], env: { BENCH_CHAT_MESSAGE: relayMessage }, posts: true },
    // Only its SDK floor part posts.
    "relay's own work, then the SDK floor": { bundle: ownWorkThenPost, env: {}, posts: true },
  };
  type WarmSubject = keyof typeof warmSubjects;
  const warmOrder = Object.keys(warmSubjects) as WarmSubject[];
  console.log(
    `Warm: ${WARM_ROUNDS} rounds of ${warmOrder.join(', ')}, order rotated each round; ${WARM_DELIVERIES} sequential deliveries in each container after its first`,
  );
  const warmRun = async (what: WarmSubject) => {
    const { bundle, env, posts } = warmSubjects[what];
    const result = await container(['warm', bundle, basicEvent, WARM_DELIVERIES], relayEnvironment(bundle, basicResources, env));
    expectDelivered(`warm ${what}`, result.run, result.posts, posts ? WARM_DELIVERIES + 1 : 0);
    return result;
  };
  const warmRuns = Object.fromEntries(warmOrder.map((subject) => [subject, [] as ContainerRun[]])) as Record<WarmSubject, ContainerRun[]>;
  const relayWarmReads: number[] = [];
  for (let round = 0; round < WARM_ROUNDS; round++) {
    // Rotated, so that no subject always meets the loopback servers at their least warmed up.
    for (const subject of warmOrder.map((_, i) => warmOrder[(i + round) % warmOrder.length]!)) {
      const result = await warmRun(subject);
      warmRuns[subject].push(result.run);
      if (subject === 'relay') relayWarmReads.push(result.reads);
    }
  }
  /** Medians over the containers of each container's own figure. */
  const warmFigures = (runs: ContainerRun[]) => ({
    medianMs: median(runs.map((run) => median(run.durations!))),
    p99Ms: median(runs.map((run) => percentile(run.durations!, 99))),
    meanMs: median(runs.map((run) => run.durations!.reduce((a, b) => a + b, 0) / run.durations!.length)),
    totalMs: median(runs.map((run) => run.totalMs!)),
    peakRssKiB: Math.max(...runs.map((run) => run.maxRssKiB)),
    heapUsedAtEndKiB: Math.round(median(runs.map((run) => run.memory.heapUsed)) / 1024),
  });
  const warm = {
    relay: warmFigures(warmRuns.relay),
    'SDK floor': warmFigures(warmRuns['SDK floor']),
    'limit floor': warmFigures(warmRuns['limit floor']),
    'relay in process': warmFigures(warmRuns['relay in process']),
    'SDK floor in process': warmFigures(warmRuns['SDK floor in process']),
    "SDK floor, relay's message": warmFigures(warmRuns["SDK floor, relay's message"]),
    "relay's own work, then the SDK floor": warmFigures(warmRuns["relay's own work, then the SDK floor"]),
  };
  // Each container next to the other subject's of the same round: load from elsewhere hits both alike.
  const pairedWarm = (a: WarmSubject, b: WarmSubject) =>
    ratio(median(warmRuns[a].map((run, i) => median(run.durations!) / median(warmRuns[b][i]!.durations!))), 1);
  const OWN_WORK_THEN_POST = "relay's own work, then the SDK floor";
  // Information only: the SDK floor does none of the relay's work, so it is no budget's reference.
  const warmRatio = ratio(warm.relay.medianMs, warm['SDK floor'].medianMs);
  const pairedWarmRatio = pairedWarm('relay', 'SDK floor');
  const ownWorkUs = Math.round(warm['relay in process'].medianMs * 10_000) / 10;
  const floorWorkUs = Math.round(warm['SDK floor in process'].medianMs * 10_000) / 10;
  const ownWorkRatio = ratio(warm['relay in process'].medianMs, warm['SDK floor in process'].medianMs);
  const pairedOwnWorkRatio = pairedWarm('relay in process', 'SDK floor in process');
  const ownWorkPass = ownWorkRatio <= BUDGET.ownWorkRatio;
  const ownWorkThenPostRatio = ratio(warm.relay.medianMs, warm[OWN_WORK_THEN_POST].medianMs);
  const pairedOwnWorkThenPostRatio = pairedWarm('relay', OWN_WORK_THEN_POST);
  const ownWorkThenPostPass = ownWorkThenPostRatio <= BUDGET.warmRatioToOwnWorkThenPost;
  const warmRelay = { reads: Math.max(...relayWarmReads) };

  // ------------------------------------------------------------ Secrets Manager reads per TTL
  const ttlRun = await container(
    ['warm', bundlePath(RELAY), basicEvent, TTL_SCENARIO.deliveries, TTL_SCENARIO.intervalMs],
    relayEnvironment(bundlePath(RELAY), basicResources, { RELAY_CONFIG_TTL_SECONDS: String(TTL_SCENARIO.ttlSeconds) }),
  );
  expectDelivered('TTL scenario', ttlRun.run, ttlRun.posts, TTL_SCENARIO.deliveries + 1);
  // The first delivery reads; after that at most one read per expired TTL, and at least one per TTL that passed.
  const ttlPeriods = (ttlRun.run.totalMs! + ttlRun.run.firstInvokeMs!) / (TTL_SCENARIO.ttlSeconds * 1000);
  const ttlReadsPass = ttlRun.reads >= Math.floor(ttlPeriods) && ttlRun.reads <= 1 + Math.ceil(ttlPeriods);
  const configuredTtl = relayEnvironment(bundlePath(RELAY), basicResources)['RELAY_CONFIG_TTL_SECONDS'] ?? 'default';

  // ------------------------------------------------------------ SSO
  const now = Math.floor(Date.now() / 1000);
  const token = await signToken(signingKey, {
    iss: keys.issuer,
    sub: sso.clientId,
    cid: sso.clientId,
    scp: [sso.scope],
    nbf: now,
    jti: `bench-${now}`,
  });
  const ssoEvent = eventFile('sso', { 'content-type': 'application/json', authorization: `Bearer ${token}` });
  const ssoRun = await container(
    ['warm', bundlePath(RELAY), ssoEvent, WARM_DELIVERIES],
    relayEnvironment(bundlePath(RELAY), { RelayConfigSecret: ssoSecret }),
  );
  await keys.close();
  // Without SSO support the relay answers 503 before it asks the key server anything.
  const ssoSupported = !(ssoRun.run.firstStatus === 503 && keys.discoveryRequests() === 0);
  const ssoDelivered = ssoRun.run.firstStatus === 200;
  if (ssoDelivered) expectDelivered('SSO warm relay', ssoRun.run, ssoRun.posts, WARM_DELIVERIES + 1);
  const ssoFigures = ssoSupported
    ? {
        firstStatus: ssoRun.run.firstStatus,
        discoveryDownloads: keys.discoveryRequests(),
        keyDownloads: keys.jwksRequests(),
        ...(ssoDelivered ? warmFigures([ssoRun.run]) : { relayOutputTail: ssoRun.run.output.slice(-2_000) }),
      }
    : undefined;

  // ------------------------------------------------------------ report
  const coldReadsPass = coldReads.every((n) => n === 1);
  const warmReadsPass = warmRelay.reads === 1;
  const budgets = [
    {
      budget: `relay cold start <= ${BUDGET.coldRatio} x limit floor (median wall)`,
      value: coldRatio,
      pass: coldRatio <= BUDGET.coldRatio,
    },
    {
      budget: `deployed relay cold start <= ${BUDGET.deployedColdRatio} x deployed limit floor`,
      value: deployedColdRatio,
      pass: deployedColdRatio <= BUDGET.deployedColdRatio,
    },
    {
      budget: `Slack app relay with the table cold start <= ${BUDGET.slackAppColdRatio} x its limit floor`,
      value: slackAppColdRatio,
      pass: slackAppColdRatio <= BUDGET.slackAppColdRatio,
    },
    {
      budget: `relay peak memory <= ${BUDGET.peakMemoryRatio} x limit floor (median of cold maxRSS)`,
      value: memoryRatio,
      pass: memoryRatio <= BUDGET.peakMemoryRatio,
    },
    {
      budget: `chart picture cold (spawn to the PNG) <= ${BUDGET.chartColdMs} ms`,
      value: Number(ms(chart.coldMs)),
      pass: chart.coldMs <= BUDGET.chartColdMs,
    },
    {
      budget: `triage cold start (spawn to a signed click's answer) <= ${BUDGET.triageColdMs} ms`,
      value: Number(ms(triageColdMs)),
      pass: triageColdMs <= BUDGET.triageColdMs,
    },
    { budget: `relay cold path <= ${BUDGET.relayColdPathKiB} KiB`, value: Number(kib(relaySize.coldPathBytes)), pass: relayColdPathPass },
    {
      budget: `relay's own work <= ${BUDGET.ownWorkRatio} x the SDK floor's, both in process`,
      value: ownWorkRatio,
      pass: ownWorkPass,
    },
    {
      budget: `relay warm median <= ${BUDGET.warmRatioToOwnWorkThenPost} x own work then the SDK floor's post`,
      value: ownWorkThenPostRatio,
      pass: ownWorkThenPostPass,
    },
    { budget: 'Secrets Manager: one read per cold start', value: median(coldReads), pass: coldReadsPass },
    { budget: 'Secrets Manager: no read on the warm path', value: warmRelay.reads - 1, pass: warmReadsPass },
    { budget: 'Secrets Manager: one read per configuration TTL', value: ttlRun.reads, pass: ttlReadsPass },
    ...(ssoFigures
      ? [
          { budget: 'SSO: a valid token is delivered', value: ssoFigures.firstStatus ?? 0, pass: ssoDelivered },
          { budget: 'SSO: one discovery per container', value: ssoFigures.discoveryDownloads, pass: ssoFigures.discoveryDownloads === 1 },
          { budget: 'SSO: one key download per container', value: ssoFigures.keyDownloads, pass: ssoFigures.keyDownloads === 1 },
        ]
      : []),
  ];

  const coldRows = (subjects: Subject[]): Row[] => {
    const row = (figure: string, value: (f: ColdFigures) => string) => [figure, ...subjects.map((s) => value(coldOf[s]))];
    return [
      row('spawn -> first answer, median ms', (f) => ms(f.wallMs)),
      row('spawn -> first answer, p90 ms', (f) => ms(f.wallP90Ms)),
      row('import of the bundle, ms', (f) => ms(f.importMs)),
      row('first invocation, ms', (f) => ms(f.firstInvokeMs)),
      row('peak RSS, median of runs, MiB', (f) => mib(f.medianRssKiB)),
      row('peak RSS, max of runs, MiB', (f) => mib(f.peakRssKiB)),
    ];
  };
  const withRatios = (rows: Row[], pairs: Array<[number, number]>): Row[] =>
    rows.map((row) => [...row, ...pairs.map(([a, b]) => String(ratio(Number(row[a]), Number(row[b]))))]);

  console.log(`\nCold start, basic configuration (median of ${COLD_RUNS}; wall = spawn of a fresh node process until the first answer)`);
  printTable(
    ['figure', 'relay', 'limit floor', 'SDK floor', 'relay/limit', 'relay/SDK'],
    [
      ...withRatios(coldRows(['relay', 'limit floor', 'SDK floor']), [
        [1, 2],
        [1, 3],
      ]),
      [
        'spawn -> first answer, median of per-round ratios',
        '',
        '',
        '',
        String(pairedRatio('relay', 'limit floor')),
        String(pairedRatio('relay', 'SDK floor')),
      ],
    ],
  );
  console.log(
    `  budgets: cold start relay/limit <= ${BUDGET.coldRatio} ${verdict(coldRatio <= BUDGET.coldRatio)}; ` +
      `peak RSS (median) relay/limit <= ${BUDGET.peakMemoryRatio} ${verdict(memoryRatio <= BUDGET.peakMemoryRatio)}`,
  );

  console.log(`\nCold start, deployed configuration: dedup table and queues set, each run a new alert (median of ${COLD_RUNS})`);
  printTable(
    ['figure', 'relay deployed', 'deployed limit floor', 'deployed/limit'],
    [
      ...withRatios(coldRows(['relay deployed', 'deployed limit floor']), [[1, 2]]),
      ['spawn -> first answer, median of per-round ratios', '', '', String(pairedRatio('relay deployed', 'deployed limit floor'))],
      ['dedup table calls per delivery (claim and anomaly together, then record)', String(median(deployedTableCalls)), '2', ''],
    ],
  );
  console.log(
    `  budget: cold start deployed/limit <= ${BUDGET.deployedColdRatio} ${verdict(deployedColdRatio <= BUDGET.deployedColdRatio)}`,
  );

  console.log(`\nCold start, a Slack app destination with the table, each run a new anomaly (median of ${COLD_RUNS})`);
  printTable(
    ['figure', 'relay Slack app', 'Slack app limit floor', 'app/limit'],
    [
      ...withRatios(coldRows(['relay Slack app', 'Slack app limit floor']), [[1, 2]]),
      ['spawn -> first answer, median of per-round ratios', '', '', String(pairedRatio('relay Slack app', 'Slack app limit floor'))],
      ['dedup table calls per delivery (two round trips, as the floor)', String(median(appTableCalls)), '2', ''],
    ],
  );
  console.log(`  budget: cold start app/limit <= ${BUDGET.slackAppColdRatio} ${verdict(slackAppColdRatio <= BUDGET.slackAppColdRatio)}`);

  console.log(`\nOther functions: import only (median of ${COLD_RUNS}; wall = spawn until the import finished)`);
  if (otherFunctions.length > 0) {
    const floorImport = importOnly['(limit floor)']!;
    printTable(
      ['function', 'spawn -> imported, ms', 'import, ms', 'import / limit floor import', 'peak RSS median, MiB'],
      Object.entries(importOnly).map(
        ([name, f]): Row => [name, ms(f.wallMs), ms(f.importMs), String(ratio(f.importMs, floorImport.importMs)), mib(f.medianRssKiB)],
      ),
    );
  }
  for (const name of missing.filter((n) => n !== RELAY)) console.log(`  ${name}: n/a (not built yet)`);

  console.log(
    `\nWarm (${WARM_ROUNDS} containers each, ${WARM_DELIVERIES} sequential deliveries in each, loopback Slack; medians over the containers)`,
  );
  const warmRow = (figure: string, value: (f: ReturnType<typeof warmFigures>) => number, format: (n: number) => string): Row => [
    figure,
    format(value(warm.relay)),
    format(value(warm['SDK floor'])),
    format(value(warm['limit floor'])),
    String(ratio(value(warm.relay), value(warm['SDK floor']))),
    String(ratio(value(warm.relay), value(warm['limit floor']))),
  ];
  printTable(
    ['figure', 'relay', 'SDK floor', 'limit floor', 'relay/SDK', 'relay/limit'],
    [
      warmRow('median per delivery, ms', (f) => f.medianMs, ms),
      ['  median of paired ratios (same round)', '', '', '', String(pairedWarmRatio), ''],
      warmRow('p99 per delivery, ms', (f) => f.p99Ms, ms),
      warmRow('mean per delivery, ms', (f) => f.meanMs, ms),
      warmRow('peak RSS after the run (max of containers), MiB', (f) => f.peakRssKiB, mib),
    ],
  );
  console.log("  relay/SDK and relay/limit are information, not budgets: neither floor does any of the relay's work");
  const ownWork = warm['relay in process'];
  const floorPost = warm['SDK floor'].medianMs;
  const sameMessage = warm["SDK floor, relay's message"].medianMs;
  const ownWorkThenFloor = warm[OWN_WORK_THEN_POST];
  console.log(`\nWarm: the relay's own work (same containers and rounds as above)`);
  printTable(
    ['figure', 'median', 'mean', 'budget'],
    [
      ["relay's own work, chat in process, µs", us(ownWork.medianMs), us(ownWork.meanMs), ''],
      ["the SDK floor's own work, post in process, µs", String(floorWorkUs), us(warm['SDK floor in process'].meanMs), ''],
      ["relay's own work / the SDK floor's", String(ownWorkRatio), '', `<= ${BUDGET.ownWorkRatio} ${verdict(ownWorkPass)}`],
      ['  median of paired ratios (same round)', String(pairedOwnWorkRatio), '', ''],
      ["own work then the SDK floor's post, ms", ms(ownWorkThenFloor.medianMs), ms(ownWorkThenFloor.meanMs), ''],
      [
        "relay / own work then the SDK floor's post",
        String(ownWorkThenPostRatio),
        '',
        `<= ${BUDGET.warmRatioToOwnWorkThenPost} ${verdict(ownWorkThenPostPass)}`,
      ],
      ['  median of paired ratios (same round)', String(pairedOwnWorkThenPostRatio), '', ''],
      ['own work between network waits (own work then post - SDK floor), µs', us(ownWorkThenFloor.medianMs - floorPost), '', ''],
      ['relay - SDK floor, µs', us(warm.relay.medianMs - floorPost), '', ''],
      [
        `SDK floor posting the relay's ${kib(Buffer.byteLength(relayMessage))} KiB message, ms`,
        ms(sameMessage),
        ms(warm["SDK floor, relay's message"].meanMs),
        '',
      ],
      ['  / the SDK floor posting the raw body', String(ratio(sameMessage, floorPost)), '', ''],
    ],
  );

  console.log('\nCalls to dependencies (counted by a proxy in front of moto_server and by the loopback key server)');
  printTable(
    ['scenario', 'calls', 'budget'],
    [
      ['Secrets Manager reads per cold start (median)', String(median(coldReads)), `1 ${verdict(coldReadsPass)}`],
      [
        `Secrets Manager reads over 1 + ${WARM_DELIVERIES} deliveries, TTL ${configuredTtl} s (most of any container)`,
        String(warmRelay.reads),
        `1 (none warm) ${verdict(warmReadsPass)}`,
      ],
      [
        `Secrets Manager reads, ${TTL_SCENARIO.deliveries + 1} deliveries over ${(ttlPeriods * TTL_SCENARIO.ttlSeconds).toFixed(1)} s, TTL ${TTL_SCENARIO.ttlSeconds} s`,
        String(ttlRun.reads),
        `one per TTL (${Math.floor(ttlPeriods)}..${1 + Math.ceil(ttlPeriods)}) ${verdict(ttlReadsPass)}`,
      ],
      ...(ssoFigures
        ? ([
            [
              `SSO discovery downloads over 1 + ${WARM_DELIVERIES} deliveries`,
              String(ssoFigures.discoveryDownloads),
              `1 ${verdict(ssoFigures.discoveryDownloads === 1)}`,
            ],
            [
              `SSO key downloads over 1 + ${WARM_DELIVERIES} deliveries`,
              String(ssoFigures.keyDownloads),
              `1 ${verdict(ssoFigures.keyDownloads === 1)}`,
            ],
            'medianMs' in ssoFigures
              ? ['SSO warm median / p99 per delivery, ms', `${ms(ssoFigures.medianMs)} / ${ms(ssoFigures.p99Ms)}`, '']
              : ['SSO delivery with the bench token', `answered ${ssoFigures.firstStatus}`, 'expected 200 FAIL (see bench/results.json)'],
          ] satisfies Row[])
        : ([['SSO discovery and key downloads', 'n/a (no SSO support in this build)', '']] satisfies Row[])),
    ],
  );

  console.log('\nBudgets');
  printTable(
    ['budget', 'value', 'verdict'],
    budgets.map((b): Row => [b.budget, String(b.value), verdict(b.pass)]),
  );
  const failed = budgets.filter((b) => !b.pass);
  console.log(
    failed.length === 0
      ? `\nAll ${budgets.length} budgets pass.`
      : `\n${failed.length} of ${budgets.length} budgets FAIL: ${failed.map((b) => `${b.budget} (${b.value})`).join('; ')}`,
  );

  return {
    measuredAt: new Date().toISOString(),
    environment: {
      orchestratorNode: process.version,
      containerNode: childNode,
      containerNodeArgs: runtime.nodeArgs,
      memoryMb: MEMORY_MB,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpus().length,
    },
    settings: { coldRuns: COLD_RUNS, warmRounds: WARM_ROUNDS, warmDeliveries: WARM_DELIVERIES, ttlScenario: TTL_SCENARIO },
    bundles: sizes,
    functionsNotBuilt: missing,
    coldStart: {
      basic: {
        relay: coldOf.relay,
        limitFloor: coldOf['limit floor'],
        sdkFloor: coldOf['SDK floor'],
        ratioToLimitFloor: coldRatio,
        ratioToSdkFloor: ratio(coldOf.relay.wallMs, coldOf['SDK floor'].wallMs),
        pairedRatioToLimitFloor: pairedRatio('relay', 'limit floor'),
        pairedRatioToSdkFloor: pairedRatio('relay', 'SDK floor'),
        peakRssRatioToLimitFloor: memoryRatio,
        readsPerColdStart: coldReads,
      },
      deployed: {
        relay: coldOf['relay deployed'],
        limitFloor: coldOf['deployed limit floor'],
        ratioToLimitFloor: deployedColdRatio,
        pairedRatioToLimitFloor: pairedRatio('relay deployed', 'deployed limit floor'),
        tableCallsPerDelivery: median(deployedTableCalls),
      },
      slackApp: {
        relay: coldOf['relay Slack app'],
        limitFloor: coldOf['Slack app limit floor'],
        ratioToLimitFloor: slackAppColdRatio,
        pairedRatioToLimitFloor: pairedRatio('relay Slack app', 'Slack app limit floor'),
        tableCallsPerDelivery: median(appTableCalls),
      },
    },
    importOnly,
    chart,
    warm: {
      relay: warm.relay,
      sdkFloor: warm['SDK floor'],
      limitFloor: warm['limit floor'],
      relayInProcess: warm['relay in process'],
      sdkFloorWithRelayMessage: warm["SDK floor, relay's message"],
      ownWorkThenSdkFloor: warm["relay's own work, then the SDK floor"],
      ownWorkMedianUs: ownWorkUs,
      floorOwnWorkMedianUs: floorWorkUs,
      ownWorkRatio,
      ratioToOwnWorkThenSdkFloor: ownWorkThenPostRatio,
      pairedRatioToOwnWorkThenSdkFloor: pairedOwnWorkThenPostRatio,
      ratioToSdkFloor: warmRatio,
      pairedRatioToSdkFloor: pairedWarmRatio,
    },
    dependencyCalls: {
      secretsManagerReads: { warmRun: warmRelay.reads, ttlScenario: { reads: ttlRun.reads, ttlPeriods } },
      sso: ssoFigures ?? { notApplicable: 'no SSO support in this build: auth.method "sso" answered 503 without asking the key server' },
    },
    budgets,
    failedBudgets: failed.map((b) => b.budget),
  };
}

/**
 * The picture's cold answer, a median over COLD_RUNS containers (each asks for another day, so
 * none finds the series kept by one before), and what its path adds to the triage bundle.
 */
async function measureChart(
  admin: SecretsManagerClient,
  tableName: string,
  environment: (bundle: string, functionEnv: Record<string, string>) => Record<string, string>,
  container: (args: ChildArgs, env: Record<string, string>) => Promise<{ run: ContainerRun }>,
) {
  const platform = await startFakePlatform();
  const account = '123456789012';
  const key = randomBytes(32).toString('hex');
  const secret = async (name: string, value: string) => {
    const id = `bench-${name}-${Date.now()}`;
    await admin.send(new CreateSecretCommand({ Name: id, SecretString: value }));
    return id;
  };
  const awsAdmin = { endpoint: moto.url, region: LAMBDA_REGION, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
  const now = Math.floor(Date.now() / 1000);
  // As directory-sync writes an owner record: the cost centers that cover the account, per payer.
  const costCenter = { M: { id: { S: 'cc-1' }, name: { S: 'Data' } } };
  await new DynamoDBClient(awsAdmin).send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        id: { S: `owner#${account}` },
        costCenters: { L: [costCenter] },
        readAt: { N: String(now) },
        expiresAt: { N: String(now + 86_400) },
        payers: { M: { '12345': { M: { costCenters: { L: [costCenter] }, readAt: { N: String(now) } } } } },
      },
    }),
  );
  const configId = await secret(
    'chart-config',
    JSON.stringify({
      auth: { method: 'none' },
      destinations: { default: { url: 'https://hooks.slack.com/services/T0/B0/x' } },
      platform: { trend: true },
    }),
  );
  const env = {
    RELAY_CONFIG_SECRET_ID: configId,
    DEDUP_TABLE_NAME: tableName,
    TRIAGE_KEY_SECRET_ID: await secret('chart-key', key),
    COST_API_BASE_URL: platform.url,
    COST_API_CREDENTIALS_SECRET_ID: await secret(
      'chart-login',
      JSON.stringify({ username: platform.username, password: platform.password }),
    ),
  };
  const runs: ContainerRun[] = [];
  try {
    for (let round = 0; round < COLD_RUNS; round++) {
      const day = new Date(Date.UTC(2026, 0, 1 + round)).toISOString().slice(0, 10);
      platform.dailyCosts.set(
        account,
        new Map(
          Array.from({ length: 30 }, (_, i) => [
            new Date(Date.UTC(2026, 0, round + i - 28)).toISOString().slice(0, 10),
            100 + ((i * 37) % 50),
          ]),
        ),
      );
      const token = signChartToken(key, { a: account, d: day, n: 'Bench account' }, Date.now());
      const file = join(out, 'chart.event.json');
      writeFileSync(file, JSON.stringify(httpApiEvent({ method: 'GET', path: `/chart/${token}`, headers: {} })));
      const bundle = bundlePath('triage');
      const { run } = await container(['cold', bundle, file], environment(bundle, env));
      if (run.firstStatus !== 200) throw new Error(`cold chart: answered ${run.firstStatus}\n${run.output}`);
      runs.push(run);
    }
  } finally {
    await platform.close();
  }
  // What the picture's path loads beyond the triage function's cold path: its chunks, the wasm and the fonts.
  const folder = join(distDir, 'triage');
  const pathFiles = readdirSync(folder).filter((f) => /^lazy-(trend|chart-render)\.mjs$|\.wasm$|\.ttf$/.test(f));
  const pathBytes = pathFiles.reduce((sum, f) => sum + statSync(join(folder, f)).size, 0);
  const coldMs = median(runs.map((r) => r.wallMs));
  const figures = {
    coldMs,
    firstInvokeMs: median(runs.map((r) => r.firstInvokeMs ?? 0)),
    medianRssKiB: median(runs.map((r) => r.maxRssKiB)),
    pathKiB: Number(kib(pathBytes)),
    pathFiles,
  };
  console.log(
    `chart picture cold (spawn to the PNG, platform on loopback): median ${ms(coldMs)} ms, first invocation ${ms(figures.firstInvokeMs)} ms, ` +
      `peak RSS ${Math.round(figures.medianRssKiB / 1024)} MiB; its path adds ${figures.pathKiB} KiB (${pathFiles.join(', ')})`,
  );
  return figures;
}
