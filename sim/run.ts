import { parseArgs } from 'node:util';
import { runSeed } from './simulate.js';

/**
 * `npm run simulate -- [--seed N | --seeds COUNT] [--days D]`: runs each seed and prints its line
 * (docs/testing.md), then one line for all; exits non-zero on any violation.
 */
const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    seeds: { type: 'string' },
    days: { type: 'string' },
    from: { type: 'string' },
    quiet: { type: 'boolean' },
    anomaly: { type: 'string' },
  },
});
const days = Number(values.days ?? '14');
const from = Number(values.from ?? '1');
const seeds = values.seed !== undefined ? [Number(values.seed)] : Array.from({ length: Number(values.seeds ?? '4') }, (_, i) => from + i);
let violations = 0;
for (const seed of seeds) {
  const result = await runSeed(seed, { days, faults: !values.quiet });
  console.log(result.line);
  for (const [i, v] of result.violations.entries()) {
    console.log(`  violation of invariant ${v.invariant} at ${new Date(v.at).toISOString()} (seed ${seed}): ${v.what}`);
    // The first few with the anomaly's story: enough to start from, short enough to read.
    if (i < 5 && v.anomaly !== undefined) {
      for (const e of result
        .eventsOf(v.anomaly)
        .filter((e) => e.at <= v.at)
        .slice(-12))
        console.log(`    ${new Date(e.at).toISOString()} ${e.text}`);
    }
  }
  if (values.anomaly !== undefined) {
    for (const e of result.eventsOf(Number(values.anomaly))) console.log(`  ${new Date(e.at).toISOString()} ${e.text}`);
  }
  violations += result.violations.length;
}
console.log(`simulate: ${seeds.length} seeds, ${violations} violations`);
process.exitCode = violations === 0 ? 0 : 1;
