/**
 * Poison executions end. (1) An execution the process dies under again and again — a real
 * `hcm-runner serve` child SIGKILLed while its step runs — is resumed as attempt + 1 below the
 * limit (3 by default) and then marked failed with the reason instead of being run again.
 * (2) A finished record that cannot be saved (a step result too deep to serialise) is saved as
 * failed with the reason instead of staying `running` forever.
 */
import { cpSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { ADMIN, fixtures, killServeChildren, poll, slowUpstream, spawnServe, startTestServer, tempDir } from '../server/helpers.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  killServeChildren();
  for (const f of cleanups) await f();
});

async function api(base: string, path: string): Promise<any> {
  const res = await fetch(`${base}/api${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  return res.json();
}

describe('an execution the process keeps dying under', () => {
  it('is resumed below the limit, then marked failed with the reason', { timeout: 120_000 }, async () => {
    const upstream = await slowUpstream(600_000); // the step never finishes
    cleanups.push(() => upstream.close());
    const dir = tempDir('hcm-poison-dir-');
    const data = tempDir('hcm-poison-data-');
    cleanups.push(dir.remove, data.remove);
    cpSync(join(fixtures, 'slow', 'slow.yaml'), join(dir.path, 'slow.yaml'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const args = ['--dir', dir.path, '--port', String(port), '--data', data.path];
    const env = { SLOW_URL: upstream.url, HCM_RUNNER_PUBLIC_URL: base, HCM_RUNNER_ALLOW_PRIVATE_NETWORK: '1' };

    let id: string | undefined;
    for (let life = 1; life <= 4; life++) {
      const p = spawnServe(args, env);
      await poll(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100).catch(
        (err) => {
          throw new Error(`${(err as Error).message}\n${p.output()}`);
        },
      );
      if (!id) {
        const [view] = await api(base, '/integrations');
        const res = await fetch(view.webhookUrls.live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        expect(res.status).toBe(200);
        id = ((await res.json()) as { executionId: string }).executionId;
      }
      if (life <= 3) {
        // Running as attempt `life` (resumed below the limit), then the process dies under it.
        const r = await poll(
          async () => {
            const e = await api(base, `/executions/${id}`);
            return e.status === 'running' && e.attempt === life ? e : undefined;
          },
          30_000,
          100,
        );
        expect(r.attempt).toBe(life);
        p.child.kill('SIGKILL');
        await new Promise((r) => p.child.once('exit', r));
        continue;
      }
      // Fourth start: the process stopped 3 times under it: failed, not run again.
      const r = await poll(
        async () => {
          const e = await api(base, `/executions/${id}`);
          return e.status === 'failed' ? e : undefined;
        },
        30_000,
        100,
      );
      expect(r.attempt).toBe(3);
      expect(r.error.message).toMatch(/the process stopped 3 times while this execution ran; not resumed/);
      expect(r.error.message).toContain('slow');
      const hitsBefore = upstream.hits;
      await new Promise((r) => setTimeout(r, 500));
      expect(upstream.hits).toBe(hitsBefore);
      p.child.kill('SIGTERM');
      await new Promise((r) => p.child.once('exit', r));
    }
  });
});

describe('a record that cannot be saved', () => {
  it('is saved as failed with the reason, never left running', async () => {
    // A third party answering JSON nested 100,000 deep: it parses, but cannot be serialised again.
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const fake: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(deep);
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => fake.close(r)));
    const s = await startTestServer({ slowUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/deep`, allowPrivateNetwork: true });
    cleanups.push(() => s.stop());
    const res = await fetch(s.urls('slow').live, { method: 'POST' });
    expect(res.status).toBe(200);
    const { executionId } = (await res.json()) as { executionId: string };
    const r = await s.waitForExecution(executionId);
    expect(r.status).toBe('failed');
    expect(r.error.message).toMatch(/integration slow: the execution's record could not be saved \(.*\); saved as failed/);
    expect(r.steps[0].id).toBe('wait');
    expect(r.steps[0].results).toBeUndefined();
  });
});
