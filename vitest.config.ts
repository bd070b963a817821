import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    // The CLI child processes the tests spawn run src/ through tsx, never a stale dist/.
    env: { HCM_RUNNER_FROM_SOURCE: '1' },
    hookTimeout: 60_000,
    // Tests spawn servers and child processes; two cores are plenty busy with two forks.
    pool: 'forks',
    maxWorkers: 2,
  },
});
