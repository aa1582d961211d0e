import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run apikey -- ...` as an operator runs it; credentials only through the environment or stdin. */
function apikey(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const name of ['COST_API_BASE_URL', 'COST_API_USERNAME', 'COST_API_PASSWORD']) {
    if (!options.env?.[name]) delete env[name];
  }
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'apikey', '--', ...args], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

describe('npm run apikey', () => {
  let platform: FakePlatform;
  let env: Record<string, string>;

  beforeAll(async () => {
    platform = await startFakePlatform();
    env = { COST_API_USERNAME: platform.username, COST_API_PASSWORD: platform.password };
  });
  afterAll(() => platform.close());
  beforeEach(() => platform.reset());

  function expectNoSecrets(run: Run): void {
    const all = run.stdout + run.stderr;
    expect(all).not.toContain(platform.password);
    expect(all).not.toContain(platform.userKey);
    for (const token of platform.issuedTokens) expect(all).not.toContain(token);
  }

  it('--list prints the accounts and the cost centers to choose from', async () => {
    const run = await apikey(['--list', '--base-url', platform.url], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/12345\s+123456789012\s+AWS\s+Production payer/);
    expect(run.stdout).toMatch(/67890\s+210987654321\s+AWS\s+Staging payer/);
    expect(run.stdout).toMatch(/24680\s+sub-azure-0001\s+Azure\s+Azure EA/);
    expect(run.stdout).toMatch(/cc-100\s+Data platform/);
    expect(run.stdout).toMatch(/cc-200\s+Web shop/);
    expect(run.stdout).toMatch(/cc-300\s+QA/);
    expectNoSecrets(run);
    // The platform saw the credentials in the JSON body, and account-scoped keys for the cost centers.
    expect(JSON.parse(platform.requests[0]?.body ?? '')).toEqual({ username: platform.username, password: platform.password });
    const scoped = platform.requests.filter((r) => r.path.endsWith('/cost-centers/management/list')).map((r) => r.headers['apikey']);
    expect(scoped).toEqual([`${platform.userKey}:12345:`, `${platform.userKey}:67890:`, `${platform.userKey}:24680:`]);
  });

  it('prints the key with the user key masked, and the whole secret value only with --reveal', async () => {
    const masked = await apikey(['--base-url', platform.url, '--account', 'Production payer', '--cost-center', 'Web shop'], { env });
    expect(masked.code, masked.stderr).toBe(0);
    expect(masked.stdout).toMatch(/apikey\s+\*\*\*\*\w{4}:12345:cc-200/);
    expectNoSecrets(masked);

    const revealed = await apikey(['--base-url', platform.url, '--account', '210987654321', '--reveal'], { env });
    expect(revealed.code, revealed.stderr).toBe(0);
    expect(JSON.parse(revealed.stdout)).toMatchObject({
      account: '210987654321',
      costCenter: '',
      apikey: `${platform.userKey}:67890:`,
      authorization: platform.issuedTokens.at(-1),
      accountKey: '67890',
      accountName: 'Staging payer',
    });
    expect(revealed.stdout + revealed.stderr).not.toContain(platform.password);
  });

  it('reads the credentials from stdin when they are not in the environment, without echoing the password', async () => {
    const run = await apikey(['--base-url', platform.url, '--account', '12345'], { input: `${platform.username}\n${platform.password}\n` });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Platform password');
    expect(run.stdout).toMatch(/apikey\s+\*\*\*\*\w{4}:12345:\s/);
    expectNoSecrets(run);
  });

  it('says where refused credentials came from, without repeating them', async () => {
    const run = await apikey(['--base-url', platform.url, '--account', '12345'], {
      env: { COST_API_USERNAME: platform.username, COST_API_PASSWORD: 'wrong-password-77' },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('refused the username and password from COST_API_USERNAME/COST_API_PASSWORD (HTTP 401)');
    expect(run.stdout + run.stderr).not.toContain('wrong-password-77');
  });

  it('refuses credentials given as arguments before contacting the platform', async () => {
    const run = await apikey(['--base-url', platform.url, '--list', '--password', 'argv-password-1'], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('never taken from arguments');
    expect(run.stdout + run.stderr).not.toContain('argv-password-1');
    expect(platform.requests).toHaveLength(0);
  });

  it('lists the accounts when the one asked for does not exist', async () => {
    const run = await apikey(['--base-url', platform.url, '--account', 'Marketing'], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No payer account matches "Marketing"');
    expect(run.stderr).toContain('"Azure EA" (accountKey 24680');
  });
});
