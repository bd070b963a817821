/** `hcm-runner validate [PATH…] [--format text|json|github]` — exit 0 valid, 1 problems, 2 usage. */
import { listIntegrationFiles, listTestFiles, loadFiles } from '../definition/load.js';
import { formatProblems } from '../definition/problems.js';
import type { Problem } from '../definition/types.js';
import { IntegrationLookup, loadTestFile } from '../testing/load.js';
import { parse, UsageError } from './args.js';
import { cliFileLimits } from './settings.js';

export const validateUsage = `Usage: hcm-runner validate [PATH…] [--format text|json|github]

Validates integration files (*.yaml, *.yml) and folders; default ./integrations. Test files
(*.test.yaml, docs/testing.md) are checked as test files: their integration, step ids and asserts.
One line per problem: FILE:LINE:COL: error: MESSAGE
  --format json     a JSON array of {file, line, column, message, path}
  --format github   GitHub Actions annotations (::error file=…,line=…,col=…::…)
Exit status: 0 all valid, 1 problems found, 2 usage error.`;

export async function validateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { format: { type: 'string', default: 'text' } }, validateUsage);
  if (values.help) {
    process.stdout.write(`${validateUsage}\n`);
    return 0;
  }
  const format = values.format as string;
  if (format !== 'text' && format !== 'json' && format !== 'github') {
    throw new UsageError(`--format must be text, json or github, got "${format}"\n\n${validateUsage}`);
  }
  const paths = positionals.length ? positionals : ['integrations'];
  const { files: integrationFiles, missing } = listIntegrationFiles(paths);
  if (missing.length) throw new UsageError(`no such file or folder: ${missing.join(', ')}`);
  const testFiles = listTestFiles(paths).files;
  const files = [...integrationFiles, ...testFiles];
  const limits = cliFileLimits();
  const problems: Problem[] = loadFiles(integrationFiles, limits).flatMap((l) => l.problems);
  const lookup = new IntegrationLookup(limits);
  for (const f of testFiles) problems.push(...loadTestFile(f, lookup).problems);
  const out = formatProblems(problems, format);
  if (format === 'json') process.stdout.write(`${out}\n`);
  else if (out) process.stdout.write(`${out}\n`);
  if (format === 'text') {
    process.stderr.write(
      problems.length
        ? `${problems.length} problem${problems.length === 1 ? '' : 's'} in ${new Set(problems.map((p) => p.file)).size} of ${files.length} file(s)\n`
        : `${files.length} file(s) valid\n`,
    );
  }
  return problems.length ? 1 : 0;
}
