/**
 * The settings the commands other than `serve` read, through the spec (src/settings/spec.ts):
 * the file limits (`validate`, `run`, `test`) and what client commands need to find the admin
 * API. `serve` resolves all of them (serve.ts).
 */
import type { FileLimits } from '../definition/limits.js';
import { resolveSettings } from '../settings/resolve.js';

/** HCM_RUNNER_MAX_FILE_BYTES and HCM_RUNNER_MAX_STEPS, else the defaults. */
export function cliFileLimits(env: NodeJS.ProcessEnv = process.env): FileLimits {
  return resolveSettings(['maxFileBytes', 'maxSteps'], { env });
}
