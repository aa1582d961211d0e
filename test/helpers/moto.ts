import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

export interface MotoServer {
  url: string;
  stop(): Promise<void>;
}

export function motoAvailable(): boolean {
  return spawnSync('moto_server', ['--help'], { stdio: 'ignore' }).status === 0;
}

async function waitUntilUp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${url}/moto-api/`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('moto_server did not start in time');
}

const SERIALISED = fileURLToPath(new URL('./moto-server.py', import.meta.url));

/** Whether `python3` has moto itself, to run it through moto-server.py (where moto_server came from another Python, it does not). */
const pythonHasMoto = (() => {
  let known: boolean | undefined;
  // find_spec rather than an import: moto takes half a second to import, and this runs per process.
  const probe = 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("moto") else 1)';
  return () => (known ??= spawnSync('python3', ['-c', probe], { stdio: 'ignore' }).status === 0);
})();

/**
 * Starts moto on a free loopback port; it plays Secrets Manager, SQS, DynamoDB and the rest.
 * Through moto-server.py where it can, so that concurrent writes to one table item are atomic
 * as in DynamoDB; plain moto_server otherwise.
 */
export async function startMoto(): Promise<MotoServer> {
  const port = await freePort();
  const child = pythonHasMoto()
    ? spawn('python3', [SERIALISED, '127.0.0.1', String(port)], { stdio: 'ignore' })
    : spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(url, child, 30_000);
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
