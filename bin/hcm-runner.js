#!/usr/bin/env node
// Runs the compiled CLI in dist/, built by `npm run build` (which `npm install` runs through
// `prepare`, and `npm start` through `prestart`). No TypeScript tooling is needed at run time.
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
