/**
 * docs/promises.md "nothing accepted is lost": a real `hcm-runner serve` child process is SIGKILLed
 * while acknowledged executions are queued or running; after a restart on the same data
 * directory every acknowledged execution succeeds, each as a later attempt.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  childApi as api,
  fixtures,
  killServeChildren,
  poll,
  type SlowUpstream,
  slowUpstream,
  spawnServe,
  tempDir,
  untilHealthy as healthy,
} from './helpers.js';
import { freePort } from '../helpers/net.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  killServeChildren();
  for (const f of cleanups) await f();
});

describe('recovery after a crash', () => {
  it('every acknowledged execution reaches succeeded after SIGKILL and restart', { timeout: 90_000 }, async () => {
    const upstream: SlowUpstream = await slowUpstream(2500);
    cleanups.push(() => upstream.close());
    const dir = tempDir('hcm-recovery-dir-');
    const data = tempDir('hcm-recovery-data-');
    cleanups.push(dir.remove, data.remove);
    cpSync(join(fixtures, 'slow', 'slow.yaml'), join(dir.path, 'slow.yaml'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const args = ['--dir', dir.path, '--port', String(port), '--data', data.path];
    const env = { SLOW_URL: upstream.url, HCM_RUNNER_PUBLIC_URL: base };

    const first = spawnServe(args, env);
    await healthy(base, first.output);
    const [view] = await api(base, 'GET', '/integrations');
    expect(view.name).toBe('slow');

    const N = 6;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const res = await fetch(view.webhookUrls.live, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i }),
      });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { executionId: string }).executionId);
    }
    // Wait until some are running (the per-integration limit of 4 keeps the rest queued), then crash.
    await poll(async () => {
      const rows = await api(base, 'GET', '/executions?integration=slow&status=running');
      return rows.length > 0 ? rows : undefined;
    });
    const before = (await api(base, 'GET', '/executions?integration=slow&limit=100')) as Array<{ id: string; status: string }>;
    expect(before.every((r) => r.status !== 'succeeded')).toBe(true);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = spawnServe(args, env);
    await healthy(base, second.output);
    const records = await poll(
      async () => {
        const all = await Promise.all(ids.map((id) => api(base, 'GET', `/executions/${id}`)));
        return all.every((r) => r.status === 'succeeded') ? all : undefined;
      },
      60_000,
      200,
    );
    expect(records.map((r) => r.id)).toEqual(ids);
    for (const r of records) {
      expect(r.status).toBe('succeeded');
      // Every execution the first process left unfinished is resumed as a later attempt.
      expect(r.attempt).toBeGreaterThanOrEqual(2);
    }

    // Graceful shutdown: SIGTERM → exit code 0.
    second.child.kill('SIGTERM');
    const code = await new Promise((r) => second.child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
  });
});
