/** `hcm-runner run FILE [--payload JSON_FILE] [--data DIR] [--sandbox]` — one execution, in-process. */
import { newExecutionId } from '../common/ids.js';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { listIntegrationFiles, loadFile, loadFiles } from '../definition/load.js';
import type { CompiledIntegration } from '../definition/types.js';
import { callHost } from '../triggers/call/children.js';
import { formatProblems } from '../definition/problems.js';
import { ActionError } from '../common/errors.js';
import type { DurableHost } from '../engine/durable.js';
import { runExecution } from '../engine/run.js';
import { manualTriggerData } from '../triggers/manual.js';
import { parse, UsageError } from './args.js';
import { forgetPreviousSandboxTokens, startLocalSandbox } from './local-sandbox.js';
import { localServices } from './services.js';
import { cliFileLimits } from './settings.js';
import type { FileLimits } from '../definition/limits.js';

export const runUsage = `Usage: hcm-runner run FILE [--payload JSON_FILE] [--data DIR] [--sandbox]

Runs one integration once, in-process, as if its trigger fired, and prints the execution record
as JSON on stdout, groups, iterations and cases nested in it. core.wait on a time finishes at
once (said on stderr); a wait on a callback fails: nothing here can receive one (try it with
hcm-runner test and a case's callbacks:). A webhook gets the payload as its
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
    const r = await runExecution({ integration, services, env: sandboxEnv ?? process.env, durable: runDurableHost(services.publicUrl), ...child });
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
    durable: runDurableHost(services.publicUrl),
  }).finally(() => services.close());
  process.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
  return record.status === 'succeeded' ? 0 : 1;
}

/**
 * core.wait under `run`: one process that ends with its run, so a time wait finishes at once (said
 * on stderr) and a callback wait fails — no server is there to receive the request.
 */
function runDurableHost(publicUrl: string): DurableHost {
  const base = `${publicUrl.replace(/\/+$/, '')}/callbacks/run-`;
  return {
    mode: 'now',
    async createCallback(req) {
      return { url: `${base}${req.step}` };
    },
    tokenOf: (url) => (url.startsWith(base) ? url.slice(base.length - 'run-'.length) : undefined),
    async lookupCallback(_token, _executionId, step) {
      throw new ActionError(
        `hcm-runner run cannot receive callbacks (it serves no URL): step ${step} would wait for a request forever. Run the integration with hcm-runner serve, or try it with hcm-runner test and a case's callbacks.${step}`,
        { code: 'not_supported' },
      );
    },
    async admitWait() {},
    waited(w) {
      if (w.kind === 'time')
        process.stderr.write(
          `step ${w.step}: waiting ${w.for ? `for ${w.for}` : `until ${w.until}`} — finished at once (hcm-runner run does not wait)\n`,
        );
    },
  };
}
