import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CloudFormationClient, CreateStackCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsEnvironment, createSecret, motoUrl } from '../helpers/aws.js';
import { loadTemplate } from '../helpers/cloudformation.js';
import { closeServer } from '../helpers/loopback-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const moto = motoUrl();

const WEBHOOK_TOKEN = 'Xq93kd72HfA1zWl0pR5s';
const WEBHOOK = `https://hooks.slack.com/services/T0/B0/${WEBHOOK_TOKEN}`;
const BASIC_PASSWORD = 'Bq7vX2kLm9Rz4TpWc8Yd';
const PLATFORM_PASSWORD = 'pL4tf0rmZx81kQw3';
const RELAY_CONFIG = JSON.stringify({
  auth: { method: 'basic', basic: { username: 'relay', password: BASIC_PASSWORD } },
  destinations: { default: { url: WEBHOOK } },
});
const SECRETS = [WEBHOOK_TOKEN, BASIC_PASSWORD, PLATFORM_PASSWORD];

/** Whether any 8 characters in a row of a secret were said. */
function leaks(said: string): string | undefined {
  return SECRETS.find((value) =>
    Array.from({ length: value.length - 7 }, (_, i) => value.slice(i, i + 8)).some((piece) => said.includes(piece)),
  );
}

/** Environment without the region variables of whoever runs the tests, and without their AWS profile. */
function cleanEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'RELAY_URL']) delete env[name];
  return {
    ...env,
    AWS_CONFIG_FILE: join(tmpdir(), 'no-such-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(tmpdir(), 'no-such-aws-credentials'),
    ...extra,
  };
}

interface Result {
  code: number | null;
  out: string;
  err: string;
}

function runScript(script: string, args: string[], env: Record<string, string>, cwd = root): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(tsx, [join(root, 'scripts', script), ...args], {
      cwd,
      env: cleanEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

interface Conversation extends Result {
  /** The questions, in order, as they were put. */
  questions: string[];
  /** Whether samconfig.toml existed when each question was put. */
  samconfigWhenAsked: boolean[];
}

/**
 * Runs `npm run deploy` with stdin a pipe, answering each question (a prompt left open on stderr,
 * ending in ": ") with the next answer, and closing stdin (end of input) when none is left. With
 * `interruptOn`, Ctrl-C is pressed once stdout shows that text: SIGINT to the whole process
 * group, as a terminal sends it.
 */
function deploy(
  project: string,
  env: Record<string, string>,
  answers: string[],
  args: string[] = [],
  interruptOn?: string,
): Promise<Conversation> {
  return new Promise((resolve) => {
    const child: ChildProcessWithoutNullStreams = spawn(tsx, [join(root, 'scripts/deploy.ts'), ...args], {
      cwd: project,
      env: cleanEnvironment(env),
      detached: interruptOn !== undefined,
    });
    const queue = [...answers];
    const questions: string[] = [];
    const samconfigWhenAsked: boolean[] = [];
    let out = '';
    let err = '';
    let interrupted = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (interruptOn === undefined || interrupted || !out.includes(interruptOn)) return;
      interrupted = true;
      process.kill(-(child.pid as number), 'SIGINT');
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      if (!err.endsWith(': ')) return;
      questions.push(err.slice(err.lastIndexOf('\n') + 1));
      samconfigWhenAsked.push(existsSync(join(project, 'samconfig.toml')));
      const answer = queue.shift();
      if (answer === undefined) child.stdin.end();
      else child.stdin.write(`${answer}\n`);
    });
    child.on('exit', (code) => resolve({ code, out, err, questions, samconfigWhenAsked }));
  });
}

