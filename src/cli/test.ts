/**
 * `hcm-runner test [PATH…] [--format text|json|junit|github] [--sandbox]` runs integration test
 * files (*.test.yaml); `--record EXECUTION_ID` writes a test case from a stored execution.
 * Exit 0 all passed, 1 any failure, 2 usage or an invalid test file. docs/testing.md.
 */
import { listTestFiles } from '../definition/load.js';
import { formatReport, TEST_FORMATS, type TestFormat } from '../testing/report.js';
import { runTestFiles } from '../testing/run-files.js';
import { parse, UsageError } from './args.js';
import { cliFileLimits } from './settings.js';

export const testUsage = `Usage: hcm-runner test [PATH…] [--format text|json|junit|github] [--sandbox]
       hcm-runner test --record EXECUTION_ID [--out FILE] [--dir DIR] [--server URL] [--data DIR]

Runs integration test files (*.test.yaml) found under the PATHs (default ./integrations): each
case runs its integration in-process with calling steps answered by their mocks (docs/testing.md).
  --format text     PASS/FAIL per case with file:line:col of each failed expectation; the last
                    line is "N passed, M failed" (default)
  --format json     one JSON document with every case, failure, response and step
  --format junit    JUnit XML for CI test reports
  --format github   GitHub Actions annotations (::error file=…,line=…,col=…::…)
  --sandbox         run unmocked HCM steps against the built-in HCM sandbox (started in-process;
                    sets HCM_API_URL, HCM_TOKEN_URL, … like serve --sandbox)
Recording (needs a running server):
  --record ID       turn the stored execution ID into a test case: its trigger, each calling
                    step's results as mocks, the observed status, response and step results as
                    expectations; appended to the integration's test file (created if missing)
  --out FILE        the test file to write (default <integration file>.test.yaml beside it)
  --dir DIR         where the integration files are (default ./integrations; the --out file's
                    folder is searched too)
  --server URL      the running server's admin API (default as for \`hcm-runner executions\`:
                    the $HCM_RUNNER_ADMIN_PORT listener, else $HCM_RUNNER_PUBLIC_URL or
                    http://127.0.0.1:8080; --url too)
  --data DIR        the server's data directory, for the admin token (default ./data)
The admin token is HCM_RUNNER_ADMIN_TOKEN when set, else the one serve stored in --data.
Exit status: 0 all passed (or recorded), 1 a case failed, 2 usage error or an invalid test file.`;

export async function testCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      format: { type: 'string', default: 'text' },
      sandbox: { type: 'boolean' },
      record: { type: 'string' },
      out: { type: 'string' },
      dir: { type: 'string' },
      server: { type: 'string' },
      url: { type: 'string' },
      data: { type: 'string' },
    },
    testUsage,
  );
  if (values.help) {
    process.stdout.write(`${testUsage}\n`);
    return 0;
  }
  if (values.record !== undefined) {
    if (positionals.length) throw new UsageError(`--record takes no PATH (got "${positionals[0]}"); use --out FILE\n\n${testUsage}`);
    const { recordCommand } = await import('./test-record.js');
    return recordCommand({
      executionId: values.record as string,
      out: values.out as string | undefined,
      dir: (values.dir as string | undefined) ?? 'integrations',
      server: (values.server ?? values.url) as string | undefined,
      data: values.data as string | undefined,
    });
  }
  for (const flag of ['out', 'server', 'url', 'data', 'dir'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} only applies with --record\n\n${testUsage}`);
  }
  const format = values.format as TestFormat;
  if (!TEST_FORMATS.includes(format))
    throw new UsageError(`--format must be ${TEST_FORMATS.join(', ')}; got "${String(values.format)}"\n\n${testUsage}`);
  const { files, missing } = listTestFiles(positionals.length ? positionals : ['integrations']);
  if (missing.length) throw new UsageError(`no such file or folder: ${missing.join(', ')}`);

  const fileLimits = cliFileLimits();
  let sandbox: { close(): Promise<void> } | undefined;
  let env = process.env;
  if (values.sandbox) {
    const { startLocalSandbox } = await import('./local-sandbox.js');
    ({ sandbox, env } = await startLocalSandbox(process.env));
  }
  try {
    const report = await runTestFiles(files, { env, sandbox: values.sandbox === true, fileLimits });
    process.stdout.write(`${formatReport(report, format)}\n`);
    if (report.problems.length) return 2;
    return report.files.some((f) => f.cases.some((c) => !c.passed)) ? 1 : 0;
  } finally {
    await sandbox?.close();
  }
}
