/** `hcm-runner run` and `hcm-runner connect` end to end, as child processes. */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { bin, cli, cliAsync, repoRoot } from '../helpers/cli.js';
import { freePort } from '../helpers/net.js';

const tmp = mkdtempSync(join(tmpdir(), 'hcm-cli-'));
const payload = (name: string, value: unknown) => {
  const file = join(tmp, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
};

let sb: Sandbox;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  env = { HCM_AUTHORIZE_URL: sb.authorizeUrl, HCM_TOKEN_URL: sb.tokenUrl, HCM_API_URL: sb.apiUrl, HCM_CLIENT_SECRET: 'sandbox-secret' };
});
afterAll(() => sb.close());

describe('hcm-runner run', () => {
  it('prints the execution record and exits 0 when it succeeds', () => {
    const r = cli(['run', 'test/fixtures/valid/hello.yaml', '--payload', payload('p.json', { name: 'Ada', path: 'x/y' }), '--data', join(tmp, 'd1')]);
    expect(r.code).toBe(0);
    const record = JSON.parse(r.stdout);
    expect(Object.keys(record)).toEqual(
      expect.arrayContaining(['id', 'integration', 'status', 'test', 'trigger', 'steps', 'startedAt', 'finishedAt', 'attempt']),
    );
    expect(record).toMatchObject({ integration: 'hello', status: 'succeeded', test: false, attempt: 1, result: { hello: 'Ada', parts: ['x', 'y'] } });
    expect(record.trigger.body.data).toEqual({ name: 'Ada', path: 'x/y' });
  });

  it('exits 1 with the record when the run fails', () => {
    const r = cli(['run', 'test/fixtures/cli/failing.yaml', '--payload', payload('f.json', { reason: 'no' }), '--data', join(tmp, 'd1')]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'failed',
      error: { step: 'check', action: 'core.fail', message: 'integration failing, step check (core.fail): not ok: no' },
    });
  });

  it('exits 1 and prints the problems of an invalid file', () => {
    const r = cli(['run', 'test/fixtures/invalid/bad-refs.yaml']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/bad-refs\.yaml:19:17: error: unknown connection "hrm"/);
  });

  it('exits 2 on usage errors', () => {
    expect(cli(['run']).code).toBe(2);
    expect(cli(['run', 'test/fixtures/valid/hello.yaml', '--payload', join(tmp, 'missing.json')]).code).toBe(2);
    expect(cli(['run', 'test/fixtures/valid/hello.yaml', '--nope']).code).toBe(2);
  });

  it('runs HCM actions against the sandbox with a headless refresh token', async () => {
    const r = await cliAsync(['run', 'test/fixtures/cli/sandbox-worker.yaml', '--data', join(tmp, 'd2')], {
      env: { ...env, HCM_REFRESH_TOKEN: sb.issueRefreshToken() },
    });
    expect(r.stderr).toBe('');
    const record = JSON.parse(r.stdout);
    expect(record.status).toBe('succeeded');
    expect(record.steps[0].results.data).toHaveLength(5);
    expect(record.result.id).toBe(record.steps[0].results.data[0].id);
    expect(JSON.stringify(record)).not.toMatch(/sandbox-secret|sbx_rt_|Bearer/);
  });
});

describe('hcm-runner connect', () => {
  it('runs the authorization-code flow; later runs use the stored tokens', async () => {
    const port = await freePort();
    const data = join(tmp, 'd3');
    const child = spawn(process.execPath, [bin, 'connect', 'test/fixtures/cli/sandbox-worker.yaml', 'hcm', '--data', data, '--timeout', '60'], {
      cwd: repoRoot,
      env: { ...process.env, ...env, HCM_RUNNER_PUBLIC_URL: `http://127.0.0.1:${port}` },
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? -1)));
    const url = await until(() => /^\s+(http\S+authorize\S+)$/m.exec(out)?.[1]);
    const authorize = new URL(url);
    expect(authorize.pathname).toBe('/acme/authorize');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${port}/oauth/callback`);
    // The sandbox approves at once and redirects to the command's callback listener.
    const res = await fetch(url);
    expect(await res.text()).toMatch(/Connected/);
    expect(await exited).toBe(0);
    expect(out).toMatch(/connection hcm of sandbox-worker is authorized/);

    const r = await cliAsync(['run', 'test/fixtures/cli/sandbox-worker.yaml', '--data', data], { env });
    expect(JSON.parse(r.stdout).status).toBe('succeeded');
  });
});

async function until<T>(fn: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
