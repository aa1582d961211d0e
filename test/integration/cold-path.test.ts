import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESTINATION_TYPES } from '../../lib/notify/kinds.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { startBundle } from '../helpers/bundle.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

// What the cold path of the built relay loads, and that what it leaves out still works when
// it is needed: the lazily bundled AWS SDK credential chain for credentials outside Lambda.
const moto = motoUrl();
const root = fileURLToPath(new URL('../../', import.meta.url));
const alert = readFileSync(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8');
const event = httpApiEvent({ headers: { 'content-type': 'application/json' }, body: alert });

/** Runs one cold delivery in a fresh Node process and reports what that process loaded. */
async function coldDelivery(bundle: string, env: Record<string, string>) {
  const script = `
    const { handler } = await import(${JSON.stringify(bundle)});
    const context = { awsRequestId: 'cold', functionName: 'relay', getRemainingTimeInMillis: () => 10000 };
    const answer = await handler(${JSON.stringify(event)}, context);
    const loaded = process.moduleLoadList;
    (await import('node:fs')).writeSync(3, JSON.stringify({ status: answer.statusCode, undici: loaded.some((m) => m.includes('undici')) }));
    process.exit(0);`;
  // Not spawnSync: the loopback AWS proxy and Slack live in this process and must keep answering.
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    timeout: 20_000,
  });
  let log = '';
  let report = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  // The report goes to fd 3, apart from the function's log on stdout.
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (report += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('close', resolve));
  if (!report) throw new Error(`the cold delivery reported nothing:\n${log}`);
  return JSON.parse(report) as { status: number; undici: boolean };
}

/** Whether an ESM import of node:http loads undici on this Node (22 and newer: nodejs/node#57649). */
const esmHttpImportLoadsUndici = (() => {
  const out = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', "import 'node:http'; console.log(process.moduleLoadList.some((m) => m.includes('undici')))"],
    {
      encoding: 'utf8',
    },
  );
  return out.trim() === 'true';
})();

