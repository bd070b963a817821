/** Runs the real CLI (bin/hcm-runner.js) as a child process. */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const bin = fileURLToPath(new URL('../../bin/hcm-runner.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: { ...process.env, ...opts.env },
    input: opts.input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Like cli(), without blocking the test's event loop (needed when the test hosts servers). */
export function cliAsync(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd ?? repoRoot, env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
