import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { GetSecretValueCommand, ListSecretVersionIdsCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { closeServer } from '../helpers/loopback-server.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const moto = motoUrl();

type Result = { code: number | null; out: string; err: string };

function run(script: string, args: string[], env: Record<string, string> = {}, cwd = root): Promise<Result> {
  return runFile(join(root, 'scripts', script), args, env, cwd);
}

function runFile(path: string, args: string[], env: Record<string, string> = {}, cwd = root): Promise<Result> {
  return new Promise((resolve) => {
    const command = path.endsWith('.mjs') ? process.execPath : tsx;
    // stdin is not a terminal: push must be told --yes.
    const child = spawn(command, [path, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

const PASSWORD = 'live-basic-pass-3c1';
const WEBHOOK = 'https://hooks.slack.com/services/T0/B0/live-webhook-secret';
const live = { auth: { method: 'basic', basic: { username: 'relay', password: PASSWORD } }, destinations: { default: { url: WEBHOOK } } };
// Not JSON (the password is not quoted), and JSON.parse's message would quote the text around it.
const NOT_JSON = `{"auth":{"method":"basic","basic":{"username":"relay","password":${PASSWORD}}},"destinations":{"default":{"url":"${WEBHOOK}"}}}`;

/** Whether any 8 characters in a row of the password or the webhook URL (after its scheme) were said. */
function leaks(result: Result): boolean {
  const said = result.out + result.err;
  return [PASSWORD, WEBHOOK.replace('https://', '')].some((value) =>
    Array.from({ length: value.length - 7 }, (_, i) => value.slice(i, i + 8)).some((piece) => said.includes(piece)),
  );
}

/** Runs a script in a pseudo-terminal (stdin.isTTY), typing `answer` into it; output comes back merged. */
function runInTerminal(script: string, args: string[], env: Record<string, string>, answer: string): Promise<Result> {
  return new Promise((resolve) => {
    const ptyRun = 'import pty, sys\nstatus = pty.spawn(sys.argv[1:])\nsys.exit(status >> 8 if status & 0xff == 0 else 1)';
    const child = spawn('python3', ['-c', ptyRun, tsx, join(root, 'scripts', script), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('[y/N]')) child.stdin.end(answer);
    });
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out, err: '' }));
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'relay-ops-'));
});

describe('an error no operator command expected', () => {
  const unexpected = join(root, 'scripts/unexpected.ts');
  async function runProgram(name: string, body: string): Promise<Result> {
    const program = join(dir, name);
    await writeFile(
      program,
      `import { guardUnexpectedErrors, unexpectedErrorMessage } from ${JSON.stringify(unexpected)};\nguardUnexpectedErrors('npm run demo');\n${body}\n`,
    );
    return runFile(program, []);
  }
  const said = (kind: string) => `npm run demo failed unexpectedly (${kind}). Its details are not shown: they may contain secrets.\n`;

  it('is named by its kind only, caught or thrown from a callback: its message would quote the secret', async () => {
    const thrown = await runProgram(
      'thrown.ts',
      `try { JSON.parse(${JSON.stringify(PASSWORD)}); } catch (error) { console.error(unexpectedErrorMessage('npm run demo', error)); }
setTimeout(() => JSON.parse(${JSON.stringify(NOT_JSON)}), 0);`,
    );
    expect(thrown).toEqual({ code: 1, out: '', err: said('SyntaxError').repeat(2) });
    const rejected = await runProgram(
      'rejected.ts',
      `void Promise.reject(Object.assign(new Error(${JSON.stringify(WEBHOOK)}), { code: 'ECONNRESET' }));`,
    );
    expect(rejected).toEqual({ code: 1, out: '', err: said('Error ECONNRESET') });
  });
});

describe('npm run config -- validate', () => {
  it('exit 0 and a summary for a valid file', async () => {
    const file = join(dir, 'valid.json');
    await writeFile(file, JSON.stringify(live));
    const result = await run('config.ts', ['validate', file]);
    expect(result).toMatchObject({ code: 0 });
    expect(result.out).toContain('is valid: authentication basic, 1 destination(s), 0 route(s)');
  });

  it('exit 1 with every problem by path, a typo hint, and no value', async () => {
    const file = join(dir, 'invalid.json');
    await writeFile(
      file,
      JSON.stringify({
        auth: { method: 'basic', basic: { username: 'relay', pasword: PASSWORD } },
        destinations: { default: { url: 'http://hooks.example.com/x' } },
      }),
    );
    const result = await run('config.ts', ['validate', file]);
    expect(result.code).toBe(1);
    expect(result.err).toContain('auth.basic.password');
    expect(result.err).toContain('auth.basic.pasword');
    expect(result.err).toContain('destinations.default.url');
    expect(result.err + result.out).not.toContain(PASSWORD);
  });

  it('usage mistakes exit 2 and say what to do', async () => {
    expect(await run('config.ts', ['validate', join(dir, 'missing.json')])).toMatchObject({
      code: 2,
      err: expect.stringContaining('No such file'),
    });
    expect(await run('config.ts', ['frobnicate'])).toMatchObject({ code: 2, err: expect.stringContaining('Unknown command "frobnicate"') });
    const help = await run('config.ts', ['--help']);
    expect(help.code).toBe(0);
    for (const command of ['validate <file>', 'push <file>', 'pull']) expect(help.out).toContain(command);
  });
});

describe.skipIf(!moto)('npm run config -- push / pull against Secrets Manager', () => {
  const env = () => awsEnvironment(moto as string);
  const versions = async (id: string) =>
    (await secretsClient(moto as string).send(new ListSecretVersionIdsCommand({ SecretId: id }))).Versions?.length ?? 0;
  const current = async (id: string) =>
    (await secretsClient(moto as string).send(new GetSecretValueCommand({ SecretId: id }))).SecretString;

  it('push shows the changed paths without values, writes a new current version, and pull gives it back', async () => {
    const id = await createSecret(secretsClient(moto as string), live, 'relay-config');
    const next = {
      ...live,
      auth: { ...live.auth, basic: { username: 'relay', password: 'next-pass-77' } },
      routes: [{ when: { cloudProvider: ['aws'] }, to: ['default'] }],
    };
    const file = join(dir, 'next.json');
    await writeFile(file, JSON.stringify(next));

    const refused = await run('config.ts', ['push', file, '--secret-id', id], env());
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('add --yes');
    expect(await versions(id)).toBe(1);

    const pushed = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
    expect(pushed.code).toBe(0);
    expect(pushed.out).toContain('~ auth.basic.password');
    expect(pushed.out).toContain('+ routes');
    expect(pushed.out + pushed.err).not.toMatch(/next-pass-77|live-basic-pass|live-webhook-secret/);
    expect(JSON.parse((await current(id)) ?? '')).toEqual(next);

    const again = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
    expect(again.out).toContain('nothing to write');
    expect(await versions(id)).toBe(2);

    const pulled = await run('config.ts', ['pull', '--secret-id', id, '--output', join(dir, 'pulled.json')], env());
    expect(pulled.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'pulled.json'), 'utf8'))).toEqual(next);
    expect((await stat(join(dir, 'pulled.json'))).mode & 0o077).toBe(0);
  });

  it('an invalid file changes nothing', async () => {
    const id = await createSecret(secretsClient(moto as string), live, 'relay-config');
    const file = join(dir, 'broken.json');
    await writeFile(file, JSON.stringify({ auth: { method: 'basic' }, destinations: {} }));
    const result = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
    expect(result.code).toBe(1);
    expect(result.err).toContain('Nothing was written');
    expect(await versions(id)).toBe(1);
    expect(JSON.parse((await current(id)) ?? '')).toEqual(live);
  });

  it('pull replaces an existing file with one readable only by its owner, whatever its mode was', async () => {
    const id = await createSecret(secretsClient(moto as string), live, 'relay-config');
    const file = join(dir, 'old-world-readable.json');
    await writeFile(file, '{"left": "over"}\n');
    await chmod(file, 0o644);
    const pulled = await run('config.ts', ['pull', '--secret-id', id, '--output', file], env());
    expect(pulled.code).toBe(0);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(live);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(leaks(pulled)).toBe(false);
  });

  it('pull of a secret that is not JSON says so in its own words and shows none of it; --output gets it into a private file', async () => {
    const id = await createSecret(secretsClient(moto as string), NOT_JSON, 'relay-config');
    const printed = await run('config.ts', ['pull', '--secret-id', id], env());
    expect(printed.code).toBe(1);
    expect(printed.err).toContain(`The relay configuration secret ${id} is not valid JSON`);
    expect(printed.err).toContain('--output FILE');
    expect(leaks(printed)).toBe(false);

    const file = join(dir, 'not-json.json');
    await writeFile(file, 'old');
    await chmod(file, 0o644);
    const written = await run('config.ts', ['pull', '--secret-id', id, '--output', file], env());
    expect(written.code).toBe(1);
    expect(written.err).toContain('is not valid JSON');
    expect(written.err).toContain(`Wrote it as it is to ${file}`);
    expect(leaks(written)).toBe(false);
    expect(await readFile(file, 'utf8')).toBe(NOT_JSON);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('pull of JSON that is no valid configuration gives it back, with its problems by path on stderr', async () => {
    const id = await createSecret(secretsClient(moto as string), { ...live, auth: { method: 'basic', basic: PASSWORD } }, 'relay-config');
    const pulled = await run('config.ts', ['pull', '--secret-id', id, '--output', join(dir, 'wrong-shape.json')], env());
    expect(pulled.code).toBe(0);
    expect(pulled.err).toContain('is not a valid relay configuration');
    expect(pulled.err).toContain('auth.basic');
    expect(leaks(pulled)).toBe(false);
  });

  it('push over a live secret that is not JSON says so without quoting it, and replaces it only when told to', async () => {
    const id = await createSecret(secretsClient(moto as string), NOT_JSON, 'relay-config');
    const file = join(dir, 'mended.json');
    await writeFile(file, JSON.stringify(live));

    const asked = await run('config.ts', ['push', file, '--secret-id', id], env());
    expect(asked.code).toBe(1);
    expect(asked.out).toContain(`The live value of ${id} is not valid JSON (the relay cannot use it): it is replaced as a whole`);
    expect(leaks(asked)).toBe(false);
    expect(await current(id)).toBe(NOT_JSON);

    const pushed = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
    expect(pushed.code).toBe(0);
    expect(leaks(pushed)).toBe(false);
    expect(JSON.parse((await current(id)) ?? '')).toEqual(live);
  });

  describe('a push that weakens authentication', () => {
    const guarded = { ...live, auth: { ...live.auth, headers: [{ key: 'X-Channel-Token', value: 'chan-tok-9' }] } };
    const open = { auth: { method: 'none' }, destinations: live.destinations };

    it('is named change by change, and refused with --yes alone: nothing written', async () => {
      const id = await createSecret(secretsClient(moto as string), guarded, 'relay-config');
      const file = join(dir, 'open.json');
      await writeFile(file, JSON.stringify(open));
      const refused = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
      expect(refused.code).toBe(1);
      expect(refused.out).toContain('This weakens authentication:');
      expect(refused.out).toContain('! authentication method changes from basic to none');
      expect(refused.out).toContain('! custom header X-Channel-Token is no longer required');
      expect(refused.err).toContain('add --allow-weaker-auth');
      expect(refused.out + refused.err).not.toContain('chan-tok-9');
      expect(leaks(refused)).toBe(false);
      expect(await versions(id)).toBe(1);

      // A header dropped while the method stays is a weakening too.
      await writeFile(file, JSON.stringify(live));
      const headerOnly = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
      expect(headerOnly.code).toBe(1);
      expect(headerOnly.out).toContain('! custom header X-Channel-Token is no longer required');
      expect(headerOnly.out).not.toContain('authentication method');
      expect(await versions(id)).toBe(1);
    });

    it('is written with --allow-weaker-auth and --yes', async () => {
      const id = await createSecret(secretsClient(moto as string), guarded, 'relay-config');
      const file = join(dir, 'open-allowed.json');
      await writeFile(file, JSON.stringify(open));
      const pushed = await run('config.ts', ['push', file, '--secret-id', id, '--yes', '--allow-weaker-auth'], env());
      expect(pushed.code).toBe(0);
      expect(pushed.out).toContain('! authentication method changes from basic to none');
      expect(pushed.out).toContain('Written.');
      expect(pushed.out + pushed.err).not.toContain('chan-tok-9');
      expect(JSON.parse((await current(id)) ?? '')).toEqual(open);
    });

    it('in a terminal, is refused before anything is asked without --allow-weaker-auth, and asked with it', async () => {
      const id = await createSecret(secretsClient(moto as string), guarded, 'relay-config');
      const file = join(dir, 'open-terminal.json');
      await writeFile(file, JSON.stringify(open));
      const refused = await runInTerminal('config.ts', ['push', file, '--secret-id', id], env(), 'y\r');
      expect(refused.code).toBe(1);
      expect(refused.out).toContain('add --allow-weaker-auth');
      expect(refused.out).not.toContain('[y/N]');
      expect(await versions(id)).toBe(1);

      const allowed = await runInTerminal('config.ts', ['push', file, '--secret-id', id, '--allow-weaker-auth'], env(), 'y\r');
      expect(allowed.out).toContain('[y/N]');
      expect(allowed.out).toContain('Written.');
      expect(allowed.code).toBe(0);
      expect(JSON.parse((await current(id)) ?? '')).toEqual(open);
    });

    it('new values for the password and the header are not weaker: --yes is enough', async () => {
      const id = await createSecret(secretsClient(moto as string), guarded, 'relay-config');
      const file = join(dir, 'new-values.json');
      const next = {
        ...guarded,
        auth: {
          method: 'basic',
          basic: { username: 'relay', password: 'next-pass-78' },
          headers: [{ key: 'X-Channel-Token', value: 'chan-tok-10' }],
        },
      };
      await writeFile(file, JSON.stringify(next));
      const pushed = await run('config.ts', ['push', file, '--secret-id', id, '--yes'], env());
      expect(pushed.code).toBe(0);
      expect(pushed.out).toContain('~ auth.basic.password');
      expect(pushed.out).toContain('~ auth.headers[0].value');
      expect(pushed.out).not.toContain('weakens');
      expect(pushed.out + pushed.err).not.toMatch(/next-pass-78|chan-tok-10|chan-tok-9/);
      expect(JSON.parse((await current(id)) ?? '')).toEqual(next);
    });
  });

  it('a secret that does not exist is named, and nothing is created', async () => {
    const file = join(dir, 'valid2.json');
    await writeFile(file, JSON.stringify(live));
    const result = await run('config.ts', ['push', file, '--secret-id', 'no-such-relay-config', '--yes'], env());
    expect(result).toMatchObject({ code: 2, err: expect.stringContaining('No secret no-such-relay-config') });
  });
});

