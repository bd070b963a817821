/** `hcm-runner run FILE [--payload JSON_FILE] [--data DIR] [--sandbox]` — one execution, in-process. */
import { newExecutionId } from '../common/ids.js';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { listIntegrationFiles, loadFile, loadFiles } from '../definition/load.js';
import type { CompiledIntegration } from '../definition/types.js';
import { callHost } from '../triggers/call/children.js';
import { formatProblems } from '../definition/problems.js';
import { runExecution } from '../engine/run.js';
import { manualTriggerData } from '../triggers/manual.js';
import { parse, UsageError } from './args.js';
import { forgetPreviousSandboxTokens, startLocalSandbox } from './local-sandbox.js';
import { localServices } from './services.js';
import { cliFileLimits } from './settings.js';
import type { FileLimits } from '../definition/limits.js';

export const runUsage = `Usage: hcm-runner run FILE [--payload JSON_FILE] [--data DIR] [--sandbox]

Runs one integration once, in-process, as if its trigger fired, and prints the execution record
as JSON on stdout, groups, iterations and cases nested in it. A webhook gets the payload as its
JSON body; a poll gets it as its new items; a call integration gets it as $trigger.input. core.call
runs the integrations of the file's folder (each child's outcome is written to stderr).
  --payload FILE   JSON file with the trigger payload (default: {})
  --data DIR       data directory for connection tokens (default ./data)
  --sandbox        run against the built-in HCM sandbox, started for this run, with the same
                   HCM_* env variables as serve --sandbox (docs/authoring.md)
Exit status: 0 succeeded, 1 failed (or the file has problems), 2 usage error.`;

export async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { payload: { type: 'string' }, data: { type: 'string', default: 'data' }, sandbox: { type: 'boolean' } },
    runUsage,
  );
  if (values.help) {
    process.stdout.write(`${runUsage}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected exactly one FILE\n\n${runUsage}`);
  let payload: unknown;
  if (values.payload) {
    try {
      payload = JSON.parse(readFileSync(values.payload as string, 'utf8'));
    } catch (err) {
      throw new UsageError(`--payload ${values.payload}: ${(err as Error).message}`);
    }
  }
  // Before loading: the file's `{env: HCM_…}` values must resolve to the sandbox.
  const limits = cliFileLimits();
  const local = values.sandbox ? await startLocalSandbox(process.env) : undefined;
  try {
    return await runOnce(positionals[0]!, payload, values.data as string, limits, local?.env);
  } finally {
    await local?.sandbox.close();
  }
}

/** `sandboxEnv`: with --sandbox, the environment pointing at it. */
async function runOnce(file: string, payload: unknown, dataDir: string, limits: FileLimits, sandboxEnv?: NodeJS.ProcessEnv): Promise<number> {
  const loaded = loadFile(resolve(file), file, limits);
  if (!loaded.integration) {
    process.stderr.write(`${formatProblems(loaded.problems, 'text')}\n`);
    return 1;
  }
  const executionId = newExecutionId();
  const services = await localServices(dataDir);
  if (sandboxEnv) await forgetPreviousSandboxTokens(services.tokens, sandboxEnv);
  // core.call runs integrations of the file's folder (loaded on the first call); each child's
  // outcome goes to stderr, so stdout stays the one record.
  let folder: Map<string, CompiledIntegration> | undefined;
  const lookup = (name: string) => {
    folder ??= new Map(
      loadFiles(listIntegrationFiles([dirname(resolve(file))]).files, limits).flatMap((l) =>
        l.integration ? [[l.integration.name, l.integration] as const] : [],
      ),
    );
    return folder.get(name);
  };
  const call = callHost(lookup, async (integration, child) => {
    const r = await runExecution({ integration, services, env: sandboxEnv ?? process.env, ...child });
    process.stderr.write(`child execution ${r.id} (${r.integration}, called by step ${child.parent.step}): ${r.status}\n`);
    return r;
  });
  const record = await runExecution({
    integration: loaded.integration,
    trigger: manualTriggerData(loaded.integration, payload, { executionId }),
    executionId,
    services,
    env: sandboxEnv ?? process.env,
    call,
  }).finally(() => services.close());
  process.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
  return record.status === 'succeeded' ? 0 : 1;
}