describe.skipIf(!moto)('the relay bundle’s cold path', () => {
  let slack: FakeSlack;
  let proxy: AwsProxy;
  let secretId: string;
  const slackPath = '/services/T0/B0/cold';
  let dir: string;

  beforeAll(async () => {
    slack = await startFakeSlack();
    proxy = await startAwsProxy(moto!);
    secretId = await createSecret(
      secretsClient(moto!),
      { auth: { method: 'none' }, destinations: { default: { url: slack.url(slackPath) } } },
      'cold',
    );
    dir = mkdtempSync(join(tmpdir(), 'cold-path-'));
  });
  afterAll(async () => {
    await Promise.all([slack?.close(), proxy?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const lambdaEnvironment = () => ({
    // Set in every Lambda function: the relay looks for no AWS profile there.
    AWS_LAMBDA_FUNCTION_NAME: 'relay',
    AWS_ENDPOINT_URL: proxy.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDLAMBDAROLE',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_SESSION_TOKEN: 'lambda-session',
    RELAY_CONFIG_SECRET_ID: secretId,
  });

  it('needs nothing but index.mjs and the chunks it imports: a delivery works with every lazy-*.mjs removed', async () => {
    const copy = join(dir, 'webhook-relay');
    cpSync(join(root, 'dist', 'webhook-relay'), copy, { recursive: true });
    const lazy = readdirSync(copy).filter((file) => file.startsWith('lazy-'));
    // PagerDuty's, Teams' and Google Chat's posters, the answers of a delivery that fails and
    // escalations' wait among them: a Slack-only configuration that delivers never loads them.
    expect(lazy).toEqual(
      expect.arrayContaining([
        'lazy-aws-sdk-client-sqs.mjs',
        'lazy-aws-sdk-credential-provider-node.mjs',
        'lazy-sso.mjs',
        'lazy-pagerduty-post.mjs',
        'lazy-teams-post.mjs',
        'lazy-googlechat-post.mjs',
        'lazy-relay-answer.mjs',
        'lazy-escalation-relay.mjs',
        'lazy-escalation-local.mjs',
      ]),
    );
    for (const file of lazy) rmSync(join(copy, file));
    slack.reset();
    proxy.reset();
    expect((await coldDelivery(join(copy, 'index.mjs'), lambdaEnvironment())).status).toBe(200);
    expect(slack.accepted(slackPath)).toHaveLength(1);
    // Signed with the credentials Lambda put in the environment.
    expect(proxy.accessKeyIds()).toEqual(['AKIDLAMBDAROLE']);
  });

  /** The text of index.mjs and the chunks it imports statically, and of every file in the folder. */
  function coldAndAll(): { cold: string; everything: string } {
    const folder = join(root, 'dist', 'webhook-relay');
    const coldPath = new Set<string>();
    const visit = (file: string) => {
      if (coldPath.has(file)) return;
      coldPath.add(file);
      const text = readFileSync(join(folder, file), 'utf8');
      for (const [, next] of text.matchAll(/(?:from|import)\s*"\.\/([^"]+)"/g)) visit(next as string);
    };
    visit('index.mjs');
    const cold = [...coldPath].map((file) => readFileSync(join(folder, file), 'utf8')).join('\n');
    const everything = readdirSync(folder)
      .filter((file) => file.endsWith('.mjs'))
      .map((file) => readFileSync(join(folder, file), 'utf8'))
      .join('\n');
    return { cold, everything };
  }

  it("keeps Slack app destinations' code off the cold path: the Web API client and the anomaly table load on first use", () => {
    const { cold, everything } = coldAndAll();
    for (const marker of ['chat.update', 'ADD followUps']) {
      expect(everything).toContain(marker);
      expect(cold).not.toContain(marker);
    }
  });

  it("keeps PagerDuty's events off the cold path: they are made and posted by code loaded on the first post", () => {
    const { cold, everything } = coldAndAll();
    for (const marker of ['routing_key', 'events.pagerduty.com', 'custom_details']) {
      expect(everything).toContain(marker);
      expect(cold).not.toContain(marker);
    }
  });

  it("keeps Teams' cards and Google Chat's messages off the cold path: they are made and posted by code loaded on the first post", () => {
    const { cold, everything } = coldAndAll();
    for (const marker of ['application/vnd.microsoft.card.adaptive', 'Action.OpenUrl', 'cardsV2', 'decoratedText', 'messageReplyOption']) {
      expect(everything).toContain(marker);
      expect(cold).not.toContain(marker);
    }
  });

  it('keeps the answers of a delivery that fails or waits off the cold path: a 200 is answered without them', () => {
    const { cold, everything } = coldAndAll();
    for (const marker of ['chat_refused', 'chat_unavailable', 'could not take the alert right now']) {
      expect(everything).toContain(marker);
      expect(cold).not.toContain(marker);
    }
  });

  // A chat-only configuration never loads it: the first test here delivers with every lazy bundle removed.
  it("keeps EventBridge's poster and triage events off the cold path: they load with the first post to a bus", () => {
    const { cold, everything } = coldAndAll();
    for (const marker of ['AWSEvents', 'event_too_large', 'Cost Alert Triage']) {
      expect(everything).toContain(marker);
      expect(cold).not.toContain(marker);
    }
  });

  it("keeps escalations' wait off the cold path: it is set by code loaded with the first post to a destination that escalates", () => {
    const { cold, everything } = coldAndAll();
    for (const marker of ['escalation scheduled', '"escalation"', 'cannot wait here']) {
      expect(everything).toContain(marker);
      expect(cold).not.toContain(marker);
    }
  });

  it.skipIf(!esmHttpImportLoadsUndici)('loads no undici, although an ESM import of node:http would on this Node', async () => {
    slack.reset();
    const result = await coldDelivery(join(root, 'dist', 'webhook-relay', 'index.mjs'), lambdaEnvironment());
    expect(result).toEqual({ status: 200, undici: false });
  });

  it('outside Lambda, without credentials in the environment, signs with the SDK chain’s: here a profile', async () => {
    const credentials = join(dir, 'credentials');
    writeFileSync(credentials, '[relay-local]\naws_access_key_id = AKIDFROMPROFILE\naws_secret_access_key = from-profile\n');
    const {
      AWS_LAMBDA_FUNCTION_NAME: _lambda,
      AWS_ACCESS_KEY_ID: _id,
      AWS_SECRET_ACCESS_KEY: _secret,
      AWS_SESSION_TOKEN: _token,
      ...withoutCredentials
    } = lambdaEnvironment();
    slack.reset();
    proxy.reset();
    const relay = await startBundle('webhook-relay', {
      ...withoutCredentials,
      AWS_PROFILE: 'relay-local',
      AWS_SHARED_CREDENTIALS_FILE: credentials,
      AWS_CONFIG_FILE: join(dir, 'no-config'),
      // Never ask instance metadata: this machine is not on EC2.
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    try {
      const answer = await relay.invoke<{ statusCode: number }>(event);
      expect(answer.statusCode).toBe(200);
      expect(slack.accepted(slackPath)).toHaveLength(1);
      expect(proxy.accessKeyIds()).toEqual(['AKIDFROMPROFILE']);
    } finally {
      await relay.stop();
    }
  });
});

interface Metafile {
  outputs: Record<string, { inputs: Record<string, unknown>; imports: Array<{ path: string; kind: string; external?: boolean }> }>;
}

/** The sources in dist/webhook-relay/`file` and, with `withStaticImports`, in every chunk it imports statically, recursively. */
function bundledInputs(meta: Metafile, file: string, withStaticImports: boolean): string[] {
  const outputs = new Set<string>();
  const visit = (path: string) => {
    if (outputs.has(path)) return;
    outputs.add(path);
    if (!withStaticImports) return;
    for (const imported of meta.outputs[path]!.imports)
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  visit(`dist/webhook-relay/${file}`);
  return [...outputs].flatMap((path) => Object.keys(meta.outputs[path]!.inputs));
}

describe('the relay bundle’s cold path, as its esbuild metafile lists it (what bench/sizes.ts counts)', () => {
  it('holds no escalation code but the line each kind shows: a configuration without escalate never parses how it waits', () => {
    const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', 'webhook-relay.json'), 'utf8')) as Metafile;
    const escalation = (inputs: string[]) => inputs.filter((input) => input.startsWith('lib/escalation/'));
    expect(escalation(bundledInputs(meta, 'index.mjs', true))).toEqual([]);
    expect(escalation(bundledInputs(meta, 'lazy-escalation-relay.mjs', false))).toEqual(
      expect.arrayContaining(['lib/escalation/lazy-escalation-relay.ts', 'lib/escalation/watch.ts', 'lib/escalation/plan.ts']),
    );
  });

  it('holds no SSO verification: a configuration without SSO never parses bearer tokens, discovery or key sets', () => {
    const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', 'webhook-relay.json'), 'utf8')) as Metafile;
    const sso = (inputs: string[]) => inputs.filter((input) => input.startsWith('lib/auth/sso/'));
    expect(sso(bundledInputs(meta, 'index.mjs', true))).toEqual([]);
    // Still deployed: in the bundle that the first delivery needing it loads.
    expect(sso(bundledInputs(meta, 'lazy-sso.mjs', false))).toEqual(
      expect.arrayContaining(['lib/auth/sso/verify.ts', 'lib/auth/sso/issuer-keys.ts', 'lib/auth/sso/discovery.ts']),
    );
  });

  it('holds no JSON syntax scanner: it loads only to say where a body or configuration that is not JSON breaks', () => {
    const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', 'webhook-relay.json'), 'utf8')) as Metafile;
    const scanner = 'lib/shared/json-syntax.ts';
    expect(bundledInputs(meta, 'index.mjs', true)).not.toContain(scanner);
    expect(bundledInputs(meta, 'lazy-shared.mjs', false)).toContain(scanner);
  });

  it("holds Teams' and Google Chat's schemas, descriptors and services only: their formatters and posters load with their first post", () => {
    const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', 'webhook-relay.json'), 'utf8')) as Metafile;
    const chats = (inputs: string[]) => inputs.filter((input) => /^lib\/notify\/(teams|googlechat)\//.test(input)).sort();
    expect(chats(bundledInputs(meta, 'index.mjs', true))).toEqual([
      'lib/notify/googlechat/config.ts',
      'lib/notify/googlechat/kind.ts',
      'lib/notify/googlechat/service.ts',
      'lib/notify/googlechat/thread.ts',
      'lib/notify/teams/config.ts',
      'lib/notify/teams/kind.ts',
      'lib/notify/teams/service.ts',
    ]);
    expect(chats(bundledInputs(meta, 'lazy-teams-post.mjs', false))).toEqual(
      expect.arrayContaining(['lib/notify/teams/format.ts', 'lib/notify/teams/post.ts', 'lib/notify/teams/lazy-teams-post.ts']),
    );
    expect(chats(bundledInputs(meta, 'lazy-googlechat-post.mjs', false))).toEqual(
      expect.arrayContaining([
        'lib/notify/googlechat/format.ts',
        'lib/notify/googlechat/post.ts',
        'lib/notify/googlechat/lazy-googlechat-post.ts',
      ]),
    );
  });

  it("a kind's lazily loaded poster and extras carry no second zod: its schema is the cold path's, and they never need it", () => {
    const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', 'webhook-relay.json'), 'utf8')) as Metafile;
    const bundles = readdirSync(join(root, 'dist', 'webhook-relay')).filter((file) =>
      DESTINATION_TYPES.some((type) => file.startsWith(`lazy-${type}-`) || file === `lazy-${type}.mjs`),
    );
    expect(bundles.length).toBeGreaterThanOrEqual(DESTINATION_TYPES.length);
    const withZod = bundles.filter((file) => bundledInputs(meta, file, false).some((input) => input.includes('node_modules/zod/')));
    expect(withZod).toEqual([]);
  });

  it("holds a Jira destination's schema and descriptor only: its formatter and poster load with its first post", () => {
    const meta = JSON.parse(readFileSync(join(root, 'dist', 'meta', 'webhook-relay.json'), 'utf8')) as Metafile;
    const jira = (inputs: string[]) => inputs.filter((input) => input.startsWith('lib/notify/jira/')).sort();
    expect(jira(bundledInputs(meta, 'index.mjs', true))).toEqual(['lib/notify/jira/config.ts', 'lib/notify/jira/kind.ts']);
    expect(jira(bundledInputs(meta, 'lazy-jira-post.mjs', false))).toEqual(
      expect.arrayContaining(['lib/notify/jira/adf.ts', 'lib/notify/jira/format.ts', 'lib/notify/jira/lazy-jira-post.ts']),
    );
  });
});
