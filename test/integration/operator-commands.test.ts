import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { GetSecretValueCommand, ListSecretVersionIdsCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { closeServer } from '../helpers/loopback-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const moto = motoUrl();

function run(script: string, args: string[], env: Record<string, string> = {}, cwd = root): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const command = script.endsWith('.mjs') ? process.execPath : tsx;
    // stdin is not a terminal: push must be told --yes.
    const child = spawn(command, [join(root, 'scripts', script), ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'relay-ops-'));
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
    await writeFile(file, JSON.stringify({ auth: { method: 'basic', basic: { username: 'relay', pasword: PASSWORD } }, destinations: { default: { url: 'http://hooks.example.com/x' } } }));
    const result = await run('config.ts', ['validate', file]);
    expect(result.code).toBe(1);
    expect(result.err).toContain('auth.basic.password');
    expect(result.err).toContain('auth.basic.pasword');
    expect(result.err).toContain('destinations.default.url');
    expect(result.err + result.out).not.toContain(PASSWORD);
  });

  it('usage mistakes exit 2 and say what to do', async () => {
    expect(await run('config.ts', ['validate', join(dir, 'missing.json')])).toMatchObject({ code: 2, err: expect.stringContaining('No such file') });
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
  const current = async (id: string) => (await secretsClient(moto as string).send(new GetSecretValueCommand({ SecretId: id }))).SecretString;

  it('push shows the changed paths without values, writes a new current version, and pull gives it back', async () => {
    const id = await createSecret(secretsClient(moto as string), live, 'relay-config');
    const next = { ...live, auth: { ...live.auth, basic: { username: 'relay', password: 'next-pass-77' } }, routes: [{ when: { cloudProvider: ['aws'] }, to: ['default'] }] };
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
    for (const option of ['--url', '--stack', '--region', '--basic', '--bearer', '--header', '--content-type', '--help']) expect(help.out).toContain(option);
  });

  it('a missing file, a header without a colon or an unknown option is a usage error, not "could not reach the relay"', async () => {
    const missing = await run('send.ts', ['events/nope.json', '--url', url]);
    expect(missing).toMatchObject({ code: 2, err: expect.stringContaining('No such file: events/nope.json') });
    const header = await run('send.ts', ['events/anomaly-alert.json', '--url', url, '--header', 'X-Token abc']);
    expect(header).toMatchObject({ code: 2, err: expect.stringContaining('--header needs "Name: value"') });
    const unknown = await run('send.ts', ['--verbose', 'events/anomaly-alert.json']);
    expect(unknown).toMatchObject({ code: 2, err: expect.stringContaining("Unknown option '--verbose'") });
    expect(missing.err + header.err + unknown.err).not.toContain('Could not reach');
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

  it.skipIf(!moto)('--stack posts to the stack\'s WebhookUrl with the Basic credentials and headers of its configuration', async () => {
    const secrets = secretsClient(moto as string);
    const configId = await createSecret(secrets, { ...live, auth: { ...live.auth, headers: [{ key: 'X-Channel-Token', value: 'chan-tok-9' }] } }, 'relay-config');
    const stackName = `relay-${Date.now()}`;
    const cloudformation = new CloudFormationClient({ endpoint: moto, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
    await cloudformation.send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
          Outputs: { WebhookUrl: { Value: url }, RelayConfigSecretArn: { Value: configId } },
        }),
      }),
    );
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
});

describe('npm run deploy', () => {
  it('builds, then runs sam deploy: guided the first time (samconfig.toml created from the example), plain afterwards', async () => {
    const project = await mkdtemp(join(tmpdir(), 'relay-deploy-'));
    await writeFile(join(project, 'samconfig.example.toml'), await readFile(join(root, 'samconfig.example.toml')));
    // A stand-in for the SAM CLI that records how it was called.
    const sam = join(project, 'fake-sam');
    await writeFile(sam, `#!/bin/sh\necho "$@" >> "${join(project, 'sam-calls')}"\n`);
    await chmod(sam, 0o755);
    // A stand-in for the build (the real one would replace dist/ under the other tests).
    const build = join(project, 'fake-build.mjs');
    await writeFile(build, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(join(project, 'sam-calls'))}, 'build\\n');\n`);
    const env = { SAM_CLI: sam, BUILD_SCRIPT: build };
    const first = await run('deploy.mjs', ['--region', 'eu-west-1'], env, project);
    expect(first.code).toBe(0);
    expect(first.out).toContain('samconfig.toml created from samconfig.example.toml');
    const second = await run('deploy.mjs', [], env, project);
    expect(second.code).toBe(0);
    const calls = (await readFile(join(project, 'sam-calls'), 'utf8')).trim().split('\n');
    expect(calls).toEqual(['--version', 'build', 'deploy --guided --region eu-west-1', '--version', 'build', 'deploy']);

    const failing = join(project, 'failing-build.mjs');
    await writeFile(failing, 'process.exit(3);\n');
    expect((await run('deploy.mjs', [], { ...env, BUILD_SCRIPT: failing }, project)).code).toBe(3);
    expect((await readFile(join(project, 'sam-calls'), 'utf8')).trim().split('\n')).toHaveLength(7);
    expect(await readFile(join(project, 'samconfig.toml'), 'utf8')).toContain('resolve_s3 = true');
  });

  it('without the SAM CLI it says how to get it', async () => {
    const result = await run('deploy.mjs', [], { SAM_CLI: '/nonexistent/sam' });
    expect(result.code).toBe(2);
    expect(result.err).toContain('Install it');
  });
});
