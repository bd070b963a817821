/**
 * `hcm-runner test --record EXECUTION_ID [--out FILE]`: reads the execution from the running
 * server's admin API, turns it into a test case (testing/record.ts) and appends it to the test
 * file — beside the integration file by default — creating the file when there is none.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { parseDocument, stringify, isSeq, type YAMLSeq } from 'yaml';
import type { ExecutionRecord } from '../engine/record.js';
import { formatProblems } from '../definition/problems.js';
import type { LoadedFile } from '../definition/load.js';
import { IntegrationLookup, loadTestFile, testSchemaPath } from '../testing/load.js';
import { cliFileLimits } from './settings.js';
import { caseFromExecution, RecordError } from '../testing/record.js';
import { AdminClient, enc, runClient } from './admin-client.js';
import { UsageError } from './args.js';

export interface RecordOptions {
  executionId: string;
  out?: string;
  dir: string;
  server?: string;
  data?: string;
}

export async function recordCommand(opts: RecordOptions): Promise<number> {
  let written: string | undefined;
  const code = await runClient(async () => {
    const client = new AdminClient(opts.server, opts.data);
    const record = await client.call<ExecutionRecord>('GET', `/executions/${enc(opts.executionId)}`);
    const { found, names, searched } = findByName(record.integration, opts);
    if (!found?.integration) {
      throw new UsageError(
        found
          ? `${found.file} (integration ${record.integration}) has problems; fix them first (hcm-runner validate ${found.file})`
          : `integration ${record.integration} is not in ${searched.join(' or ')} (found: ${names.join(', ') || 'none'}); pass --dir with the folder the server runs`,
      );
    }
    let testCase;
    try {
      testCase = await caseFromExecution(record, found.integration);
    } catch (err) {
      if (err instanceof RecordError) throw new UsageError(err.message);
      throw err;
    }
    const out = opts.out ?? `${found.file.replace(/\.ya?ml$/i, '')}.test.yaml`;
    appendCase(out, testCase, found.integration.name, resolve(found.file));
    written = out;
    process.stderr.write(`recorded "${String(testCase.name)}" in ${out}\n`);
  });
  if (code !== 0 || !written) return code;
  // The file must load as a test file; say so now rather than at the next CI run.
  const check = loadTestFile(written, new IntegrationLookup(cliFileLimits()));
  if (check.problems.length) {
    process.stderr.write(`${formatProblems(check.problems, 'text')}\n`);
    return 1;
  }
  return 0;
}

/**
 * The integration the execution ran, by name: in `--dir`, else in the `--out` file's folder — a
 * test file written into the folder the server runs is a plain way of naming that folder.
 */
function findByName(name: string, opts: RecordOptions): { found?: LoadedFile; names: string[]; searched: string[] } {
  const lookup = new IntegrationLookup(cliFileLimits());
  const searched = [opts.dir];
  if (opts.out !== undefined && resolve(dirname(opts.out)) !== resolve(opts.dir)) searched.push(dirname(opts.out));
  const names: string[] = [];
  for (const dir of searched) {
    const r = lookup.byName(name, dir);
    if (r.found) return { found: r.found, names: r.names, searched };
    names.push(...r.names);
  }
  return { names, searched };
}

function appendCase(out: string, testCase: Record<string, unknown>, integration: string, integrationFile: string): void {
  if (!existsSync(out)) {
    const outDir = dirname(resolve(out));
    const schema = relative(outDir, testSchemaPath).split('\\').join('/');
    // By name when the integration is beside the test file, else by path (a name is looked up below the test file's folder).
    const ref = dirname(integrationFile) === outDir ? integration : relative(outDir, integrationFile).split('\\').join('/');
    const head = `# yaml-language-server: $schema=${schema}\n# Tests for ${integration}; run with: npx hcm-runner test (docs/testing.md)\n`;
    writeFileSync(out, head + stringify({ integration: ref, cases: [testCase] }, { lineWidth: 0 }));
    return;
  }
  const doc = parseDocument(readFileSync(out, 'utf8'));
  if (doc.errors.length) throw new UsageError(`${out} is not valid YAML (${doc.errors[0]!.message.split('\n')[0]}); fix it or choose another --out`);
  const cases = doc.get('cases');
  const list = isSeq(cases) ? (cases as YAMLSeq) : undefined;
  if (list?.items.some((c) => (c as { get?: (k: string) => unknown }).get?.('name') === testCase.name)) {
    throw new UsageError(`${out} already has a case "${String(testCase.name)}"`);
  }
  if (list) list.add(doc.createNode(testCase));
  else doc.set('cases', doc.createNode([testCase]));
  writeFileSync(out, doc.toString({ lineWidth: 0 }));
}
