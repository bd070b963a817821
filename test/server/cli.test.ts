/** The client commands (executions, listen, payloads, urls) and `serve` flag handling, as a user runs them. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, root, startTestServer, tempDir, type TestServer } from './helpers.js';

const run = promisify(execFile);
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

async function cli(args: string[], token: string | undefined = ADMIN): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, HCM_RUNNER_ADMIN_TOKEN: token ?? '' };
  if (token === undefined) delete env.HCM_RUNNER_ADMIN_TOKEN;
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, 'bin', 'hcm-runner.js'), ...args], { cwd: root, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('client commands', () => {
  it('urls, listen, payloads and executions against a running server', { timeout: 90_000 }, async () => {
    const server = ['--server', s.url];
    const urls = await cli(['urls', 'echo', ...server]);
    expect(urls.code).toBe(0);
    expect(urls.stdout).toContain(s.urls('echo').live);
    expect(urls.stdout).toContain(s.urls('echo').test);

    expect((await cli(['listen', 'echo', '--no-follow', ...server])).stdout).toContain('listening');
    const sent = await fetch(s.urls('echo').test, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"cli":1}' });
    await s.waitForExecution(sent.headers.get('x-execution-id')!);
    expect((await cli(['listen', 'echo', '--off', ...server])).stdout).toContain('off');
    const [capture] = (await s.api('GET', '/integrations/echo/captures')).body;

    expect((await cli(['payloads', 'save', 'echo', 'from-cli', '--capture', capture.id, ...server])).code).toBe(0);
    const dir = tempDir();
    try {
      const file = join(dir.path, 'p.json');
      writeFileSync(file, JSON.stringify({ payload: { cli: 2 } }));
      expect((await cli(['payloads', 'edit', 'echo', 'from-cli', '--file', file, ...server])).code).toBe(0);
    } finally {
      dir.remove();
    }
    expect((await cli(['payloads', 'list', 'echo', ...server])).stdout).toContain('from-cli');
    const ran = await cli(['payloads', 'run', 'echo', 'from-cli', ...server]);
    expect(ran.code).toBe(0);
    const id = ran.stdout.trim();
    const record = await s.waitForExecution(id);
    expect(record.result.body.data).toEqual({ cli: 2 });

    const list = await cli(['executions', 'list', '--integration', 'echo', '--limit', '5', ...server]);
    expect(list.stdout).toContain(id);
    const show = await cli(['executions', 'show', id, ...server]);
    expect(JSON.parse(show.stdout).id).toBe(id);
    const replay = await cli(['executions', 'replay', id, ...server]);
    expect(replay.code).toBe(0);
    expect((await s.waitForExecution(replay.stdout.trim())).status).toBe('succeeded');
  });

  it('a wrong token is a clear error (exit 1); bad usage exits 2; --help exits 0', { timeout: 90_000 }, async () => {
    const bad = await cli(['executions', 'list', '--server', s.url], 'wrong');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('401');
    expect((await cli(['executions', 'frobnicate', '--server', s.url])).code).toBe(2);
    expect((await cli(['serve', '--bogus'])).code).toBe(2);
    const help = await cli(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--sandbox');
    for (const c of ['executions', 'listen', 'payloads', 'urls']) expect((await cli([c, '--help'])).code).toBe(0);
  });
});
