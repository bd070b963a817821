/** The command table is looked up by the name typed: only its own entries are commands. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'hcm-runner.js');
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, HCM_RUNNER_FROM_SOURCE: '1' }, timeout: 60_000 });

describe('hcm-runner <command>', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])('%s (a name every object inherits) is an unknown command, exit 2', (name) => {
    const r = cli(name);
    expect(r.stderr).toContain(`unknown command "${name}"`);
    expect(r.stderr).not.toContain('is not a function');
    expect(r.status).toBe(2);
  });
});
