/**
 * docs/promises.md "nothing accepted is lost", with replicas: one of three replicas is SIGKILLed while it
 * runs slow executions. Every acknowledged execution still succeeds, on the survivors; the ones
 * interrupted mid-run run again as a later attempt once their lease runs out.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { poll, postJson, scaleFixtures, startCluster, type Cluster } from './cluster.js';

/** Answers after `delayMs`; knows which replica (path /rN) waits for which execution. */
async function slowUpstream(delayMs: number) {
  const inflight = new Map<string, Set<string>>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url!, 'http://x');
    const replica = u.pathname.slice(1);
    const execution = u.searchParams.get('execution') ?? '?';
    let set = inflight.get(replica);
    if (!set) inflight.set(replica, (set = new Set()));
    set.add(execution);
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, replica }));
    }, delayMs);
    res.on('close', () => {
      clearTimeout(t);
      set!.delete(execution);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    inflight,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let c: Cluster | undefined;
let up: Awaited<ReturnType<typeof slowUpstream>> | undefined;
afterAll(async () => {
  await c?.stop();
  await up?.close();
});

describe('a replica dies mid-run', () => {
  it('its executions are taken over by the survivors (attempt + 1); nothing acknowledged is lost', { timeout: 90_000 }, async () => {
    up = await slowUpstream(2500);
    const upstreamUrl = up.url;
    c = await startCluster({
      dir: join(scaleFixtures, 'slow'),
      replicas: 3,
      env: (i) => ({ SLOW_URL: `${upstreamUrl}/r${i}` }),
      args: ['--integration-concurrency', '2'],
    });
    const cluster = c;
    const live = (await cluster.api(0, 'GET', '/integrations/slow')).body.webhookUrls.live as string;
    const N = 12;
    const ids: string[] = [];
    for (let n = 0; n < N; n++) {
      const res = await postJson(cluster.at(live, n % 3), { n });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { executionId: string }).executionId);
    }
    // Kill the first replica seen running some of them (their upstream calls are in flight).
    const victim = await poll(async () => {
      for (const r of cluster.replicas.slice(1)) if ((up!.inflight.get(r.id)?.size ?? 0) > 0) return r;
      return undefined;
    });
    const interrupted = [...up.inflight.get(victim.id)!];
    await victim.kill('SIGKILL');
    expect(interrupted.length).toBeGreaterThan(0);

    const records = await cluster.waitFinished(ids, 60_000);
    for (const r of records) expect(r.status).toBe('succeeded');
    for (const id of interrupted) {
      const r = records.find((x) => x.id === id)!;
      expect(r.attempt).toBeGreaterThanOrEqual(2);
    }
    const survivors = cluster.replicas.filter((r) => r !== victim);
    // The interrupted ones finished on a survivor.
    for (const id of interrupted) expect(survivors.some((r) => r.finished().has(id))).toBe(true);
  });
});
