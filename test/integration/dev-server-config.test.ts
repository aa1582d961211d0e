// `npm start` checks its configuration before it listens: each problem names the file (or
// secret) and the path, and the server stops instead of failing at the first request.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { root, runDevServerToExit, startDevServer } from '../helpers/dev-server.js';
import { freePort } from '../helpers/ports.js';

const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/XXXX';
// No AWS at all: no region, no credentials, no profile, no instance metadata.
const NO_AWS = {
  AWS_REGION: undefined,
  AWS_DEFAULT_REGION: undefined,
  AWS_PROFILE: undefined,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_ENDPOINT_URL: undefined,
  AWS_CONFIG_FILE: '/nonexistent/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  AWS_EC2_METADATA_DISABLED: 'true',
};

function expectStoppedBeforeListening(result: { code: number | null; output: string }): void {
  expect(result.code).toBe(1);
  expect(result.output).not.toContain('listening on');
  expect(result.output).toContain('the relay configuration cannot be used, so nothing listens');
}

describe('npm start refuses a configuration it could not use', () => {
  it('names relay.config.json and the path of each problem: a typo and a plain-http URL', async () => {
    const result = await runDevServerToExit({
      prepare: (cwd) =>
        writeFile(
          join(cwd, 'relay.config.json'),
          JSON.stringify({
            auth: { method: 'basic', basic: { username: 'relay', password: 'do-not-print-me' }, header: [] },
            destinations: { default: { url: SLACK_URL }, ops: { url: 'http://example.com/hook-secret-path' } },
          }),
        ),
    });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain('relay.config.json: auth.header: unknown key; did you mean "headers"?');
    expect(result.output).toContain('relay.config.json: destinations.ops.url: must be an https URL');
    expect(result.output).not.toContain('do-not-print-me');
    expect(result.output).not.toContain('hook-secret-path');
  });

  it('says the line and column of a JSON syntax error, without quoting the text around it', async () => {
    const broken = '  "auth": { "method": "basic", "basic": { "username": "relay", "password": s3cret-unquoted } },';
    const lines = ['{', broken, `  "destinations": { "default": { "url": "${SLACK_URL}" } }`, '}'];
    const result = await runDevServerToExit({ prepare: (cwd) => writeFile(join(cwd, 'relay.config.json'), lines.join('\n')) });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain(`relay.config.json: line 2, column ${broken.indexOf('s3cret') + 1}: not valid JSON`);
    expect(result.output).not.toContain('s3cret-unquoted');
  });

  it('names the missing file of RELAY_CONFIG_SECRET_ID=file:… and where it was looked for', async () => {
    const result = await runDevServerToExit({ env: { RELAY_CONFIG_SECRET_ID: 'file:configs/relay.json' } });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain(`configs/relay.json: no such file (${join(result.cwd, 'configs/relay.json')}`);
  });

  it('says to write file: when RELAY_CONFIG_SECRET_ID names an existing file without it', async () => {
    const result = await runDevServerToExit({
      env: { RELAY_CONFIG_SECRET_ID: 'configs/relay.json', ...NO_AWS },
      prepare: async (cwd) => {
        await mkdir(join(cwd, 'configs'));
        await writeFile(
          join(cwd, 'configs/relay.json'),
          JSON.stringify({ auth: { method: 'none' }, destinations: { default: { url: SLACK_URL } } }),
        );
      },
    });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain('RELAY_CONFIG_SECRET_ID=configs/relay.json names a file');
    expect(result.output).toContain('write RELAY_CONFIG_SECRET_ID=file:configs/relay.json');
  });

  it('asks Secrets Manager for a path-like id that is no file, and then hints at file:', async () => {
    const result = await runDevServerToExit({ env: { RELAY_CONFIG_SECRET_ID: 'relay.config.json', ...NO_AWS } });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain('secret relay.config.json: cannot be read from Secrets Manager (RegionMissingError)');
    expect(result.output).toContain('write RELAY_CONFIG_SECRET_ID=file:relay.config.json');
  });

  it.skipIf(!motoUrl())('reads a secret id from Secrets Manager and names the secret and the path of each problem', async () => {
    const url = motoUrl()!;
    const secretId = await createSecret(
      secretsClient(url),
      { auth: { method: 'none' }, destinations: { ops: { url: SLACK_URL } } },
      'dev-server-config',
    );
    const result = await runDevServerToExit({ env: { RELAY_CONFIG_SECRET_ID: secretId, ...awsEnvironment(url) } });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain(`secret ${secretId}: destinations.default: is required`);
  });
});

describe('npm start with the embedded default configuration', () => {
  it('leaves no folder behind, and at most one file per port however it was stopped', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'relay-tmpdir-'));
    const own = () => readdirSync(tmp).filter((name) => name.startsWith('cost-alert-relay-'));
    // Its temporary files go where TMPDIR says; the test's own working directory is elsewhere.
    const port = await freePort();
    for (let run = 0; run < 2; run++) {
      const server = await startDevServer({ env: { TMPDIR: tmp, PORT: String(port) } });
      try {
        expect(own()).toEqual([`cost-alert-relay-embedded-${port}.json`]);
      } finally {
        server.stop();
      }
      // Stopped through tsx, which may kill it before it removes the file (on a busy machine): the next start takes it over.
      await new Promise((r) => setTimeout(r, 500));
      expect(own().length).toBeLessThanOrEqual(1);
    }
  });
});

describe('one name for a relay configuration file', () => {
  it('npm start points out relay-config.json, the name older docs gave config pull’s file, and the docs use relay.config.json', async () => {
    const server = await startDevServer({ prepare: (cwd) => writeFile(join(cwd, 'relay-config.json'), '{}') });
    try {
      expect(server.output()).toContain('npm start reads relay.config.json (with a dot); relay-config.json is here but not read');
      expect(server.output()).toContain('embedded default');
    } finally {
      server.stop();
    }
    const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
    const commands = docs.flatMap((file) =>
      readFileSync(join(root, 'docs', file), 'utf8')
        .split('\n')
        .filter((line) => line.includes('relay-config.json') && !line.includes('older docs'))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(commands).toEqual([]);
  });
});
