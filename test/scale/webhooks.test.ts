/**
 * docs/promises.md, scale-out: three `serve` replicas on one PostgreSQL database. Any replica accepts
 * webhooks, any replica runs them; synchronous runs answer on the replica holding the request;
 * listening mode, captures, payloads and executions are visible from every replica.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { poll, postJson, scaleFixtures, startCluster, type Cluster } from './cluster.js';

let c: Cluster;
beforeAll(async () => {
  c = await startCluster({ dir: join(scaleFixtures, 'web'), replicas: 3 });
});
afterAll(async () => {
  await c?.stop();
});

async function liveUrl(name: string): Promise<{ live: string; test: string }> {
  const r = await c.api(0, 'GET', `/integrations/${name}`);
  expect(r.status).toBe(200);
  return r.body.webhookUrls;
}

describe('webhooks across replicas', () => {
  it('webhooks sent round-robin all succeed, and more than one replica runs them', { timeout: 60_000 }, async () => {
    const urls = await liveUrl('work');
    // Every replica prints the same URL (shared token, shared public URL).
    for (const i of [1, 2]) expect((await c.api(i, 'GET', '/integrations/work')).body.webhookUrls).toEqual(urls);
    const N = 45;
    const ids = await Promise.all(
      Array.from({ length: N }, async (_, n) => {
        const res = await postJson(c.at(urls.live, n % 3), { n });
        expect(res.status).toBe(200);
        return ((await res.json()) as { executionId: string }).executionId;
      }),
    );
    const records = await c.waitFinished(ids);
    for (const [n, r] of records.entries()) {
      expect(r.status).toBe('succeeded');
      expect(r.attempt).toBe(1);
      expect(r.result).toEqual({ n });
    }
    // Every execution was logged as finished by exactly one replica; more than one replica worked.
    await poll(async () => (ids.every((id) => c.replicas.some((r) => r.finished().has(id))) ? true : undefined), 10_000, 100);
    const ran = c.replicas.map((r) => ids.filter((id) => r.finished().has(id)).length);
    expect(ran.reduce((a, b) => a + b, 0)).toBe(N);
    expect(ran.filter((n) => n > 0).length).toBeGreaterThan(1);
  });

  it('a synchronous webhook is answered by whichever replica receives it', async () => {
    const urls = await liveUrl('sync-work');
    for (const i of [0, 1, 2]) {
      const res = await postJson(c.at(urls.live, i), { n: i + 10 });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ n: i + 10 });
      const id = res.headers.get('x-execution-id')!;
      await poll(async () => (c.replicas[i]!.finished().has(id) ? true : undefined), 10_000, 50);
    }
  });

  it('executions, listening mode, captures and payloads are shared', { timeout: 30_000 }, async () => {
    const urls = await liveUrl('work');
    const res = await postJson(c.at(urls.live, 2), { shared: true });
    const id = ((await res.json()) as { executionId: string }).executionId;
    const [rec] = await c.waitFinished([id]);
    expect(rec.status).toBe('succeeded');
    for (const i of [0, 1, 2]) {
      const r = await c.api(i, 'GET', `/executions/${id}`);
      expect(r.body.status).toBe('succeeded');
    }

    // Listening switched on through replica 0: the others learn it from the store (periodic refresh).
    expect((await c.api(0, 'POST', '/integrations/work/listen')).status).toBe(200);
    await poll(async () => ((await c.api(2, 'GET', '/integrations/work')).body.listening === true ? true : undefined), 15_000, 200);
    const t = await postJson(c.at(urls.test, 2), { captured: 1 });
    expect(t.status).toBe(200);
    const captures = await poll(async () => {
      const r = await c.api(1, 'GET', '/integrations/work/captures');
      return r.status === 200 && r.body.length > 0 ? r.body : undefined;
    });
    expect(captures[0].trigger.body.data).toEqual({ captured: 1 });

    // A payload saved on one replica is there on the others.
    const saved = await c.api(1, 'POST', '/integrations/work/payloads', { name: 'p1', trigger: { body: { data: { from: 'payload' } } } });
    expect(saved.status).toBeLessThan(300);
    const got = await c.api(2, 'GET', '/integrations/work/payloads/p1');
    expect(got.status).toBe(200);
    expect(got.body.trigger).toEqual({ body: { data: { from: 'payload' } } });

    expect((await c.api(1, 'DELETE', '/integrations/work/listen')).status).toBe(200);
    await poll(async () => ((await c.api(0, 'GET', '/integrations/work')).body.listening === false ? true : undefined), 15_000, 200);
  });
});
