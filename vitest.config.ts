import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Every lib/ folder must be covered by the in-process tests alone (test/unit, test/property):
// decisions are tested through their ports, the bundles only prove the wiring.
const LINE_COVERAGE_FLOOR = 85;
const libFolders = readdirSync(new URL('./lib', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

// CI collects every run's counts here (see .ci/run); one file per vitest invocation.
const resultsDir = process.env['TEST_RESULTS_DIR'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start their own processes and servers; two cores keep that honest.
    pool: 'forks',
    ...(resultsDir
      ? { reporters: ['default', 'json'], outputFile: { json: `${resultsDir}/vitest-${process.pid}.json` } }
      : {}),
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'acceptance',
          include: ['test/integration/**/*.test.ts', 'test/template/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
    coverage: {
      provider: 'v8',
      include: ['lib/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: Object.fromEntries(libFolders.map((folder) => [`lib/${folder}/**`, { lines: LINE_COVERAGE_FLOOR }])),
    },
  },
});
