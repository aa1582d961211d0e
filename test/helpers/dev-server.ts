// `npm start` (scripts/dev-server.ts) as a child process in a temporary working directory, on
// a free port, without the RELAY_CONFIG_SECRET_ID of the shell that runs the tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const tsx = join(root, 'node_modules/.bin/tsx');

export interface DevServerOptions {
  /** Writes files into the working directory before the start; gets the port the server will use. */
  prepare?: (cwd: string, port: number) => Promise<void>;
  env?: Record<string, string | undefined>;
}

interface Started {
  child: ChildProcess;
  cwd: string;
  port: number;
  output(): string;
}

async function spawnDevServer(options: DevServerOptions): Promise<Started> {
  const port = await freePort();
  const cwd = await mkdtemp(join(tmpdir(), 'relay-dev-'));
  await options.prepare?.(cwd, port);
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
  delete env['RELAY_CONFIG_SECRET_ID'];
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const child = spawn(tsx, [join(root, 'scripts/dev-server.ts')], { cwd, env });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  return { child, cwd, port, output: () => output };
}

export interface DevServer {
  /** http://127.0.0.1:<port>, without a path. */
  origin: string;
  port: number;
  output(): string;
  /** Resolves once the output contains `text`, or after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  stop(): void;
}

/** A running `npm start`; rejects with its output when it exits instead of listening. */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const { child, port, output } = await spawnDevServer(options);
  const waitFor = async (text: string, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!output().includes(text) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  };
  await waitFor('listening on', 30_000);
  if (!output().includes('listening on')) {
    child.kill();
    throw new Error(`npm start did not listen:\n${output()}`);
  }
  return { origin: `http://127.0.0.1:${port}`, port, output, waitFor, stop: () => child.kill() };
}

/**
 * An `npm start` expected to stop by itself: its exit code, its output, and its working
 * directory. One that listens instead is stopped at once, with code null.
 */
export async function runDevServerToExit(
  options: DevServerOptions = {},
  timeoutMs = 15_000,
): Promise<{ code: number | null; output: string; cwd: string }> {
  const { child, cwd, output } = await spawnDevServer(options);
  const code = await new Promise<number | null>((resolve) => {
    const deadline = Date.now() + timeoutMs;
    const poll = setInterval(() => {
      if (output().includes('listening on') || Date.now() > deadline) {
        clearInterval(poll);
        child.kill();
        resolve(null);
      }
    }, 50);
    child.on('exit', (exitCode) => {
      clearInterval(poll);
      resolve(exitCode);
    });
  });
  return { code, output: output(), cwd };
}
