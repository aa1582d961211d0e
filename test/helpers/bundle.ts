import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface InvokeOptions {
  /** The function's timeout, for context.getRemainingTimeInMillis(). */
  timeoutMs?: number;
}

export interface RunningBundle {
  invoke<T = unknown>(event: unknown, options?: InvokeOptions): Promise<T>;
  /** Everything the function wrote to stdout and stderr so far. */
  output(): string;
  /** stdout lines that are JSON log records (metric lines, which carry `_aws`, are not). */
  logRecords(): Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * Starts `dist/<name>/index.mjs` in a fresh Node process with exactly `env` (plus PATH);
 * `name` may instead be the absolute path of a folder such as a copy of one under dist/.
 */
export async function startBundle(name: string, env: Record<string, string>): Promise<RunningBundle> {
  const folder = isAbsolute(name) ? name : `${root}dist/${name}`;
  const child: ChildProcess = fork(fileURLToPath(new URL('./bundle-runner.mjs', import.meta.url)), [join(folder, 'index.mjs')], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // Kept in step with bundle-runner.mjs: results arrive on stdout as marked lines.
  const MARK = '\u0000invocation\u0000';
  const pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let out = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith(MARK)) {
        out += `${line}\n`;
        continue;
      }
      const reply = JSON.parse(line.slice(MARK.length)) as { id: string; result?: unknown; error?: string };
      const waiter = pending.get(reply.id);
      if (!waiter) continue;
      pending.delete(reply.id);
      if (reply.error) waiter.reject(new Error(reply.error));
      else waiter.resolve(reply.result);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));

  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bundle exited with ${code} before it was ready:\n${out}`)));
    child.on('message', (message: { ready?: boolean }) => {
      if (message.ready) resolve();
    });
  });
  child.on('exit', () => {
    for (const waiter of pending.values()) waiter.reject(new Error(`bundle exited:\n${out}`));
    pending.clear();
  });

  return {
    invoke: (event, options = {}) =>
      new Promise((resolve, reject) => {
        const id = randomUUID();
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, event, timeoutMs: options.timeoutMs ?? 10_000 });
      }),
    output: () => out,
    logRecords: () =>
      out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((record) => !('_aws' in record)),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