describe('npm run send', () => {
  let relay: Server;
  let url: string;
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
    const address = relay.address() as { port: number };
    url = `http://127.0.0.1:${address.port}/webhook`;
  });
  afterAll(() => closeServer(relay));

  it('--help lists every option', async () => {
    const help = await run('send.ts', ['--help']);
    expect(help.code).toBe(0);
    for (const option of [
      '--test',
      '--mention',
      '--url',
      '--stack',
      '--region',
      '--basic',
      '--bearer',
      '--header',
      '--content-type',
      '--help',
    ])
      expect(help.out).toContain(option);
  });

  it('a missing file, a header without a colon, an unknown option or --mention without --test is a usage error, not "could not reach the relay"', async () => {
    const missing = await run('send.ts', ['events/nope.json', '--url', url]);
    expect(missing).toMatchObject({ code: 2, err: expect.stringContaining('No such file: events/nope.json') });
    const header = await run('send.ts', ['events/anomaly-alert.json', '--url', url, '--header', 'X-Token abc']);
    expect(header).toMatchObject({ code: 2, err: expect.stringContaining('--header needs "Name: value"') });
    const unknown = await run('send.ts', ['--verbose', 'events/anomaly-alert.json']);
    expect(unknown).toMatchObject({ code: 2, err: expect.stringContaining("Unknown option '--verbose'") });
    const mention = await run('send.ts', ['--mention', 'events/anomaly-alert.json', '--url', url]);
    expect(mention).toMatchObject({ code: 2, err: expect.stringContaining('--mention goes with --test') });
    expect(missing.err + header.err + unknown.err + mention.err).not.toContain('Could not reach');
  });

  it('a relay that is not there is said so, with a hint', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await closeServer(closed);
    const result = await run('send.ts', ['events/anomaly-alert.json', '--url', `http://127.0.0.1:${port}/webhook`]);
    expect(result).toMatchObject({ code: 1, err: expect.stringContaining('ECONNREFUSED') });
    expect(result.err).toContain('npm start');
  });

  /** A stack in the emulator whose outputs point at the local relay and at a configuration secret holding `config`. */
  async function stackWith(config: unknown): Promise<string> {
    const configId = await createSecret(secretsClient(moto as string), config, 'relay-config');
    const stackName = `relay-${randomUUID()}`;
    const cloudformation = new CloudFormationClient({
      endpoint: moto,
      region: 'us-east-1',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    try {
      await cloudformation.send(
        new CreateStackCommand({
          StackName: stackName,
          TemplateBody: JSON.stringify({
            Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
            Outputs: { WebhookUrl: { Value: url }, RelayConfigSecretArn: { Value: configId } },
          }),
        }),
      );
    } finally {
      cloudformation.destroy();
    }
    return stackName;
  }

  it.skipIf(!moto)("--stack posts to the stack's WebhookUrl with the Basic credentials and headers of its configuration", async () => {
    const stackName = await stackWith({ ...live, auth: { ...live.auth, headers: [{ key: 'X-Channel-Token', value: 'chan-tok-9' }] } });
    received.length = 0;
    const result = await run('send.ts', ['--stack', stackName, 'events/anomaly-alert.json'], awsEnvironment(moto as string));
    expect(result.out).toContain('HTTP 200');
    expect(result.code).toBe(0);
    expect(received).toHaveLength(1);
    expect(received[0]?.headers['authorization']).toBe(`Basic ${Buffer.from(`relay:${PASSWORD}`).toString('base64')}`);
    expect(received[0]?.headers['x-channel-token']).toBe('chan-tok-9');
    expect(result.out + result.err).not.toContain(PASSWORD);

    const unknown = await run('send.ts', ['--stack', 'no-such-stack', 'events/anomaly-alert.json'], awsEnvironment(moto as string));
    expect(unknown).toMatchObject({ code: 2, err: expect.stringContaining('No stack named no-such-stack') });
  });

  it.skipIf(!moto)(
    '--stack with a configuration secret that is not JSON: said in our words, nothing of it shown, nothing sent',
    async () => {
      const stackName = await stackWith(NOT_JSON);
      received.length = 0;
      const result = await run('send.ts', ['--stack', stackName, 'events/anomaly-alert.json'], awsEnvironment(moto as string));
      expect(result.code).toBe(1);
      expect(result.err).toMatch(/The relay configuration secret relay-config-\S+ is not valid JSON, so the relay cannot use it/);
      expect(result.err).not.toMatch(/SyntaxError|at JSON\.parse|node:internal/);
      expect(leaks(result)).toBe(false);
      expect(received).toHaveLength(0);
    },
  );

  it.skipIf(!moto)('--stack with a configuration secret of the wrong shape: the problem by path, no value, nothing sent', async () => {
    for (const auth of [
      { method: 'basic', basic: PASSWORD },
      PASSWORD,
      { method: 'basic', basic: { username: 'relay', password: PASSWORD }, headers: WEBHOOK },
    ]) {
      const stackName = await stackWith({ ...live, auth });
      received.length = 0;
      const result = await run('send.ts', ['--stack', stackName, 'events/anomaly-alert.json'], awsEnvironment(moto as string));
      expect(result.code).toBe(1);
      expect(result.err).toContain('has no usable auth block');
      expect(leaks(result)).toBe(false);
      expect(received).toHaveLength(0);
    }
    const header = await stackWith({
      ...live,
      auth: { ...live.auth, headers: [{ key: 'X-Channel-Token', value: `${PASSWORD}\r\nX-Injected: 1` }] },
    });
    const result = await run('send.ts', ['--stack', header, 'events/anomaly-alert.json'], awsEnvironment(moto as string));
    expect(result).toMatchObject({ code: 1, err: expect.stringContaining('auth.headers[0] (X-Channel-Token) that cannot be sent') });
    expect(leaks(result)).toBe(false);
    expect(received).toHaveLength(0);
  });
});

