import { defineConfig } from 'vitest/config';

// What `npm run mutate` runs against each mutant: the in-process tests (stryker.config.mjs).
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
