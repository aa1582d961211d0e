// npm run bench: bundle sizes, cold start and warm latency of the relay next to a floor, and the
// calls the relay makes to its dependencies. Prints a table and writes bench/results.json.
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleOptions } from '../scripts/esbuild-options.mjs';
import { httpApiEvent } from '../scripts/http-api-event.js';
import { motoAvailable, startMoto } from '../test/helpers/moto.js';
import { startFakeSlack, type FakeSlack } from '../test/helpers/slack-server.js';
import { runContainer, type ChildArgs, type ContainerRun } from './containers.js';
import { startCountingProxy, startKeyServer, type CountingProxy, type KeyServer } from './dependencies.js';
import { bundleSize, type BundleSize } from './sizes.js';
import { median, percentile } from './stats.js';
import { printTable, type Row } from './table.js';

// The benchmark's own client (creating secrets) runs on whatever Node runs the benchmark.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out');
// Odd, so that the median is one real run; 21 keeps a noisy shared machine's median steady.
const COLD_RUNS = Math.max(1, Number(process.env['BENCH_COLD_RUNS'] ?? 21));
const WARM_DELIVERIES = Math.max(1, Number(process.env['BENCH_WARM_DELIVERIES'] ?? 2000));
/** The TTL scenario: deliveries spaced out so that a 1 s configuration TTL expires a few times. */
const TTL_SCENARIO = { ttlSeconds: 1, deliveries: 30, intervalMs: 100 };
/** Functions the contract names; the ones not built yet get a note instead of figures. */
const EXPECTED_FUNCTIONS = ['webhook-relay', 'api-key-rotation', 'delivery-retry'];
const RELAY = 'webhook-relay';
const GET_SECRET = 'secretsmanager.GetSecretValue';
const BUDGET = { coldRatio: 1.15, peakMemoryMiB: 96, relayBundleKiB: 600, warmRatio: 1.2 };

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);
const mib = (kibibytes: number) => (kibibytes / 1024).toFixed(1);
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
const verdict = (pass: boolean) => (pass ? 'pass' : 'FAIL');

// ---------------------------------------------------------------- bundles, and the floor's
const distDir = join(root, 'dist');
const functions = readdirSync(distDir)
  .filter((name) => existsSync(join(distDir, name, 'index.mjs')))
  .sort((a, b) => Number(b === RELAY) - Number(a === RELAY) || a.localeCompare(b));
if (!functions.includes(RELAY)) throw new Error('dist/webhook-relay/index.mjs is missing: run `npm run build` first');
const bundlePath = (name: string) => join(distDir, name, 'index.mjs');
const missing = EXPECTED_FUNCTIONS.filter((name) => !functions.includes(name));

mkdirSync(join(out, 'floor'), { recursive: true });
const floorBuild = await build(bundleOptions(join(root, 'bench', 'floor', 'handler.ts'), join(out, 'floor', 'index.mjs')));
writeFileSync(join(out, 'floor', 'meta.json'), JSON.stringify(floorBuild.metafile));
const floorPath = join(out, 'floor', 'index.mjs');

const sizes: Record<string, BundleSize> = Object.fromEntries(
  functions.map((name) => [name, bundleSize(join(distDir, name), join(distDir, 'meta', `${name}.json`))]),
);
sizes['(floor)'] = bundleSize(join(out, 'floor'), join(out, 'floor', 'meta.json'));
const relayBundlePass = sizes[RELAY]!.rawBytes <= BUDGET.relayBundleKiB * 1024;

