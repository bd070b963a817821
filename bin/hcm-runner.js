#!/usr/bin/env -S node --max-semi-space-size=64
// Runs the compiled CLI in dist/, built by `npm run build` (which `npm install` runs through
// `prepare`, and `npm start` through `prestart`). No TypeScript tooling is needed at run time.
//
// The Node flags on the first line are how the runner is meant to run (`npm start` and the
// benchmarks start it with them too): a young generation of up to 64 MiB per semi-space instead
// of 16 lets the many short-lived objects of each request and execution die young instead of
// being copied and promoted — 20–30 % more end-to-end executions per second in alternated bench
// pairs (bench/profiling.md, "Time-ordered IDs, leaner writes and calls, a larger young
// generation", item 6). Started as `node bin/hcm-runner.js`, the flags are not applied (pass
// them, or set NODE_OPTIONS).
//
// HCM_RUNNER_FROM_SOURCE=1 runs src/ through tsx instead (a devDependency): the test suite sets
// it so that every test exercises the code as it is in the tree, never a stale build.
import { existsSync } from 'node:fs';

let main;
if (process.env.HCM_RUNNER_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
} else {
  const entry = new URL('../dist/cli/main.js', import.meta.url);
  if (!existsSync(entry)) {
    process.stderr.write('hcm-runner: dist/ is missing; run `npm run build` (npm install runs it for you)\n');
    process.exit(2);
  }
  ({ main } = await import(entry.href));
}
process.exitCode = await main(process.argv.slice(2));
