/**
 * `hcm-runner executions cancel|retry` as a user runs them, against a real server: what they
 * print, their exit codes (0 done, 1 refused by the server, 2 usage), and the bulk form.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, fixtures, root, startTestServer, type TestServer } from '../server/helpers.js';

const run = promisify(execFile);
let s: TestServer;
let upstream: Server;

beforeAll(async () => {
  // Every request fails: always-fails fails at its step.
  upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"error":"down"}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  s = await startTestServer({ dir: join(fixtures, 'durable-ops'), env: { ONE_URL: base, TWO_URL: base, FAIL_URL: base } });
});
afterAll(async () => {
  await s?.stop();
  upstream?.closeAllConnections();
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN };
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'executions', ...args, '--server', s.url], {
      cwd: root,
      env,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function trigger(name: string): Promise<string> {
  const res = await fetch(s.urls(name).live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return res.headers.get('x-execution-id')!;
}

describe('hcm-runner executions cancel|retry', () => {
  it('cancel: a waiting execution is cancelled (exit 0); again the server refuses (exit 1, 409)', { timeout: 90_000 }, async () => {
    const id = await trigger('waiter');
    await s.waitForExecution(id, ['waiting']);
    const listed = await cli(['list', '--status', 'waiting', '--integration', 'waiter']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toMatch(/wakes 20\d\d-/);

    const done = await cli(['cancel', id]);
    expect(done).toMatchObject({ code: 0, stdout: `${id}  cancelled\n` });
    const again = await cli(['cancel', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('409');
    expect(again.stderr).toContain('already finished (cancelled)');
  });

  it('retry ID prints the new id, refuses a second one unless --again; retry --integration retries every failed one not retried yet; usage errors exit 2', {
    timeout: 90_000,
  }, async () => {
    const ids = [await trigger('always-fails'), await trigger('always-fails')];
    for (const id of ids) await s.waitForExecution(id);

    const one = await cli(['retry', ids[0]!]);
    expect(one.code).toBe(0);
    const newId = one.stdout.trim();
    expect(newId).toMatch(/^[0-9a-f-]{36}$/);
    expect(one.stderr).toContain(`retries ${ids[0]} from its failed step`);
    expect((await s.waitForExecution(newId)).retryOf).toBe(ids[0]);

    // Retried already: refused (exit 1, naming the retry), unless --again.
    const twice = await cli(['retry', ids[0]!]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`already retried as ${newId}`);
    const again = await cli(['retry', ids[0]!, '--again']);
    expect(again.code).toBe(0);
    const againId = again.stdout.trim();
    expect((await s.waitForExecution(againId)).retryOf).toBe(ids[0]);
    expect((await cli(['retry', '--again', '--status', 'failed'])).code).toBe(2);

    const bulk = await cli(['retry', '--integration', 'always-fails', '--status', 'failed']);
    expect(bulk.code).toBe(0);
    const bulkIds = bulk.stdout.trim().split('\n');
    // The second original and the two retries of the first (failed too by now); the first is skipped.
    expect(bulkIds).toHaveLength(3);
    expect(bulk.stderr).toContain('skipped 1 already retried execution');
    expect(bulk.stderr).toContain('retried 3 executions');
    const retried = await Promise.all(bulkIds.map((id) => s.waitForExecution(id)));
    expect(new Set(retried.map((r) => r.retryOf))).toEqual(new Set([ids[1], newId, againId]));

    const bad = await cli(['retry', '--since', 'yesterday']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('since must be an ISO-8601 time');
    expect((await cli(['retry'])).code).toBe(2);
    expect((await cli(['retry', ids[0]!, '--status', 'failed'])).code).toBe(2);
    expect((await cli(['cancel'])).code).toBe(2);
  });
});
