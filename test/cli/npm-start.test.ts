/**
 * `npm start` as a user stops it: `kill <pid of npm>` (SIGTERM) or `kill -9` takes the server down
 * too — the start script execs the server (npm forwards SIGTERM to it) and the server watches its
 * parent while an npm script runs it. The package is a temp copy whose start script is ours with
 * a free port, a temp folder and no sandbox.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bin, repoRoot } from '../helpers/cli.js';
import { freePort } from '../helpers/net.js';

const tmp = mkdtempSync(join(tmpdir(), 'hcm-npm-start-'));
const groups: number[] = [];
afterAll(() => {
  // Whatever a failed case left behind: the process groups these tests started.
  for (const g of groups)
    try {
      process.kill(-g, 'SIGKILL');
    } catch {}
  rmSync(tmp, { recursive: true, force: true });
});

/** Our start script, pointed at a temp package: same command, a free port, no sandbox. */
function startScript(port: number): string {
  const script = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts.start as string;
  expect(script).toMatch(/\.\/bin\/hcm-runner\.js serve .*--port 8080/);
  return script.replace('./bin/hcm-runner.js', JSON.stringify(bin)).replace('--port 8080', `--port ${port}`).replace(' --sandbox', '');
}

async function npmStart(name: string): Promise<{ pid: number; base: string; output: () => string }> {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'integrations'), { recursive: true });
  writeFileSync(
    join(dir, 'integrations', 'hello.yaml'),
    'name: hello\ntrigger: { type: webhook }\nsteps:\n  - id: a\n    action: core.log\n    inputs: { message: hi }\n',
  );
  const port = await freePort();
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, scripts: { start: startScript(port) } }));
  // Its own process group, so the afterAll can end the whole tree whatever happens.
  const npm = spawn('npm', ['start'], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: 'npm-start-test-token' },
  });
  groups.push(npm.pid!);
  let out = '';
  npm.stdout.on('data', (c) => (out += c));
  npm.stderr.on('data', (c) => (out += c));
  const deadline = Date.now() + 60_000;
  while (!/hcm-runner listening on/.test(out)) {
    if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { pid: npm.pid!, base: `http://127.0.0.1:${port}`, output: () => out };
}

/** Whether the server still answers; false once nothing listens on its port. */
async function serving(base: string): Promise<boolean> {
  try {
    await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

async function goneWithin(base: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await serving(base))) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

describe('npm start', () => {
  it('kill <pid of npm> (SIGTERM) stops the server too', { timeout: 120_000 }, async () => {
    const s = await npmStart('term');
    expect(await serving(s.base)).toBe(true);
    process.kill(s.pid, 'SIGTERM');
    expect(await goneWithin(s.base, 30_000), s.output()).toBe(true);
  });

  it('kill -9 <pid of npm> stops the server too: it watches its parent', { timeout: 120_000 }, async () => {
    const s = await npmStart('kill');
    expect(await serving(s.base)).toBe(true);
    process.kill(s.pid, 'SIGKILL');
    expect(await goneWithin(s.base, 30_000), s.output()).toBe(true);
  });
});