console.log('\nBundles (minified ESM, AWS SDK included; "AWS SDK" = @aws-sdk, @smithy, @aws-crypto, @aws inputs)');
printTable(
  ['function', 'raw KiB', 'gzip KiB', 'AWS SDK KiB', 'SDK share', 'largest non-SDK parts', 'budget'],
  Object.entries(sizes).map(([name, size]): Row => [
    name,
    kib(size.rawBytes),
    kib(size.gzipBytes),
    kib(size.sdkBytes),
    `${Math.round((size.sdkBytes / size.rawBytes) * 100)}%`,
    size.largest
      .filter((part) => !/^@(aws-sdk|smithy|aws-crypto|aws)\//.test(part.from))
      .slice(0, 3)
      .map((part) => `${part.from} ${kib(part.bytes)}`)
      .join(', '),
    name === RELAY ? `<= ${BUDGET.relayBundleKiB} KiB ${verdict(relayBundlePass)}` : '',
  ]),
);
for (const name of missing) console.log(`  ${name}: not built yet (no functions/${name}/handler.ts in this build); no figures`);

if (!motoAvailable()) {
  console.error("\nmoto_server is not installed (pip install 'moto[server]'); it plays Secrets Manager for the timings.");
  process.exit(1);
}

// ---------------------------------------------------------------- dependencies on loopback
const moto = await startMoto();
let proxy: CountingProxy | undefined;
let slack: FakeSlack | undefined;
let keys: KeyServer | undefined;
try {
  proxy = await startCountingProxy(moto.url);
  slack = await startFakeSlack();
  keys = await startKeyServer();
  const results = await measure(proxy, slack, keys);
  writeFileSync(join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('\nwrote bench/results.json');
} finally {
  await Promise.allSettled([slack?.close(), proxy?.close(), keys?.close()]);
  await moto.stop();
}

async function measure(proxy: CountingProxy, slack: FakeSlack, keys: KeyServer) {
  const admin = new SecretsManagerClient({
    endpoint: moto.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
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
  const sso = { issuer: keys.issuer, clientId: 'bench-client', scope: 'cost-alerts' };
  const ssoSecret = await createSecret('sso', { auth: { method: 'sso', sso }, destinations: { default: { url: slack.url(slackPath) } } });

  const body = readFileSync(join(root, 'events', 'anomaly-alert.json'), 'utf8');
  const eventFile = (name: string, headers: Record<string, string>) => {
    const file = join(out, `${name}.event.json`);
    writeFileSync(file, JSON.stringify(httpApiEvent({ headers: { 'content-type': 'application/json', ...headers }, body })));
    return file;
  };
  const basicEvent = eventFile('basic', {
    authorization: `Basic ${Buffer.from(`relay:${password}`).toString('base64')}`,
    'x-channel-token': channelToken,
  });
  const ssoEvent = eventFile('sso', { authorization: `Bearer ${keys.token(sso)}` });

  const environment = (secretId: string, extra: Record<string, string> = {}) => ({
    AWS_ENDPOINT_URL: proxy.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    RELAY_CONFIG_SECRET_ID: secretId,
    ...extra,
  });

  /** One container, with the Secrets Manager reads and Slack posts it caused. */
  const container = async (args: ChildArgs, env: Record<string, string>) => {
    proxy.reset();
    slack.reset();
    const run = await runContainer(args, env);
    return { run, reads: proxy.count(GET_SECRET), posts: slack.accepted().length };
  };
  const expectDelivered = (what: string, run: ContainerRun, posts: number, expected: number) => {
    const statuses = run.statuses ?? { [String(run.firstStatus)]: 1 };
    const others = Object.keys(statuses).filter((status) => status !== '200');
    if (run.firstStatus !== 200 || others.length > 0 || posts !== expected) {
      throw new Error(`${what}: expected ${expected} deliveries answered 200, got statuses ${JSON.stringify(statuses)} and ${posts} Slack posts\n${run.output}`);
    }
  };

  // ------------------------------------------------------------ cold start, interleaved
  console.log(`\nCold start: ${COLD_RUNS} fresh processes each, relay and floor interleaved, one delivery each`);
  const cold = { relay: [] as ContainerRun[], floor: [] as ContainerRun[] };
  const coldReads = { relay: [] as number[], floor: [] as number[] };
  for (let i = 0; i < COLD_RUNS; i++) {
    const order: Array<'relay' | 'floor'> = i % 2 === 0 ? ['relay', 'floor'] : ['floor', 'relay'];
    for (const kind of order) {
      const { run, reads, posts } = await container(['cold', kind === 'relay' ? bundlePath(RELAY) : floorPath, basicEvent], environment(basicSecret));
      expectDelivered(`cold ${kind}`, run, posts, 1);
      cold[kind].push(run);
      coldReads[kind].push(reads);
    }
  }
  const coldFigures = (runs: ContainerRun[]) => ({
    wallMs: median(runs.map((r) => r.wallMs)),
    wallP90Ms: percentile(runs.map((r) => r.wallMs), 90),
    importMs: median(runs.map((r) => r.importMs)),
    firstInvokeMs: median(runs.map((r) => r.firstInvokeMs!)),
    peakRssKiB: Math.max(...runs.map((r) => r.maxRssKiB)),
    medianRssKiB: median(runs.map((r) => r.maxRssKiB)),
  });
  const coldRelay = coldFigures(cold.relay);
  const coldFloor = coldFigures(cold.floor);
  const coldRatio = ratio(coldRelay.wallMs, coldFloor.wallMs);
  // Each relay run next to the floor run beside it: load from elsewhere on the machine hits both alike.
  const pairedColdRatio = ratio(median(cold.relay.map((run, i) => run.wallMs / cold.floor[i]!.wallMs)), 1);

  // ------------------------------------------------------------ the deployed configuration
  // As the stack runs it: dedup table and both queues set. Each run sends another alert (its own
  // timestamp), or the table would rightly call it a repeat and skip the post.
  const awsAdmin = { endpoint: moto.url, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
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
  const deployedEnv = environment(basicSecret, {
    DEDUP_TABLE_NAME: tableName,
    DELIVERY_QUEUE_URL: await queueUrl('bench-deliveries'),
    DEAD_LETTER_QUEUE_URL: await queueUrl('bench-undelivered'),
  });
  const deployed = { relay: [] as ContainerRun[], tableCalls: [] as number[] };
  for (let i = 0; i < COLD_RUNS; i++) {
    const message = JSON.parse(body) as { metadata: Record<string, string> };
    message.metadata['timestamp'] = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
    const file = join(out, `deployed-${i}.event.json`);
    writeFileSync(
      file,
      JSON.stringify(
        httpApiEvent({
          headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`relay:${password}`).toString('base64')}`, 'x-channel-token': channelToken },
          body: JSON.stringify(message),
        }),
      ),
    );
    const { run, posts } = await container(['cold', bundlePath(RELAY), file], deployedEnv);
    expectDelivered('cold relay, deployed configuration', run, posts, 1);
    deployed.relay.push(run);
    deployed.tableCalls.push(proxy.count('DynamoDB_20120810.PutItem') + proxy.count('DynamoDB_20120810.DeleteItem'));
  }
  const coldDeployed = coldFigures(deployed.relay);

  // ------------------------------------------------------------ other functions: import only
  const importFigures = (runs: ContainerRun[]) => ({
    wallMs: median(runs.map((r) => r.wallMs)),
    importMs: median(runs.map((r) => r.importMs)),
    peakRssKiB: Math.max(...runs.map((r) => r.maxRssKiB)),
  });
  const importRuns = async (bundle: string) => {
    const runs: ContainerRun[] = [];
    for (let i = 0; i < COLD_RUNS; i++) runs.push((await container(['import', bundle], environment(basicSecret))).run);
    return importFigures(runs);
  };
  const otherFunctions = functions.filter((f) => f !== RELAY);
  const importOnly: Record<string, ReturnType<typeof importFigures>> = {};
  if (otherFunctions.length > 0) {
    importOnly['(floor)'] = await importRuns(floorPath);
    for (const name of otherFunctions) importOnly[name] = await importRuns(bundlePath(name));
  }

  // ------------------------------------------------------------ warm
  console.log(`Warm: ${WARM_DELIVERIES} sequential deliveries in one process after its first, relay and floor`);
  const warmFloor = await container(['warm', floorPath, basicEvent, WARM_DELIVERIES], environment(basicSecret));
  expectDelivered('warm floor', warmFloor.run, warmFloor.posts, WARM_DELIVERIES + 1);
  const warmRelay = await container(['warm', bundlePath(RELAY), basicEvent, WARM_DELIVERIES], environment(basicSecret));
  expectDelivered('warm relay', warmRelay.run, warmRelay.posts, WARM_DELIVERIES + 1);
  const warmFigures = (run: ContainerRun) => ({
    medianMs: median(run.durations!),
    p99Ms: percentile(run.durations!, 99),
    meanMs: run.durations!.reduce((a, b) => a + b, 0) / run.durations!.length,
    totalMs: run.totalMs!,
    peakRssKiB: run.maxRssKiB,
    heapUsedAtEndKiB: Math.round(run.memory.heapUsed / 1024),
  });
  const warm = { relay: warmFigures(warmRelay.run), floor: warmFigures(warmFloor.run) };
  const warmRatio = ratio(warm.relay.medianMs, warm.floor.medianMs);

  // ------------------------------------------------------------ Secrets Manager reads per TTL
  const ttlRun = await container(
    ['warm', bundlePath(RELAY), basicEvent, TTL_SCENARIO.deliveries, TTL_SCENARIO.intervalMs],
    environment(basicSecret, { RELAY_CONFIG_TTL_SECONDS: String(TTL_SCENARIO.ttlSeconds) }),
  );
  expectDelivered('TTL scenario', ttlRun.run, ttlRun.posts, TTL_SCENARIO.deliveries + 1);
  // The first delivery reads; after that at most one read per expired TTL, and at least one per TTL that passed.
  const ttlPeriods = (ttlRun.run.totalMs! + ttlRun.run.firstInvokeMs!) / (TTL_SCENARIO.ttlSeconds * 1000);
  const ttlReadsPass = ttlRun.reads >= Math.floor(ttlPeriods) && ttlRun.reads <= 1 + Math.ceil(ttlPeriods);

  // ------------------------------------------------------------ SSO
  keys.reset();
  const ssoRun = await container(['warm', bundlePath(RELAY), ssoEvent, WARM_DELIVERIES], environment(ssoSecret));
  // Without SSO support the relay answers 503 before it asks the key server anything.
  const ssoSupported = !(ssoRun.run.firstStatus === 503 && keys.discoveryDownloads() === 0);
  const ssoDelivered = ssoRun.run.firstStatus === 200;
  if (ssoDelivered) expectDelivered('SSO warm relay', ssoRun.run, ssoRun.posts, WARM_DELIVERIES + 1);
  const ssoFigures = ssoSupported
    ? {
        firstStatus: ssoRun.run.firstStatus,
        discoveryDownloads: keys.discoveryDownloads(),
        keyDownloads: keys.keyDownloads(),
        ...(ssoDelivered ? warmFigures(ssoRun.run) : { relayOutputTail: ssoRun.run.output.slice(-2_000) }),
      }
    : undefined;

  // ------------------------------------------------------------ report
  const peakRssKiB = Math.max(coldRelay.peakRssKiB, warm.relay.peakRssKiB, ssoRun.run.maxRssKiB);
  const coldReadsPass = coldReads.relay.every((n) => n === 1);
  const warmReadsPass = warmRelay.reads === 1;
  const budgets = [
    { budget: `relay cold start <= ${BUDGET.coldRatio} x floor`, value: coldRatio, pass: coldRatio <= BUDGET.coldRatio },
    { budget: `peak memory <= ${BUDGET.peakMemoryMiB} MiB`, value: Number(mib(peakRssKiB)), pass: peakRssKiB <= BUDGET.peakMemoryMiB * 1024 },
    { budget: `relay bundle <= ${BUDGET.relayBundleKiB} KiB`, value: Number(kib(sizes[RELAY]!.rawBytes)), pass: relayBundlePass },
    { budget: `warm median <= ${BUDGET.warmRatio} x floor`, value: warmRatio, pass: warmRatio <= BUDGET.warmRatio },
    { budget: 'Secrets Manager: one read per cold start', value: median(coldReads.relay), pass: coldReadsPass },
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

  console.log(`\nCold start (median of ${COLD_RUNS}; wall = spawn of a fresh node process until the first answer)`);
  printTable(
    ['figure', 'relay', 'floor', 'relay/floor', 'budget'],
    [
      ['spawn -> first answer, ms', ms(coldRelay.wallMs), ms(coldFloor.wallMs), String(coldRatio), `<= ${BUDGET.coldRatio} ${verdict(coldRatio <= BUDGET.coldRatio)}`],
      ['  median of paired ratios', '', '', String(pairedColdRatio), ''],
      ['  p90, ms', ms(coldRelay.wallP90Ms), ms(coldFloor.wallP90Ms), String(ratio(coldRelay.wallP90Ms, coldFloor.wallP90Ms)), ''],
      ['import of the bundle, ms', ms(coldRelay.importMs), ms(coldFloor.importMs), String(ratio(coldRelay.importMs, coldFloor.importMs)), ''],
      ['first invocation, ms', ms(coldRelay.firstInvokeMs), ms(coldFloor.firstInvokeMs), String(ratio(coldRelay.firstInvokeMs, coldFloor.firstInvokeMs)), ''],
      ['peak RSS (max of runs), MiB', mib(coldRelay.peakRssKiB), mib(coldFloor.peakRssKiB), String(ratio(coldRelay.peakRssKiB, coldFloor.peakRssKiB)), `<= ${BUDGET.peakMemoryMiB} ${verdict(coldRelay.peakRssKiB <= BUDGET.peakMemoryMiB * 1024)}`],
    ],
  );

  console.log(`\nDeployed configuration: dedup table and queues set (median of ${COLD_RUNS} cold starts, each a new alert)`);
  printTable(
    ['figure', 'relay deployed', 'relay basic', 'floor', 'deployed/floor', 'deployed/basic'],
    [
      ['spawn -> first answer, ms', ms(coldDeployed.wallMs), ms(coldRelay.wallMs), ms(coldFloor.wallMs), String(ratio(coldDeployed.wallMs, coldFloor.wallMs)), String(ratio(coldDeployed.wallMs, coldRelay.wallMs))],
      ['first invocation, ms', ms(coldDeployed.firstInvokeMs), ms(coldRelay.firstInvokeMs), ms(coldFloor.firstInvokeMs), String(ratio(coldDeployed.firstInvokeMs, coldFloor.firstInvokeMs)), String(ratio(coldDeployed.firstInvokeMs, coldRelay.firstInvokeMs))],
      ['peak RSS (max of runs), MiB', mib(coldDeployed.peakRssKiB), mib(coldRelay.peakRssKiB), mib(coldFloor.peakRssKiB), String(ratio(coldDeployed.peakRssKiB, coldFloor.peakRssKiB)), ''],
      ['dedup table calls per delivery (claim + record)', String(median(deployed.tableCalls)), '0', '0', '', ''],
    ],
  );

  console.log(`\nOther functions: import only (median of ${COLD_RUNS}; wall = spawn until the import finished)`);
  if (otherFunctions.length > 0) {
    const floorImport = importOnly['(floor)']!;
    printTable(
      ['function', 'spawn -> imported, ms', 'import, ms', 'import / floor import', 'peak RSS, MiB'],
      Object.entries(importOnly).map(([name, f]): Row => [name, ms(f.wallMs), ms(f.importMs), String(ratio(f.importMs, floorImport.importMs)), mib(f.peakRssKiB)]),
    );
  }
  for (const name of missing.filter((n) => n !== RELAY)) console.log(`  ${name}: n/a (not built yet)`);

  console.log(`\nWarm (${WARM_DELIVERIES} sequential deliveries in one process, loopback Slack)`);
  printTable(
    ['figure', 'relay', 'floor', 'relay/floor', 'budget'],
    [
      ['median per delivery, ms', ms(warm.relay.medianMs), ms(warm.floor.medianMs), String(warmRatio), `<= ${BUDGET.warmRatio} ${verdict(warmRatio <= BUDGET.warmRatio)}`],
      ['p99 per delivery, ms', ms(warm.relay.p99Ms), ms(warm.floor.p99Ms), String(ratio(warm.relay.p99Ms, warm.floor.p99Ms)), ''],
      ['mean per delivery, ms', ms(warm.relay.meanMs), ms(warm.floor.meanMs), String(ratio(warm.relay.meanMs, warm.floor.meanMs)), ''],
      ['peak RSS after the run, MiB', mib(warm.relay.peakRssKiB), mib(warm.floor.peakRssKiB), String(ratio(warm.relay.peakRssKiB, warm.floor.peakRssKiB)), `<= ${BUDGET.peakMemoryMiB} ${verdict(warm.relay.peakRssKiB <= BUDGET.peakMemoryMiB * 1024)}`],
    ],
  );

  console.log('\nCalls to dependencies (counted by a proxy in front of moto_server and by the loopback key server)');
  printTable(
    ['scenario', 'calls', 'budget'],
    [
      ['Secrets Manager reads per cold start (median)', String(median(coldReads.relay)), `1 ${verdict(coldReadsPass)}`],
      [`Secrets Manager reads over 1 + ${WARM_DELIVERIES} deliveries, TTL 300 s`, String(warmRelay.reads), `1 (none warm) ${verdict(warmReadsPass)}`],
      [
        `Secrets Manager reads, ${TTL_SCENARIO.deliveries + 1} deliveries over ${(ttlPeriods * TTL_SCENARIO.ttlSeconds).toFixed(1)} s, TTL ${TTL_SCENARIO.ttlSeconds} s`,
        String(ttlRun.reads),
        `one per TTL (${Math.floor(ttlPeriods)}..${1 + Math.ceil(ttlPeriods)}) ${verdict(ttlReadsPass)}`,
      ],
      ...(ssoFigures
        ? ([
            [`SSO discovery downloads over 1 + ${WARM_DELIVERIES} deliveries`, String(ssoFigures.discoveryDownloads), `1 ${verdict(ssoFigures.discoveryDownloads === 1)}`],
            [`SSO key downloads over 1 + ${WARM_DELIVERIES} deliveries`, String(ssoFigures.keyDownloads), `1 ${verdict(ssoFigures.keyDownloads === 1)}`],
            'medianMs' in ssoFigures
              ? ['SSO warm median / p99 per delivery, ms', `${ms(ssoFigures.medianMs)} / ${ms(ssoFigures.p99Ms)}`, '']
              : ['SSO delivery with the bench token', `answered ${ssoFigures.firstStatus}`, 'expected 200 FAIL (see bench/results.json)'],
          ] satisfies Row[])
        : ([['SSO discovery and key downloads', 'n/a (no SSO support in this build)', '']] satisfies Row[])),
    ],
  );

  console.log('\nBudgets');
  printTable(['budget', 'value', 'verdict'], budgets.map((b): Row => [b.budget, String(b.value), verdict(b.pass)]));
  const floorPeakRssKiB = Math.max(coldFloor.peakRssKiB, warm.floor.peakRssKiB);
  if (peakRssKiB > BUDGET.peakMemoryMiB * 1024 && floorPeakRssKiB > BUDGET.peakMemoryMiB * 1024) {
    console.log(
      `  note: the floor itself peaks at ${mib(floorPeakRssKiB)} MiB under the same load (relay ${mib(peakRssKiB)} MiB): ` +
        'what exceeds the budget is Node, fetch and the AWS SDK, not the relay.',
    );
  }

  return {
    measuredAt: new Date().toISOString(),
    environment: { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: cpus().length },
    settings: { coldRuns: COLD_RUNS, warmDeliveries: WARM_DELIVERIES, ttlScenario: TTL_SCENARIO },
    bundles: sizes,
    functionsNotBuilt: missing,
    coldStart: { relay: coldRelay, floor: coldFloor, ratio: coldRatio, pairedRatio: pairedColdRatio, readsPerColdStart: coldReads },
    deployedConfiguration: { coldStart: coldDeployed, ratioToFloor: ratio(coldDeployed.wallMs, coldFloor.wallMs), ratioToBasic: ratio(coldDeployed.wallMs, coldRelay.wallMs), tableCallsPerDelivery: median(deployed.tableCalls) },
    importOnly,
    warm: { ...warm, ratio: warmRatio },
    dependencyCalls: {
      secretsManagerReads: { warmRun: warmRelay.reads, ttlScenario: { reads: ttlRun.reads, ttlPeriods } },
      sso: ssoFigures ?? { notApplicable: 'no SSO support in this build: auth.method "sso" answered 503 without asking the key server' },
    },
    budgets,
  };
}