/** Runs the deploy in a pseudo-terminal: `steps` pairs what to wait for on the screen with what to type then. */
function deployInTerminal(project: string, env: Record<string, string>, steps: Array<[string, string]>): Promise<Result> {
  return new Promise((resolve) => {
    const ptyRun = 'import pty, sys\nstatus = pty.spawn(sys.argv[1:])\nsys.exit(status >> 8 if status & 0xff == 0 else 1)';
    const child = spawn('python3', ['-c', ptyRun, tsx, join(root, 'scripts/deploy.ts')], {
      cwd: project,
      env: cleanEnvironment(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let step = 0;
    const onData = (c: Buffer) => {
      out += c.toString();
      const next = steps[step];
      if (next && out.includes(next[0], 0)) {
        step++;
        child.stdin.write(next[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => resolve({ code, out, err: '' }));
  });
}

/** One sam call as the stand-in saw it: its arguments, and the --config-file it was given as it was then. */
interface SamCall {
  args: string[];
  config?: { path: string; mode: number; dirMode: number; dirOwner: number; text: string };
}

/** Every sam call the stand-in recorded. */
async function samCalls(project: string): Promise<SamCall[]> {
  const file = join(project, 'sam-calls');
  if (!existsSync(file)) return [];
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as SamCall);
}

const deploys = (calls: SamCall[]) => calls.filter((call) => call.args[0] === 'deploy');
const option = (call: SamCall | undefined, name: string) =>
  call?.args.includes(name) ? call.args[call.args.indexOf(name) + 1] : undefined;
/** The parameter overrides sam read from the configuration file it was given. */
const overridesOf = (call: SamCall | undefined) => {
  const line = /^parameter_overrides = (".*")$/m.exec(call?.config?.text ?? '');
  return line ? (JSON.parse(line[1] as string) as string) : undefined;
};

/**
 * The parameters reached sam in a file no other local user could read, gone once the deploy
 * ended, and nothing secret was on sam's command line (which every local user can read in ps).
 */
function expectHandedPrivately(call: SamCall | undefined, project: string): void {
  expect(call?.config, 'sam was given no configuration file').toBeDefined();
  const config = call?.config as NonNullable<SamCall['config']>;
  expect(leaks(JSON.stringify(call?.args))).toBeUndefined();
  expect(call?.args).not.toContain('--parameter-overrides');
  expect(option(call, '--config-env')).toBe('default');
  expect(config.mode.toString(8)).toBe('600');
  expect(config.dirMode.toString(8)).toBe('700');
  expect(config.dirOwner).toBe(process.getuid?.());
  expect(dirname(config.path)).not.toBe(project);
  expect(existsSync(config.path)).toBe(false);
  expect(existsSync(dirname(config.path))).toBe(false);
  // Still the project's template, whatever sam resolves relative paths against.
  expect(option(call, '--template-file')).toBe(join(project, 'template.yaml'));
}

let relay: Server;
let relayUrl: string;
const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  relay = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"delivered":["default"]}');
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}/webhook`;
});
afterAll(() => closeServer(relay));

/**
 * A project folder with a stand-in for the SAM CLI: it records its arguments, fails when
 * sam-fails exists, and otherwise "deploys": creates the stack in the emulator (in the region it
 * was given), its outputs pointing at the loopback relay and at a relay configuration secret.
 */
async function project(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'relay-deploy-'));
  const calls = join(dir, 'sam-calls');
  const sam = join(dir, 'fake-sam.mjs');
  await writeFile(
    sam,
    `#!${process.execPath}
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
const args = process.argv.slice(2);
const file = args.includes('--config-file') ? args[args.indexOf('--config-file') + 1] : undefined;
const config = file && existsSync(file)
  ? { path: file, mode: statSync(file).mode & 0o777, dirMode: statSync(dirname(file)).mode & 0o777, dirOwner: statSync(dirname(file)).uid, text: readFileSync(file, 'utf8') }
  : undefined;
appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ args, ...(config ? { config } : {}) }) + '\\n');
if (args[0] === '--version') process.exit(0);
if (existsSync(${JSON.stringify(join(dir, 'sam-fails'))})) {
  console.error('Error: Failed to create/update the stack: cost-alert-relay, Waiter StackCreateComplete failed');
  process.exit(1);
}
if (existsSync(${JSON.stringify(join(dir, 'sam-waits'))})) {
  // A deploy that takes its time, until Ctrl-C, which sam answers by stopping.
  process.on('SIGINT', () => process.exit(130));
  console.log('fake sam: deploying');
  setInterval(() => undefined, 1000);
  await new Promise(() => undefined);
}
const parameters = JSON.parse(/^parameter_overrides = (".*")$/m.exec(config?.text ?? '')?.[1] ?? '""');
const require = createRequire(${JSON.stringify(join(root, 'package.json'))});
const { CloudFormationClient, CreateStackCommand, DescribeStacksCommand } = require('@aws-sdk/client-cloudformation');
const { SecretsManagerClient, CreateSecretCommand } = require('@aws-sdk/client-secrets-manager');
const name = args[args.indexOf('--stack-name') + 1];
const region = args[args.indexOf('--region') + 1];
const client = new CloudFormationClient({ region });
const exists = await client.send(new DescribeStacksCommand({ StackName: name })).then(() => true, () => false);
if (!exists) {
  const secretId = name + '/relay-config';
  await new SecretsManagerClient({ region }).send(new CreateSecretCommand({ Name: secretId, SecretString: ${JSON.stringify(RELAY_CONFIG)} }));
  await client.send(new CreateStackCommand({
    StackName: name,
    TemplateBody: JSON.stringify({
      Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
      Outputs: { WebhookUrl: { Value: ${JSON.stringify(relayUrl)} }, RelayConfigSecretArn: { Value: secretId }, AuthMethod: { Value: /AuthMethod="(\\w+)"/.exec(parameters)?.[1] ?? 'Basic' } },
    }),
  }));
}
console.log('Successfully created/updated stack - ' + name);
`,
  );
  await chmod(sam, 0o755);
  // A stand-in for the build (the real one would replace dist/ under the other tests).
  const build = join(dir, 'fake-build.mjs');
  await writeFile(build, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(calls)}, '{"args":["build"]}\\n');\n`);
  // awsEnvironment's region is the tests' own; the deploy must take the one it was told.
  const { AWS_REGION: _ignored, ...aws } = awsEnvironment(moto as string);
  return { dir, env: { ...aws, SAM_CLI: sam, BUILD_SCRIPT: build } };
}

