// `npm run mutate`: mutation testing of the folders where the relay decides (docs/testing.md).
// The in-process tests run against each mutant (the acceptance tests run built bundles, which a
// mutant of the source never reaches); STRYKER_TESTS=simulation runs the simulation alone.
const simulationOnly = process.env.STRYKER_TESTS === 'simulation';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: simulationOnly ? 'vitest.mutate-simulation.config.ts' : 'vitest.mutate.config.ts', related: false },
  mutate: [
    'lib/dedup/**/*.ts',
    'lib/group/**/*.ts',
    'lib/triage/**/*.ts',
    'lib/escalation/**/*.ts',
    'lib/summary/**/*.ts',
    'lib/directory/**/*.ts',
    'lib/routing/**/*.ts',
    'lib/retry/**/*.ts',
    // Wiring from the Lambda environment: the bundles' acceptance tests hold it, not these.
    '!lib/**/from-environment.ts',
    '!lib/**/environment.ts',
  ],
  // Per test for the simulation too: a mutant its seeds never reach is reported as not covered, not run.
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${simulationOnly ? 'simulation' : 'all'}.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignoreStatic: true,
};
