/** Loads test files and runs their cases, one after the other (cases share nothing but the token store). */
import type { RuntimeServices } from '../connectors/types.js';
import type { FileLimits } from '../definition/limits.js';
import { IntegrationLookup, loadTestFile } from './load.js';
import { MemoryTokenStore } from './mocks.js';
import type { TestReport } from './report.js';
import { runCase } from './run-case.js';

export interface RunTestFilesOptions {
  env?: NodeJS.ProcessEnv;
  /** Unmocked HCM steps call the sandbox the env points at (`--sandbox`). */
  sandbox?: boolean;
  /** Bounds on the integration files (default the built-in ones). */
  fileLimits?: FileLimits;
}

export async function runTestFiles(files: string[], opts: RunTestFilesOptions = {}): Promise<TestReport> {
  const lookup = new IntegrationLookup(opts.fileLimits);
  const services: RuntimeServices = { tokens: new MemoryTokenStore(), publicUrl: 'http://hcm-runner.test' };
  const report: TestReport = { files: [], problems: [] };
  for (const path of files) {
    const loaded = loadTestFile(path, lookup);
    report.problems.push(...loaded.problems);
    const suite = loaded.suite;
    if (!suite) continue;
    const cases = [];
    const dir = suite.dir;
    const integrations = dir ? (name: string) => lookup.byName(name, dir).found?.integration : undefined;
    for (const c of suite.cases) cases.push(await runCase(suite, c, { services, env: opts.env, sandbox: opts.sandbox, integrations }));
    report.files.push({ file: suite.file, integration: suite.integration.name, src: suite.src, cases });
  }
  return report;
}