async function stackExists(name: string, region: string): Promise<boolean> {
  const client = new CloudFormationClient({ endpoint: moto, region, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
  try {
    return await client.send(new DescribeStacksCommand({ StackName: name })).then(
      () => true,
      () => false,
    );
  } finally {
    client.destroy();
  }
}

describe.skipIf(!moto)('npm run deploy', () => {
  it('first run: at most six questions, samconfig.toml only once they are answered, then a non-interactive sam deploy and what to paste', async () => {
    const { dir, env } = await project();
    const stack = `relay-${randomUUID().slice(0, 8)}`;
    received.length = 0;
    const first = await deploy(dir, { ...env, AWS_DEFAULT_REGION: 'eu-west-3' }, [stack, '', WEBHOOK, '', '', 'y']);

    expect(first.code, first.err).toBe(0);
    expect(first.questions.length).toBeLessThanOrEqual(6);
    expect(first.questions).toEqual([
      expect.stringContaining('Stack name [cost-alert-relay]'),
      expect.stringContaining('AWS region [eu-west-3]'),
      expect.stringContaining('Chat webhook URL'),
      expect.stringContaining('[basic]'),
      expect.stringContaining('[y/N]'),
      expect.stringContaining('Send a test alert'),
    ]);
    // Not one question was put with samconfig.toml on disk, but the last (after the deploy).
    expect(first.samconfigWhenAsked).toEqual([false, false, false, false, false, true]);

    const samconfig = await readFile(join(dir, 'samconfig.toml'), 'utf8');
    expect(samconfig).toContain(`stack_name = "${stack}"`);
    expect(samconfig).toContain('region = "eu-west-3"');
    expect(samconfig).toContain('parameter_overrides = "AuthMethod=\\"Basic\\" ApiKeyRotation=\\"Disabled\\""');
    expect(samconfig).not.toContain('deploy-webhook-secret');

    const [call, ...more] = deploys(await samCalls(dir));
    expect(more).toEqual([]);
    expect(call?.args).toEqual(
      expect.arrayContaining(['--no-confirm-changeset', '--resolve-s3', '--capabilities', 'CAPABILITY_IAM', '--on-failure', 'DELETE']),
    );
    expect(call?.args).not.toContain('--guided');
    expect(option(call, '--stack-name')).toBe(stack);
    expect(option(call, '--region')).toBe('eu-west-3');
    expect(option(call, '--on-failure')).toBe('DELETE');
    expect(overridesOf(call)).toBe(`AuthMethod="Basic" ApiKeyRotation="Disabled" DefaultDestinationUrl="${WEBHOOK}"`);
    expectHandedPrivately(call, dir);
    // The rest of samconfig.toml reaches sam as it is.
    expect(call?.config?.text).toContain(`stack_name = "${stack}"`);

    // What to paste into the platform, the password's whereabouts but not the password.
    expect(first.out).toContain(`Destination URL:        ${relayUrl}`);
    expect(first.out).toContain('Basic Authentication');
    expect(first.out).toContain('User name:              relay');
    expect(first.out).toContain(`npm run config -- pull --stack ${stack} --region eu-west-3`);
    // The offered test alert went through the stack's URL with its credentials, and says what it is.
    expect(received).toHaveLength(1);
    expect(received[0]?.headers['authorization']).toBe(`Basic ${Buffer.from(`relay:${BASIC_PASSWORD}`).toString('base64')}`);
    expect(JSON.parse(received[0]?.body ?? '{}').payload.title).toBe('Test alert from Cost Alert Relay');
    // ...and asks the relay to leave out the configured mentions: the test pings no one.
    expect(received[0]?.headers['x-cost-alert-relay-test']).toBe('quiet');
    expect(leaks(first.out + first.err)).toBeUndefined();

    // Later runs deploy the saved choices: no question, the webhook URL left to the stack.
    const again = await deploy(dir, env, []);
    expect(again.code, again.err).toBe(0);
    expect(again.questions).toEqual([]);
    const second = deploys(await samCalls(dir))[1];
    expect(option(second, '--stack-name')).toBe(stack);
    expect(option(second, '--region')).toBe('eu-west-3');
    expect(overridesOf(second)).toBe('AuthMethod="Basic" ApiKeyRotation="Disabled"');
    expectHandedPrivately(second, dir);
    expect(again.out).toContain(`npm run send -- --test --stack ${stack} --region eu-west-3`);
    expect(received).toHaveLength(1);
  });

  it('rotation only when asked for: its three questions, the password passed to sam but never saved', async () => {
    const { dir, env } = await project();
    const stack = `relay-${randomUUID().slice(0, 8)}`;
    const run = await deploy(
      dir,
      env,
      [stack, 'eu-central-1', WEBHOOK, 'basic', 'y', 'finops@example.com', PLATFORM_PASSWORD, 'Production payer', 'n'],
      [],
    );
    expect(run.code, run.err).toBe(0);
    expect(run.questions).toHaveLength(9);
    expect(run.questions.slice(5, 8)).toEqual([
      expect.stringContaining('Platform user'),
      expect.stringContaining('Platform password'),
      expect.stringContaining('Platform account'),
    ]);
    const [call] = deploys(await samCalls(dir));
    expect(overridesOf(call)).toBe(
      `AuthMethod="Basic" ApiKeyRotation="Enabled" PlatformUsername="finops@example.com" ApiKeyAccount="Production payer" DefaultDestinationUrl="${WEBHOOK}" PlatformPassword="${PLATFORM_PASSWORD}"`,
    );
    expectHandedPrivately(call, dir);
    expect(await readFile(join(dir, 'samconfig.toml'), 'utf8')).not.toContain(PLATFORM_PASSWORD);
    expect(leaks(run.out + run.err)).toBeUndefined();
  });

  it('interrupted by the end of input: nothing saved, nothing deployed, and the next run asks again', async () => {
    const { dir, env } = await project();
    const stopped = await deploy(dir, { ...env, AWS_REGION: 'eu-west-1' }, ['', '']);
    expect(stopped.code).toBe(130);
    expect(stopped.err).toContain('nothing was saved');
    expect(existsSync(join(dir, 'samconfig.toml'))).toBe(false);
    expect(deploys(await samCalls(dir))).toEqual([]);

    const next = await deploy(dir, { ...env, AWS_REGION: 'eu-west-1' }, []);
    expect(next.questions[0]).toContain('Stack name');
    expect(existsSync(join(dir, 'samconfig.toml'))).toBe(false);
  });

  it('interrupted with Ctrl-C in a terminal: the webhook URL was not shown, nothing saved', async () => {
    const { dir, env } = await project();
    const result = await deployInTerminal(dir, { ...env, AWS_REGION: 'eu-west-1' }, [
      ['Stack name', '\r'],
      ['AWS region', '\r'],
      ['Chat webhook URL', `${WEBHOOK}\r`],
      ['[basic]', '\u0003'],
    ]);
    expect(result.out).toContain('Got it: a Slack incoming webhook');
    expect(result.out).toContain('Stopped (interrupt)');
    expect(result.code).toBe(130);
    expect(existsSync(join(dir, 'samconfig.toml'))).toBe(false);
    expect(deploys(await samCalls(dir))).toEqual([]);
    expect(leaks(result.out)).toBeUndefined();
  });

  it('Ctrl-C while sam deploys: the file with the secrets is removed, and the deploy stops there', async () => {
    const { dir, env } = await project();
    const stack = `relay-${randomUUID().slice(0, 8)}`;
    await writeFile(join(dir, 'sam-waits'), '');
    const stopped = await deploy(dir, env, [stack, 'eu-west-1', WEBHOOK, 'none', 'n'], [], 'fake sam: deploying');
    expect(stopped.code, stopped.err).toBe(130);
    expect(stopped.err).toContain('Stopped (SIGINT) while sam deploy ran');
    const [call, ...more] = deploys(await samCalls(dir));
    expect(more).toEqual([]);
    expect(overridesOf(call)).toBe(`AuthMethod="None" ApiKeyRotation="Disabled" DefaultDestinationUrl="${WEBHOOK}"`);
    expectHandedPrivately(call, dir);
    expect(leaks(stopped.out + stopped.err)).toBeUndefined();
  });

  it('a failed first deploy is no dead end: sam is told to delete the stack, and the next run deploys the saved choices', async () => {
    const { dir, env } = await project();
    const stack = `relay-${randomUUID().slice(0, 8)}`;
    await writeFile(join(dir, 'sam-fails'), '');
    const failed = await deploy(dir, env, [stack, 'us-west-2', WEBHOOK, 'none', 'n']);
    expect(failed.code).toBe(1);
    expect(failed.err).toContain('sam deploy failed (exit 1)');
    expect(failed.err).toContain('run npm run deploy again');
    const [first] = deploys(await samCalls(dir));
    expect(option(first, '--on-failure')).toBe('DELETE');
    expect(overridesOf(first)).toBe(`AuthMethod="None" ApiKeyRotation="Disabled" DefaultDestinationUrl="${WEBHOOK}"`);
    expectHandedPrivately(first, dir);
    expect(await stackExists(stack, 'us-west-2')).toBe(false);
    expect(leaks(failed.out + failed.err)).toBeUndefined();

    // The choices are saved; the stack keeps the webhook URL, and there is none: it alone is asked again.
    await rm(join(dir, 'sam-fails'));
    const retried = await deploy(dir, env, [WEBHOOK]);
    expect(retried.code, retried.err).toBe(0);
    expect(retried.questions).toEqual([expect.stringContaining('Chat webhook URL')]);
    const retry = deploys(await samCalls(dir))[1];
    expect(option(retry, '--stack-name')).toBe(stack);
    expect(overridesOf(retry)).toBe(`AuthMethod="None" ApiKeyRotation="Disabled" DefaultDestinationUrl="${WEBHOOK}"`);
    expectHandedPrivately(retry, dir);
    expect(retried.out).toContain('No Authentication');
    expect(await stackExists(stack, 'us-west-2')).toBe(true);
    expect(leaks(retried.out + retried.err)).toBeUndefined();
  });

  it('a stack created again with owner routing saved asks for the platform password too, and never saves it', async () => {
    const { dir, env } = await project();
    const stack = `relay-${randomUUID().slice(0, 8)}`;
    await writeFile(join(dir, 'sam-fails'), '');
    await deploy(dir, env, [stack, 'us-west-2', WEBHOOK, 'none', 'n']);
    await rm(join(dir, 'sam-fails'));
    // Owner routing turned on by hand, as docs/deploy.md says, before the stack exists.
    const saved = await readFile(join(dir, 'samconfig.toml'), 'utf8');
    const routed = 'ApiKeyRotation=\\"Disabled\\" OwnerRouting=\\"Enabled\\" PlatformUsername=\\"finops@example.com\\"';
    await writeFile(join(dir, 'samconfig.toml'), saved.replace('ApiKeyRotation=\\"Disabled\\"', routed));

    const retried = await deploy(dir, env, [WEBHOOK, PLATFORM_PASSWORD]);
    expect(retried.code, retried.err).toBe(0);
    expect(retried.questions).toEqual([expect.stringContaining('Chat webhook URL'), expect.stringContaining('Platform password')]);
    const retry = deploys(await samCalls(dir))[1];
    expect(overridesOf(retry)).toContain(`OwnerRouting="Enabled"`);
    expect(overridesOf(retry)).toContain(`PlatformPassword="${PLATFORM_PASSWORD}"`);
    expectHandedPrivately(retry, dir);
    expect(await readFile(join(dir, 'samconfig.toml'), 'utf8')).not.toContain(PLATFORM_PASSWORD);
    expect(leaks(retried.out + retried.err)).toBeUndefined();
  });

  it('a stack an earlier deploy left in ROLLBACK_COMPLETE is deleted first, then created again', async () => {
    const { dir, env } = await project();
    const stack = `relay-${randomUUID().slice(0, 8)}`;
    // The stack a failed `sam deploy --guided` left behind: moto cannot fail a creation, so a
    // proxy in front of it reports the stack as ROLLBACK_COMPLETE until it is deleted.
    const client = new CloudFormationClient({
      endpoint: moto,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await client.send(
      new CreateStackCommand({ StackName: stack, TemplateBody: JSON.stringify({ Resources: { Queue: { Type: 'AWS::SQS::Queue' } } }) }),
    );
    client.destroy();
    const actions: string[] = [];
    let dead = true;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const body = Buffer.concat(chunks);
        const form = new URLSearchParams(body.toString());
        const action = form.get('Action');
        if (action && form.get('StackName') === stack) actions.push(action);
        if (action === 'DeleteStack' && form.get('StackName') === stack) dead = false;
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
        ) as Record<string, string>;
        const upstream = await fetch(`${moto}${req.url}`, { method: req.method ?? 'POST', headers, ...(body.length ? { body } : {}) });
        let text = await upstream.text();
        if (action === 'DescribeStacks' && form.get('StackName') === stack && dead)
          text = text.replace(/<StackStatus>[A-Z_]+<\/StackStatus>/, '<StackStatus>ROLLBACK_COMPLETE</StackStatus>');
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/xml' }).end(text);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      await writeFile(
        join(dir, 'samconfig.toml'),
        `version = 0.1\n[default.deploy.parameters]\nstack_name = "${stack}"\nregion = "eu-west-1"\nparameter_overrides = "AuthMethod=\\"Basic\\" ApiKeyRotation=\\"Disabled\\""\ntags = "team=\\"finops\\""\n`,
      );
      const proxied = { ...env, AWS_ENDPOINT_URL: `http://127.0.0.1:${(proxy.address() as { port: number }).port}` };
      const result = await deploy(dir, proxied, [WEBHOOK], ['--no-test-alert']);
      expect(result.code, result.err).toBe(0);
      expect(result.out).toContain(`The stack ${stack} is in ROLLBACK_COMPLETE`);
      expect(result.out).toContain('Deleted.');
      expect(result.questions).toEqual([expect.stringContaining('Chat webhook URL')]);
      expect(actions.indexOf('DeleteStack')).toBeGreaterThan(-1);
      const [call] = deploys(await samCalls(dir));
      expect(overridesOf(call)).toBe(`AuthMethod="Basic" ApiKeyRotation="Disabled" DefaultDestinationUrl="${WEBHOOK}"`);
      expectHandedPrivately(call, dir);
      // A setting the deploy does not know still reaches sam, from the private copy of samconfig.toml.
      expect(call?.config?.text).toContain('tags = "team=\\"finops\\""');
      expect(await stackExists(stack, 'eu-west-1')).toBe(true);
      expect(leaks(result.out + result.err)).toBeUndefined();
    } finally {
      await closeServer(proxy);
    }
  });

  it('refuses --config-file and --config-env: sam reads the private copy of samconfig.toml', async () => {
    const result = await runScript('deploy.ts', ['--config-env=prod'], { SAM_CLI: '/nonexistent/sam' });
    expect(result.code).toBe(2);
    expect(result.err).toContain('to deploy with another configuration file, run sam deploy yourself');
  });

  it('without AWS credentials it says so before asking anything: no question, nothing saved', async () => {
    const { dir, env } = await project();
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _key, ...withoutKeys } = env as Record<string, string>;
    const result = await runScript('deploy.ts', [], { ...withoutKeys, AWS_EC2_METADATA_DISABLED: 'true' }, dir);
    expect(result.code).toBe(2);
    expect(result.err).toContain('No AWS credentials were found');
    expect(result.out + result.err).not.toContain('Stack name');
    expect(result.out + result.err).not.toContain('webhook');
    expect(existsSync(join(dir, 'samconfig.toml'))).toBe(false);
  });

  it('without the SAM CLI it says how to get it, before asking anything', async () => {
    const result = await runScript('deploy.ts', [], { SAM_CLI: '/nonexistent/sam' });
    expect(result.code).toBe(2);
    expect(result.err).toContain('Install it');
    expect(result.err).not.toContain('Stack name');
  });
});

