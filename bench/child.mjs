// One Lambda-like container for the benchmark, in a fresh Node process: plain JavaScript so
// that nothing but Node itself runs before the bundle is imported. Results go to fd 3, which
// keeps them apart from the function's own log on stdout.
//   node bench/child.mjs import <bundle>
//   node bench/child.mjs cold   <bundle> <event.json>
//   node bench/child.mjs warm   <bundle> <event.json> <deliveries> [intervalMs]
import { readFileSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [mode, bundle, eventFile, countArg, intervalArg] = process.argv.slice(2);
const report = (result) => {
  writeSync(
    3,
    `${JSON.stringify({ ...result, node: process.version, maxRssKiB: process.resourceUsage().maxRSS, memory: process.memoryUsage() })}\n`,
  );
  process.exit(0);
};

const context = (id) => ({
  awsRequestId: `bench-${id}`,
  functionName: 'bench',
  getRemainingTimeInMillis: () => 10_000,
});

async function invoke(handler, event, id) {
  const started = performance.now();
  const result = await handler(event, context(id));
  return { ms: performance.now() - started, status: result?.statusCode ?? 0 };
}

try {
  const importStarted = performance.now();
  const { handler } = await import(pathToFileURL(bundle).href);
  const importMs = performance.now() - importStarted;
  if (mode === 'import') report({ importMs, sinceProcessStartMs: performance.now() });

  const event = JSON.parse(readFileSync(eventFile, 'utf8'));
  const first = await invoke(handler, event, 0);
  if (mode === 'cold' || first.status !== 200) {
    report({ importMs, firstInvokeMs: first.ms, firstStatus: first.status, sinceProcessStartMs: performance.now() });
  }

  const count = Number(countArg);
  const intervalMs = Number(intervalArg ?? 0);
  const durations = [];
  const statuses = {};
  const started = performance.now();
  for (let i = 1; i <= count; i++) {
    if (intervalMs > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    const { ms, status } = await invoke(handler, event, i);
    durations.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  report({ importMs, firstInvokeMs: first.ms, firstStatus: first.status, durations, statuses, totalMs: performance.now() - started });
} catch (error) {
  report({ error: String(error?.stack ?? error) });
}
