// `npm start`: the relay on http://127.0.0.1:3000/webhook through the same Lambda handler.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { parseRelayConfig } from '../lib/config/load.js';
import type { RelayConfig } from '../lib/config/schema.js';
import { inMemoryLedger } from '../lib/dedup/memory.js';
import { fromHttpApiEvent, toHttpApiResult } from '../lib/inbound/api-gateway.js';
import { createLogger, logLevelFrom } from '../lib/log/logger.js';
import type { DestinationKind } from '../lib/notify/kind.js';
import { addressOf, createChatServices, KINDS, kindOf, serviceFor } from '../lib/notify/kinds.js';
import { createRelayFromEnvironment } from '../lib/relay/from-environment.js';
import { invocationBudget } from '../lib/shared/deadline.js';
import { parseJson } from '../lib/shared/json.js';
import { createSummaryFromEnvironment } from '../lib/summary/from-environment.js';
import { memorySummaryRecords, memorySummaryWeeks } from '../lib/summary/store.js';
import { createTriageFromEnvironment } from '../lib/triage/from-environment.js';
import { memoryTriageStore } from '../lib/triage/store.js';
import { CONSOLE_TYPES, consoleEnvironment, consolePathOf, createConsoles, loadKindTools } from './console-chat.js';
import { chooseConfiguration, configurationProblems } from './dev-config.js';
import { httpApiEvent } from './http-api-event.js';
import { localPlatform } from './local-platform.js';
import { OwnersFileError, ownersFromFile } from './owners-source.js';
import { DeliveryLog, destinationsAt, type PostedAt } from './preview/deliveries.js';
import { sampleWeek } from './preview/sample-summary.js';
import { handlePreviewRequest, isPreviewPath } from './preview/server.js';

const TEXT_TYPES = /^(?:text\/|application\/(?:[\w.+-]+\+)?json|application\/x-www-form-urlencoded)/i;
const FUNCTION_TIMEOUT_MS = 15_000;
const SUMMARY_TIMEOUT_MS = 60_000;

const host = process.env['HOST'] ?? '127.0.0.1';
const port = Number(process.env['PORT'] ?? 3000);
// The console destinations live on this same server: /console/<type> for every destination kind.
const consoleBase = `http://127.0.0.1:${port}/console`;

// The default shows both kinds of Slack destination: an incoming webhook, and a Slack app
// channel whose message is edited and threaded as an anomaly's follow-ups arrive; a team
// reached through its cost center, as the sample owners file names it; and a weekly summary.
const choice = await chooseConfiguration(
  process.env,
  () => ({
    auth: { method: 'none' },
    slack: { botToken: 'xoxb-console-local' },
    destinations: {
      default: { url: `${consoleBase}/slack`, summary: { weekday: 'monday', hour: 9 } },
      'slack-app': { channel: 'CCONSOLE01' },
      'data-platform': { type: 'teams', url: `${consoleBase}/teams` },
    },
    routes: [{ to: ['default', 'slack-app'] }, { when: { costCenter: ['Data Platform'] }, to: ['data-platform'] }],
    // Pictures of the account's cost trend, and "Expected" as a cost event: a sample series, printed events.
    platform: { trend: true, costEvents: true },
  }),
  port,
);
// The embedded default's file goes when npm start does, at its end however it comes (Ctrl-C, a
// kill). One killed too hard to remove it leaves that one file, which the next start reuses.
// Only a server that listened removes it: a second start on a busy port shares the first one's
// file, and must leave it to the server that reads it.
let listening = false;
if (choice.temporaryFile) {
  const file = choice.temporaryFile;
  process.on('exit', () => {
    if (listening) rmSync(file, { force: true });
  });
  const codes = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
  for (const [signal, code] of Object.entries(codes)) process.once(signal, () => process.exit(code));
}
const problems = await configurationProblems(choice);
if (problems.length > 0) {
  console.error(`npm start: the relay configuration cannot be used, so nothing listens (configuration: ${choice.description}):`);
  for (const problem of problems) console.error(`  ${problem}`);
  process.exit(1);
}
process.env['RELAY_CONFIG_SECRET_ID'] = choice.secretId;
const source = choice.description;
// Metric lines (CloudWatch EMF) would bury the previews; POWERTOOLS_METRICS_DISABLED=false shows them.
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
// The kinds post to their consoles unless told otherwise (Slack app destinations to its Web API there).
const tools = await loadKindTools();
for (const [name, value] of Object.entries(consoleEnvironment(tools, consoleBase))) process.env[name] ??= value;
// The webhook-relay handler's own two lines, with an in-memory ledger when no table is named,
// so that re-sends and an anomaly's follow-ups behave as in the stack.
// Grouped destinations close with an in-process timer: a storm folds into one message locally too.
// Triage state in memory too, shared with the ledger as the table's one item per anomaly shares
// them: a snooze holds follow-ups back, and a triage note finds where the opening is (the Jira
// issue it comments on). The link key is made per session, as the stack generates its own.
const triageOf = (id: string) => triageStore.records.get(id)?.triage;
const ledger = inMemoryLedger(Date.now, triageOf);
const triageStore = memoryTriageStore(Date.now, (id) => ledger.anomalies.get(id)?.opening);
// Messages link to this server's triage page, signed with a key made for the session.
const sessionKey = process.env['TRIAGE_KEY_SECRET_ID'] ? {} : { key: randomBytes(32).toString('hex') };
// Routes by cost center read an owners file in place of the directory directory-sync keeps in AWS.
const ownersFile = process.env['OWNERS_FILE'] ?? fileURLToPath(new URL('../events/owners/sample.json', import.meta.url));
const owners = process.env['DEDUP_TABLE_NAME']
  ? undefined
  : await ownersFromFile(ownersFile).catch((error: unknown) => {
      if (!(error instanceof OwnersFileError)) throw error;
      console.error(`npm start: the owners file cannot be used, so nothing listens (OWNERS_FILE, docs/owners.md#trying-it-locally):`);
      console.error(error.message);
      process.exit(1);
    });
