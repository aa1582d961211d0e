import { defineConfig } from 'vitest/config';

// `STRYKER_TESTS=simulation npm run mutate`: the simulation alone against each mutant.
export default defineConfig({
  test: {
    include: ['test/unit/simulation.test.ts'],
    testTimeout: 120_000,
    pool: 'forks',
  },
});
