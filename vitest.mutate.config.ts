import { defineConfig } from 'vitest/config';

// What `npm run mutate` runs against each mutant: the in-process tests (stryker.config.mjs).
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    // The simulation runs one short seed against each mutant here; the simulation-alone run, every kept seed.
    env: { SIMULATION_QUICK: '1' },
  },
});
