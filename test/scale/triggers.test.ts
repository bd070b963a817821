/**
 * docs/promises.md: "each schedule tick and each poll runs exactly once cluster-wide". Three replicas
 * load the same schedule (every 2 s) and the same poll (every 2 s, of a tiny fake API served by
 * this test process); every tick fires one execution, and a new item runs once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll, scaleFixtures, startCluster, type Cluster } from './cluster.js';

let c: Cluster;
let api: Server;
const items: Array<{ id: string }> = [{ id: 'a' }];
let requests = 0;

beforeAll(async () => {
  api = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ items }));
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  const itemsUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/items`;
  c = await startCluster({ dir: join(scaleFixtures, 'triggers'), replicas: 3, env: { ITEMS_URL: itemsUrl } });
});
afterAll(async () => {
  await c?.stop();
  await new Promise<void>((r) => {
    api.closeAllConnections();
    api.close(() => r());
  });
});

async function executionsOf(name: string): Promise<any[]> {
  const list = (await c.api(0, 'GET', `/executions?integration=${name}&limit=500`)).body as Array<{ id: string }>;
  return Promise.all(list.map(async (e) => (await c.api(0, 'GET', `/executions/${e.id}`)).body));
}

describe('schedules and polls across replicas', () => {
  it('a schedule every 2 s fires each tick once cluster-wide', { timeout: 40_000 }, async () => {
    // Let it tick for a while on all three replicas.
    await poll(async () => ((await executionsOf('tick')).length >= 4 ? true : undefined), 20_000, 500);
    await new Promise((r) => setTimeout(r, 2500));
    const records = await executionsOf('tick');
    const perTick = new Map<string, number>();
    for (const r of records) perTick.set(r.trigger.scheduledAt, (perTick.get(r.trigger.scheduledAt) ?? 0) + 1);
    expect(perTick.size).toBeGreaterThanOrEqual(4);
    for (const [tick, n] of perTick) expect({ tick, n }).toEqual({ tick, n: 1 });
  });

  it("a poll's new item runs once cluster-wide", { timeout: 40_000 }, async () => {
    // The first poll records the baseline (item a); then a new item appears.
    await poll(async () => (requests >= 1 ? true : undefined), 20_000, 100);
    await new Promise((r) => setTimeout(r, 2500));
    items.push({ id: 'b' });
    const seenAt = requests;
    const runs = await poll(
      async () => {
        const all = await executionsOf('poll-items');
        return all.some((r) => r.trigger?.item?.id === 'b') ? all : undefined;
      },
      20_000,
      300,
    );
    // Several more polls (on any replica) see b again: it must not run again.
    await poll(async () => (requests >= seenAt + 3 ? true : undefined), 20_000, 100);
    const all = await executionsOf('poll-items');
    const b = all.filter((r) => r.trigger?.item?.id === 'b');
    expect(b).toHaveLength(1);
    expect(all.filter((r) => r.trigger?.item?.id === 'a')).toHaveLength(0);
    expect(runs.length).toBeGreaterThan(0);
    const [done] = await c.waitFinished([b[0].id]);
    expect(done.status).toBe('succeeded');
  });
});
