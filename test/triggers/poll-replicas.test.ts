/**
 * Two replicas on one PostgreSQL database poll the same integration. A poll slower than its
 * interval must not let the other replica take the same new item: the second poll waits for the
 * first one's commit (the store's cluster-wide lock per integration) and then sees the item as
 * seen. Without the lock both polls reach the third party, both get the new item back before
 * either commits, and the item runs twice — this test fails then.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { poll, startRuntime, tempDir, write } from './helpers.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

/** A third-party list API that holds every request while `hold` is on, until the test releases them. */
async function itemsApi() {
  const items = [{ id: 'one' }];
  let hold = false;
  const held: ServerResponse[] = [];
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: items }));
  const server = createServer((_req, res) => (hold ? held.push(res) : answer(res)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`,
    items,
    hold: () => (hold = true),
    release: () => {
      hold = false;
      held.splice(0).forEach(answer);
    },
    waiting: () => held.length,
  };
}

describe('poll across replicas', () => {
  it('a slow poll on one replica and the next tick on another start one execution per new item', async () => {
    const api = await itemsApi();
    const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `pollrep_${randomBytes(5).toString('hex')}`;
    const storeA = await openStore({ databaseUrl: url, schema, secret: 'poll-replicas' });
    const storeB = await openStore({ databaseUrl: url, schema, secret: 'poll-replicas' });
    cleanups.push(async () => {
      await (storeA as PostgresStore).pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await storeA.close();
      await storeB.close();
    });
    const dir = tempDir('hcm-pollrep-');
    cleanups.push(dir.remove);
    write(
      dir.path,
      'items.yaml',
      `name: items\ntrigger:\n  type: poll\n  every: 1s\n  action: core.http\n  inputs: { url: "${api.url}" }\n  items: "{% body.data %}"\n  key: "{% id %}"\n  mode: each\nsteps:\n  - id: got\n    action: core.transform\n    inputs: { value: "{% $trigger.item.id %}" }\n`,
    );
    const start = '2026-05-01T10:00:00.200Z';
    const a = await startRuntime(dir.path, dir.path, start, { store: storeA });
    const b = await startRuntime(dir.path, dir.path, start, { store: storeB });
    cleanups.push(
      () => a.stop(),
      () => b.stop(),
    );

    // Tick 1 on A: the baseline.
    a.clock.advance(1_000);
    await a.settle();
    // A new item appears; A's tick-2 poll is held at the third party.
    api.items.push({ id: 'two' });
    api.hold();
    a.clock.advance(1_000);
    await poll(async () => (api.waiting() === 1 ? true : undefined));
    // B skips ticks 1 and 2 (A claimed them) and claims tick 3 while A's poll still runs. With the
    // lock, B waits for A's commit before it calls the third party; without it, B's request
    // arrives now and is held too. Give it the chance to arrive, then answer everything at once.
    for (let i = 0; i < 2; i++) {
      b.clock.advance(1_000);
      await b.settle();
    }
    b.clock.advance(1_000);
    await poll(async () => (api.waiting() >= 2 ? true : undefined), 2_000).catch(() => 'B is waiting for the lock');
    api.release();
    await Promise.all([a.settle(), b.settle()]);

    const runs = await poll(async () => {
      const l = await a.executions('items');
      return l.length >= 1 && l.every((e) => e.status === 'succeeded') ? l : undefined;
    });
    await new Promise((r) => setTimeout(r, 300));
    const all = await a.executions('items');
    expect(all.map((e) => e.trigger.item.id)).toEqual(['two']);
    expect(runs[0].result).toBe('two');
  });
});
