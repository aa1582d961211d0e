// Starts bench/child.mjs in a fresh process of Lambda's Node per container, with Lambda's flags,
// and collects what it reports.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./child.mjs', import.meta.url));
const CONTAINER_TIMEOUT_MS = 60_000;

export interface ChildReport {
  /** process.version of the child. */
  node: string;
  importMs: number;
  maxRssKiB: number;
  /** process.memoryUsage() when the report was written. */
  memory: NodeJS.MemoryUsage;
  sinceProcessStartMs?: number;
  firstInvokeMs?: number;
  firstStatus?: number;
  durations?: number[];
  statuses?: Record<string, number>;
  totalMs?: number;
  error?: string;
}

export interface ContainerRun extends ChildReport {
  /** From just before spawn until the child's report arrived: process start, import, first answer. */
  wallMs: number;
  /** What the function wrote to stdout/stderr (its log), for diagnosis. */
  output: string;
}

export type ChildArgs = ['import', string] | ['cold', string, string] | ['warm', string, string, number, number?];

export interface Runtime {
  /** The node binary, and the flags Lambda's bootstrap passes it. */
  node: string;
  nodeArgs: string[];
}

/**
 * Runs one container of `bundle` (the path in `args`) with exactly `env` plus PATH, in the
 * bundle's folder, as Lambda runs its function in LAMBDA_TASK_ROOT.
 */
export function runContainer(runtime: Runtime, args: ChildArgs, env: Record<string, string>): Promise<ContainerRun> {
  return new Promise((resolve, reject) => {
    // The function's log goes to a file, not to a pipe this process reads: this process also
    // plays Slack and AWS, and reading a chatty log here would slow their answers to the relay
    // alone (the floors log nothing), a cost Lambda's log shipping does not put on the function.
    const logFile = join(mkdtempSync(join(tmpdir(), 'bench-container-')), 'log');
    const log = openSync(logFile, 'w');
    const started = performance.now();
    const child = spawn(runtime.node, [...runtime.nodeArgs, CHILD, ...args.filter((a) => a !== undefined).map(String)], {
      cwd: dirname(args[1]),
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', log, log, 'pipe'],
    });
    closeSync(log);
    let reportText = '';
    let report: ChildReport | undefined;
    let wallMs = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), CONTAINER_TIMEOUT_MS);
    const results = child.stdio[3] as NodeJS.ReadableStream;
    results.on('data', (chunk: Buffer) => {
      reportText += chunk.toString('utf8');
      if (!report && reportText.endsWith('\n')) {
        wallMs = performance.now() - started;
        report = JSON.parse(reportText) as ChildReport;
      }
    });
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      // Only the tail: 2,000 deliveries log 2,000 lines.
      const output = readFileSync(logFile, 'utf8').slice(-20_000);
      rmSync(dirname(logFile), { recursive: true, force: true });
      if (!report) return reject(new Error(`container exited with ${code} without a report:\n${output}`));
      if (report.error) return reject(new Error(`container failed: ${report.error}\n${output}`));
      resolve({ ...report, wallMs, output });
    });
  });
}
