import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
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
  /** stdout lines that are JSON log records. */
  logRecords(): Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Starts `dist/<name>/index.mjs` in a fresh Node process with exactly `env` (plus PATH). */
export async function startBundle(name: string, env: Record<string, string>): Promise<RunningBundle> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./bundle-runner.mjs', import.meta.url)), [`${root}dist/${name}/index.mjs`], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));

  const pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bundle exited with ${code} before it was ready:\n${out}`)));
    child.on('message', (message: { ready?: boolean; id?: string; result?: unknown; error?: string }) => {
      if (message.ready) return resolve();
      const waiter = message.id ? pending.get(message.id) : undefined;
      if (!waiter || !message.id) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error));
      else waiter.resolve(message.result);
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
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