describe.skipIf(!moto)('--stack commands find the region as the AWS CLI does', () => {
  async function stackIn(region: string): Promise<string> {
    const secretClient = new SecretsManagerClient({
      endpoint: moto,
      region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const secretId = await createSecret(
      secretClient,
      {
        auth: { method: 'basic', basic: { username: 'relay', password: BASIC_PASSWORD } },
        destinations: { default: { url: WEBHOOK, mention: '<!here>' } },
      },
      'relay-config',
    );
    secretClient.destroy();
    const name = `relay-${randomUUID().slice(0, 8)}`;
    const client = new CloudFormationClient({
      endpoint: moto,
      region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    try {
      await client.send(
        new CreateStackCommand({
          StackName: name,
          TemplateBody: JSON.stringify({
            Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
            Outputs: { WebhookUrl: { Value: relayUrl }, RelayConfigSecretArn: { Value: secretId } },
          }),
        }),
      );
    } finally {
      client.destroy();
    }
    return name;
  }
  const aws = () => {
    const { AWS_REGION: _ignored, ...rest } = awsEnvironment(moto as string);
    return rest;
  };

  it('AWS_DEFAULT_REGION alone is enough for send --stack and config pull --stack', async () => {
    const stack = await stackIn('ap-southeast-2');
    received.length = 0;
    const sent = await runScript('send.ts', ['--test', '--stack', stack], { ...aws(), AWS_DEFAULT_REGION: 'ap-southeast-2' });
    expect(sent.code, sent.err).toBe(0);
    expect(sent.out).toContain('HTTP 200');
    expect(sent.out).toContain('Test alert sent');
    // The test alert asks the relay to leave the configured mention out, and its sender is told so.
    expect(sent.err).toContain('default has a mention configured; the relay leaves it out of this test alert');
    expect(received[0]?.headers['x-cost-alert-relay-test']).toBe('quiet');
    const body = JSON.parse(received[0]?.body ?? '{}');
    expect(body.payload.title).toBe('Test alert from Cost Alert Relay');
    expect(body.payload.message).toContain('This is a test');
    expect(body.payload.message).not.toMatch(/\$\d|<!/);
    expect(Date.parse(body.metadata.timestamp)).toBeGreaterThan(Date.parse('2026-01-02'));
    expect(leaks(sent.out + sent.err)).toBeUndefined();

    const pulled = await runScript(
      'config.ts',
      ['pull', '--stack', stack, '--output', join(await mkdtemp(join(tmpdir(), 'relay-pull-')), 'relay-config.json')],
      { ...aws(), AWS_DEFAULT_REGION: 'ap-southeast-2' },
    );
    expect(pulled.code, pulled.err).toBe(0);
  });

  it('--region wins over the environment; no region at all is said so, with what to do', async () => {
    const stack = await stackIn('sa-east-1');
    received.length = 0;
    const chosen = await runScript('send.ts', ['--test', '--mention', '--stack', stack, '--region', 'sa-east-1'], {
      ...aws(),
      AWS_DEFAULT_REGION: 'eu-north-1',
    });
    expect(chosen.code, chosen.err).toBe(0);
    // Asked for, the mention is left to the relay, which adds it as to any alert; the sender is told so.
    expect(chosen.err).toContain('with --mention the relay adds it to this test alert');
    expect(received[0]?.headers).not.toHaveProperty('x-cost-alert-relay-test');

    const none = await runScript('send.ts', ['--test', '--stack', stack], aws());
    expect(none.code).toBe(2);
    expect(none.err).toContain(`Could not read the stack ${stack}: Error: Region is missing.`);
    expect(none.err).toContain('AWS_DEFAULT_REGION');
  });
});

describe('npm run send -- --url with credentials in it', () => {
  it('is refused, exit 2, pointing to --basic, without repeating them; nothing is sent', async () => {
    received.length = 0;
    const withCredentials = relayUrl.replace('http://', `http://relay:${BASIC_PASSWORD}@`);
    const result = await runScript('send.ts', ['--test', '--url', withCredentials], {});
    expect(result.code).toBe(2);
    expect(result.err).toContain('has credentials in it');
    expect(result.err).toContain('--basic USER:PASSWORD');
    expect(result.err).toContain(`--url ${relayUrl}`);
    expect(leaks(result.out + result.err)).toBeUndefined();
    expect(result.out + result.err).not.toContain('relay:');
    expect(received).toHaveLength(0);

    const fromEnvironment = await runScript('send.ts', ['--test'], { RELAY_URL: withCredentials });
    expect(fromEnvironment.code).toBe(2);
    expect(fromEnvironment.err).toContain('RELAY_URL has credentials in it');
    expect(leaks(fromEnvironment.out + fromEnvironment.err)).toBeUndefined();
    expect(received).toHaveLength(0);
  });
});

describe('files the documentation tells you to create', () => {
  const docs = ['README.md', ...readdirSync(join(root, 'docs')).map((name) => `docs/${name}`)].filter((f) => f.endsWith('.md'));
  const text = docs.map((file) => readFileSync(join(root, file), 'utf8')).join('\n');
  // Files a command writes: --output FILE, > FILE, and the files commands read back that hold secrets.
  const named = new Set<string>(['samconfig.toml', 'relay.config.json', 'relay-config.json', 'env.json']);
  for (const match of text.matchAll(/--output[ =]([\w./-]+\.(?:json|toml|txt|yaml))/g)) named.add(match[1] as string);
  for (const match of text.matchAll(/>\s*([\w./-]+\.(?:json|toml|txt|yaml))/g)) named.add(match[1] as string);
  for (const match of text.matchAll(/mv \S+ ([\w./-]+\.toml)/g)) named.add(match[1] as string);

  it.each([...named])('git ignores %s', (file) => {
    const checked = spawnSync('git', ['check-ignore', '--no-index', '-q', file], { cwd: root });
    expect(checked.status, `${file} is not ignored by .gitignore`).toBe(0);
  });
});

describe('docs/deploy.md', () => {
  it("lists every template parameter with the template's default", () => {
    const doc = readFileSync(join(root, 'docs/deploy.md'), 'utf8');
    const template = loadTemplate(join(root, 'template.yaml'));
    for (const [name, parameter] of Object.entries(template.Parameters)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      const shown = parameter.Default === undefined ? '(required)' : parameter.Default === '' ? '(empty)' : `\`${parameter.Default}\``;
      expect(row?.split(' | ')[1], name).toBe(shown);
    }
  });
});