// The platform's part (docs/platform.md): pictures from a sample series, cost events printed.
const sampleCosts = process.env['DAILY_COST_FILE'] ?? fileURLToPath(new URL('../events/platform/daily-cost.json', import.meta.url));
const platform = owners ? await localPlatform(sampleCosts, owners.directory, (line) => console.log(line)) : undefined;
const relay = createRelayFromEnvironment(process.env, {
  ...(owners ? { owners: owners.directory } : {}),
  localGroups: true,
  // An anomaly left open past its destination's `escalate` wait is escalated by an in-process timer.
  localEscalations: true,
  origin: `http://127.0.0.1:${port}`,
  ...(sessionKey.key ? { triageKey: sessionKey.key } : {}),
  ...(process.env['DEDUP_TABLE_NAME'] ? {} : { ledger }),
});
// Weekly summaries of the anomalies this session sent, on demand (`npm run summary` asks POST /summary).
const summary = createSummaryFromEnvironment(process.env, {
  ...(process.env['DEDUP_TABLE_NAME'] ? {} : { records: memorySummaryRecords(ledger, triageOf), weeks: memorySummaryWeeks() }),
  ...(sessionKey.key ? { tokenKey: sessionKey.key } : {}),
});
const localLogger = createLogger({ level: logLevelFrom(process.env) });
const triage = createTriageFromEnvironment(process.env, {
  ...(process.env['DEDUP_TABLE_NAME'] ? {} : { store: triageStore }),
  ...(sessionKey.key ? { tokenKey: sessionKey.key } : {}),
  ...(platform && sessionKey.key
    ? {
        chart: platform.chart({ key: sessionKey.key, logger: localLogger }),
        costEvents: platform.costEvents({ enabled: async () => Boolean(configNow()?.platform?.costEvents), logger: localLogger }),
      }
    : {}),
});
const handler = async (event: APIGatewayProxyEventV2, context: Context) =>
  toHttpApiResult(await relay(fromHttpApiEvent(event, context.awsRequestId), invocationBudget(context)));

// The paths the kinds' apps post clicks to (Slack's /slack/interactions), served by the triage function.
const interactionPaths = new Set(CONSOLE_TYPES.flatMap((type) => (KINDS[type] as DestinationKind).interactionPath ?? []));

/** The configuration as its file says now; undefined when it is no file or cannot be read. */
function configNow(): RelayConfig | undefined {
  if (!choice.secretId.startsWith('file:')) return undefined;
  try {
    return parseRelayConfig(readFileSync(choice.secretId.slice('file:'.length), 'utf8'));
  } catch {
    return undefined;
  }
}

