// Starts bench/child.mjs in a fresh Node process per container and collects what it reports.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./child.mjs', import.meta.url));
const CONTAINER_TIMEOUT_MS = 60_000;
/**
 * The V8 heap limits Lambda's Node.js runtime sets for a 128 MB function (its bootstrap passes
 * new space = memory / 10, semi space = half of that, old space = the rest), so that memory
 * figures are those of the smallest Lambda rather than of a V8 that sizes its heap for this machine.
 */
export const LAMBDA_MEMORY_MB = 128;
const NODE_ARGS = [
  `--max-semi-space-size=${Math.floor(LAMBDA_MEMORY_MB / 10 / 2)}`,
  `--max-old-space-size=${LAMBDA_MEMORY_MB - Math.floor(LAMBDA_MEMORY_MB / 10)}`,
];

export interface ChildReport {
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

/** Runs one container with exactly `env` (plus PATH), as a Lambda container would get it. */
export function runContainer(args: ChildArgs, env: Record<string, string>): Promise<ContainerRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...NODE_ARGS, CHILD, ...args.filter((a) => a !== undefined).map(String)], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let reportText = '';
    let report: ChildReport | undefined;
    let wallMs = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), CONTAINER_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      // Keep only the tail: 2,000 deliveries log 2,000 lines.
      output = (output + chunk.toString('utf8')).slice(-20_000);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000)));
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
      if (!report) return reject(new Error(`container exited with ${code} without a report:\n${output}`));
      if (report.error) return reject(new Error(`container failed: ${report.error}\n${output}`));
      resolve({ ...report, wallMs, output });
    });
  });
}
