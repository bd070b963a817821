/**
 * "Backpressure, not collapse" with replicas: the backlog limit counts queued executions in the
 * shared database, so a replica that received nothing itself still answers 429 once the cluster's
 * backlog is full; everything accepted runs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { poll, postJson, scaleFixtures, startCluster, type Cluster } from './cluster.js';

let c: Cluster | undefined;
let upstream: Server | undefined;
afterAll(async () => {
  await c?.stop();
  if (upstream)
    await new Promise<void>((r) => {
      upstream!.closeAllConnections();
      upstream!.close(() => r());
    });
});

describe('cluster-wide backlog limit', () => {
  it('a replica refuses with 429 when the cluster backlog is full', { timeout: 60_000 }, async () => {
    upstream = createServer((_req, res) => {
      const t = setTimeout(() => res.end('{}'), 1500);
      res.on('close', () => clearTimeout(t));
    });
    await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
    const slowUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/slow`;
    c = await startCluster({
      dir: join(scaleFixtures, 'slow'),
      replicas: 2,
      env: { SLOW_URL: slowUrl },
      args: ['--concurrency', '1', '--backlog', '4'],
    });
    const cluster = c;
    const live = (await cluster.api(0, 'GET', '/integrations/slow')).body.webhookUrls.live as string;
    const accepted: string[] = [];
    // Fill the backlog through replica 0 only.
    for (;;) {
      const res = await postJson(cluster.at(live, 0), {});
      if (res.status === 429) {
        expect(res.headers.get('retry-after')).toBeTruthy();
        break;
      }
      expect(res.status).toBe(200);
      accepted.push(((await res.json()) as { executionId: string }).executionId);
      expect(accepted.length).toBeLessThan(20);
    }
    // Replica 1 received nothing, yet sees the shared backlog (counted in the database).
    const refused = await poll(
      async () => {
        const res = await postJson(cluster.at(live, 1), {});
        if (res.status === 200) {
          accepted.push(((await res.json()) as { executionId: string }).executionId);
          return undefined;
        }
        return res.status;
      },
      20_000,
      100,
    );
    expect(refused).toBe(429);
    const records = await cluster.waitFinished(accepted, 60_000);
    for (const r of records) expect(r.status).toBe('succeeded');
  });
});