describe('npm run send -- --test against the built relay', () => {
  let slack: FakeSlack;
  let relay: RunningBundle;
  let bridge: Server;
  let relayUrl: string;

  beforeAll(async () => {
    slack = await startFakeSlack();
    const config = join(dir, 'mentioning-relay.json');
    await writeFile(
      config,
      JSON.stringify({ ...live, destinations: { default: { url: slack.url('/services/T0/B0/team'), mention: '<!here>' } } }),
    );
    relay = await startBundle('webhook-relay', { RELAY_CONFIG_SECRET_ID: `file:${config}` });
    // API Gateway's part: each request becomes an HTTP API event for the bundle, its answer the response.
    bridge = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')]),
        );
        const answer = await relay.invoke<{ statusCode: number; headers: Record<string, string>; body: string }>(
          httpApiEvent({ headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.writeHead(answer.statusCode, answer.headers).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => bridge.listen(0, '127.0.0.1', resolve));
    relayUrl = `http://127.0.0.1:${(bridge.address() as { port: number }).port}/webhook`;
  });
  afterAll(async () => {
    if (bridge) await closeServer(bridge);
    await relay?.stop();
    await slack?.close();
  });

  it("pings no one: the destination's mention is left out, and only --mention puts it in", async () => {
    const quiet = await run('send.ts', ['--test', '--url', relayUrl, '--basic', `relay:${PASSWORD}`]);
    expect(quiet.code, quiet.err).toBe(0);
    expect(quiet.out).toContain('HTTP 200');
    const loud = await run('send.ts', ['--test', '--mention', '--url', relayUrl, '--basic', `relay:${PASSWORD}`]);
    expect(loud.code, loud.err).toBe(0);

    const [first, second, ...more] = slack.accepted().map((request) => JSON.stringify(request.body));
    expect(more).toEqual([]);
    expect(first).toContain('Test alert from Cost Alert Relay');
    expect(first).not.toContain('<!here>');
    expect(second).toContain('Test alert from Cost Alert Relay');
    expect(second).toContain('<!here>');
  });
});

// npm run deploy: test/integration/deploy.test.ts.