let invocation = 0;
const deliveries = new DeliveryLog();
/** The destinations a console post was for, by the configuration as it is now (a file); none when it cannot say. */
const destinationsFor = (at: PostedAt): string[] => {
  const config = configNow();
  return config ? destinationsAt(config, at) : [];
};
const consoles = createConsoles(tools, console.log, (type, body, at) => deliveries.record(type, body, destinationsFor(at)));

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const consolePath = consolePathOf(path);
    if (consolePath) {
      consoles(consolePath, req, res, Buffer.concat(chunks));
      return;
    }
    if (isPreviewPath(path)) {
      await handlePreviewRequest(path, req, res, deliveries);
      return;
    }
    if (path === '/summary' && req.method === 'POST') {
      const parsed = parseJson(Buffer.concat(chunks).toString('utf8'));
      const started = Date.now();
      const answer = await summary(
        parsed.ok ? parsed.value : undefined,
        invocationBudget({ getRemainingTimeInMillis: () => SUMMARY_TIMEOUT_MS - (Date.now() - started) }),
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return;
    }
    if (interactionPaths.has(path) || path.startsWith('/triage/') || path.startsWith('/chart/')) {
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(',') : value;
      const started = Date.now();
      const answer = await triage(
        { method: req.method ?? 'GET', path, headers, body: Buffer.concat(chunks).toString('utf8'), origin: `http://127.0.0.1:${port}` },
        invocationBudget({ getRemainingTimeInMillis: () => FUNCTION_TIMEOUT_MS - (Date.now() - started) }),
      );
      res.writeHead(answer.statusCode, answer.headers).end(answer.isBase64Encoded ? Buffer.from(answer.body, 'base64') : answer.body);
      return;
    }
    if (path !== '/webhook') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const body = Buffer.concat(chunks);
    const event = httpApiEvent({
      method: req.method ?? 'GET',
      headers,
      ...(body.length > 0 ? { body, base64: !TEXT_TYPES.test(headers['content-type'] ?? '') } : {}),
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    });
    if (event.body !== undefined && !event.isBase64Encoded) event.body = body.toString('utf8');
    const started = Date.now();
    const context = {
      awsRequestId: `local-${++invocation}`,
      functionName: 'webhook-relay',
      getRemainingTimeInMillis: () => FUNCTION_TIMEOUT_MS - (Date.now() - started),
    } as Context;
    try {
      const result = await handler(event, context);
      res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(result.body ?? '');
    } catch (error) {
      console.error('handler threw', error);
      res.writeHead(502, { 'content-type': 'application/json' }).end('{"message":"Internal Server Error"}');
    }
  });
});

server.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE') {
    console.error(
      `Port ${port} on ${host} is already in use (another npm start?). Stop that one, or pick another port: PORT=3001 npm start`,
    );
  } else {
    console.error(`The local relay could not listen on ${host}:${port}: ${error.code ?? error.message}`);
  }
  process.exit(1);
});

server.listen(port, host, () => {
  listening = true;
  console.log(`Cost Alert Relay listening on http://${host}:${port}/webhook`);
  console.log(`configuration: ${source}`);
  if (owners) console.log(`owners (cost centers of each account, for routes by cost center): ${owners.label}`);
  console.log(`console destinations (print instead of post): ${CONSOLE_TYPES.map((type) => `${consoleBase}/${type}`).join(', ')}`);
  console.log(
    `preview page (what each console destination received, as each chat shows it): http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/`,
  );
  console.log('try: npm run send -- events/anomaly-alert.json');
  showSampleSummaries().catch((error: unknown) =>
    console.error(`sample weekly summaries: not shown (${(error as Error).name ?? 'error'})`),
  );
});

/**
 * What a weekly summary looks like, before any anomaly was sent: a made-up week posted to each
 * console destination with a `summary`. Destinations elsewhere (a real chat) never get a sample,
 * and a configuration without summaries gets none: its preview page starts empty.
 */
async function showSampleSummaries(): Promise<void> {
  if (!choice.secretId.startsWith('file:')) return;
  const config = parseRelayConfig(await readFile(choice.secretId.slice('file:'.length), 'utf8'));
  const services = createChatServices(undefined, process.env);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const summarised = Object.entries(config.destinations).filter(([, destination]) => destination.summary);
  const shown: string[] = [];
  for (const [name, destination] of summarised) {
    const kind = kindOf(destination);
    if (!kind.summaries || !addressOf(destination).startsWith(consoleBase)) continue;
    const payload = (await kind.extras()).summary(destination, sampleWeek(name, destination.summary?.timeZone ?? 'UTC', nowSeconds));
    const outcome = await serviceFor(services, destination).post(addressOf(destination), payload, { timeoutMs: 5_000 });
    if (outcome.kind === 'delivered') shown.push(name);
  }
  const names = summarised.map(([name]) => name);
  console.log(
    names.length > 0
      ? `weekly summaries (${names.join(', ')}): ${shown.length > 0 ? 'a sample week is on the preview page; ' : ''}post this session's with npm run summary -- --destination ${names[0]}`
      : 'weekly summaries: no destination has "summary" (docs/summaries.md); the embedded default configuration shows one',
  );
}
