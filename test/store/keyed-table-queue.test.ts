/**
 * Per-key concurrency on the PostgreSQL queue (src/store/sql/postgres-plans.ts `claim`): executions
 * with one `concurrency:` key are claimed in acceptance order, at most `limit` running or waiting
 * at once, cluster-wide — while other keys' executions, even later ones, are claimed at once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { ExecutionQueue, QueuedJob } from '../../src/store/queue.js';
import { poll } from '../server/helpers.js';

const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `kq_${randomBytes(5).toString('hex')}`;
const stores: PostgresStore[] = [];
const queues: ExecutionQueue[] = [];
afterAll(async () => {
  for (const q of queues) await q.stop();
  await stores[0]?.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  for (const s of stores) await s.close();
});

/** A replica with `free` slots for `integration` (which has `limit` per key); it takes all it can. */
async function replica(integration: string, limit: number, free = 50, onTaken?: (job: QueuedJob) => void, pollMs = 50) {
  const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
  stores.push(store);
  const queue = store.openQueue({ leaseSec: 30, pollMs, logger: { warn: (o, m) => console.warn(m, o), info: () => undefined } });
  queues.push(queue);
  const taken: QueuedJob[] = [];
  const held = new Set<string>();
  queue.bind({
    free: () => free - held.size,
    freeFor: (name) => (name === integration ? free - held.size : 0),
    maxInterruptions: () => 3,
    keyLimit: () => limit,
  });
  queue.onAvailable(() => {
    for (let job = queue.take(() => true); job; job = queue.take(() => true)) {
      taken.push(job);
      held.add(job.id);
      onTaken?.(job);
    }
  });
  await queue.recover();
  /** Ends a taken execution (succeeded) and hands its slot back, as the dispatcher does. */
  const finish = async (job: QueuedJob) => {
    await store.pool.query(`UPDATE ${schema}.executions SET status = 'succeeded', finished_at = now(), lease_until = NULL WHERE id = $1`, [job.id]);
    held.delete(job.id);
    queue.settle(job, 'done');
  };
  return { store, queue, taken, finish };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let clock = Date.parse('2026-01-01T00:00:00Z');
/** Executions of `integration` in acceptance order (distinct queued_at), one per key given. */
const executions = (integration: string, keys: Array<string | undefined>) =>
  keys.map((k) => ({
    id: randomUUID(),
    integration,
    trigger: { k },
    test: false,
    queuedAt: new Date(clock++).toISOString(),
    ...(k !== undefined ? { concurrencyKey: k } : {}),
  }));

describe('per-key concurrency on the PostgreSQL queue', () => {
  it('runs a worker’s transfer and termination in order, never together, and other workers at once', async () => {
    const r = await replica('fifo', 1);
    const [transfer, termination, other, unkeyed] = executions('fifo', ['21001', '21001', '21002', undefined]);
    await r.store.enqueue([transfer!, termination!, other!, unkeyed!]);
    await poll(async () => (r.taken.length === 3 ? true : undefined), 5000);
    await sleep(200);
    expect(r.taken.map((j) => j.id).sort()).toEqual([transfer!.id, other!.id, unkeyed!.id].sort());
    expect(r.taken.find((j) => j.id === transfer!.id)?.concurrencyKey).toBe('21001');
    // What the console says of the termination: one ahead of it (the transfer, running).
    expect(await r.store.aheadInLine((await r.store.getExecution(termination!.id))!)).toBe(1);
    expect(await r.store.aheadInLine((await r.store.getExecution(transfer!.id))!)).toBeUndefined();
    await r.finish(r.taken.find((j) => j.id === transfer!.id)!);
    await poll(async () => (r.taken.some((j) => j.id === termination!.id) ? true : undefined), 5000);
    await r.queue.stop();
  });

  it('lets `limit` of one key run at once, oldest first', async () => {
    const r = await replica('limit-two', 2);
    const five = executions('limit-two', ['k', 'k', 'k', 'k', 'k']);
    await r.store.enqueue(five);
    await poll(async () => (r.taken.length === 2 ? true : undefined), 5000);
    await sleep(200);
    expect(r.taken.map((j) => j.id)).toEqual([five[0]!.id, five[1]!.id]);
    await r.finish(r.taken[1]!);
    await poll(async () => (r.taken.length === 3 ? true : undefined), 5000);
    expect(r.taken[2]!.id).toBe(five[2]!.id);
    await r.queue.stop();
  });

  it('a waiting execution keeps its key’s slot, and is first when it wakes', async () => {
    const r = await replica('waits', 1);
    const [sleeping, next] = executions('waits', ['w1', 'w1']);
    await r.store.enqueue([sleeping!]);
    await poll(async () => (r.taken.length === 1 ? true : undefined), 5000);
    // It waits (core.wait): no worker holds it, but its key's slot stays taken.
    await r.store.pool.query(`UPDATE ${schema}.executions SET status = 'waiting', claimed_by = NULL, lease_until = NULL WHERE id = $1`, [
      sleeping!.id,
    ]);
    r.queue.settle(r.taken[0]!, 'done');
    await r.store.enqueue([next!]);
    await sleep(500);
    expect(r.taken.map((j) => j.id)).toEqual([sleeping!.id]);
    // Woken: queued again, older than the one behind it.
    await r.store.pool.query(`UPDATE ${schema}.executions SET status = 'queued' WHERE id = $1`, [sleeping!.id]);
    await poll(async () => (r.taken.length === 2 ? true : undefined), 5000);
    await sleep(200);
    expect(r.taken.map((j) => j.id)).toEqual([sleeping!.id, sleeping!.id]);
    await r.queue.stop();
  });

  it('a waiting execution cancelled (queue.ended) lets the next of its key be claimed at once, not at the next poll', async () => {
    // No poll within the test: only hints start claims.
    const r = await replica('cancels', 1, 50, undefined, 60_000);
    const [sleeping, next] = executions('cancels', ['c1', 'c1']);
    await r.store.enqueue([sleeping!]);
    await poll(async () => (r.taken.length === 1 ? true : undefined), 5000);
    await r.store.pool.query(`UPDATE ${schema}.executions SET status = 'waiting', claimed_by = NULL, lease_until = NULL WHERE id = $1`, [
      sleeping!.id,
    ]);
    r.queue.settle(r.taken[0]!, 'done');
    await r.store.enqueue([next!]);
    await sleep(300);
    expect(r.taken.map((j) => j.id)).toEqual([sleeping!.id]);
    const outcome = await r.store.cancelExecution(sleeping!.id, new Date());
    if (outcome.outcome !== 'cancelled') throw new Error(`not cancelled: ${outcome.outcome}`);
    r.queue.ended?.(outcome.record);
    await poll(async () => (r.taken.length === 2 ? true : undefined), 3000);
    expect(r.taken.map((j) => j.id)).toEqual([sleeping!.id, next!.id]);
    await r.queue.stop();
  });

  it('two replicas claiming at once never run two of one key together, and keep each key’s order', async () => {
    const running = new Map<string, number>();
    const order = new Map<string, string[]>();
    let overlap = 0;
    const replicas: Array<Awaited<ReturnType<typeof replica>>> = [];
    const onTaken = (job: QueuedJob) => {
      const k = job.concurrencyKey!;
      const n = (running.get(k) ?? 0) + 1;
      running.set(k, n);
      if (n > 1) overlap++;
      order.set(k, [...(order.get(k) ?? []), job.id]);
      const owner = replicas.find((r) => r.taken.includes(job));
      setTimeout(
        () => {
          running.set(k, (running.get(k) ?? 1) - 1);
          void (owner ?? replicas[0]!).finish(job);
        },
        5 + Math.random() * 20,
      );
    };
    replicas.push(await replica('race', 1, 8, onTaken), await replica('race', 1, 8, onTaken));
    const keys = Array.from({ length: 120 }, (_, i) => `worker-${i % 4}`);
    const all = executions('race', keys);
    await replicas[0]!.store.enqueue(all);
    await poll(async () => (replicas[0]!.taken.length + replicas[1]!.taken.length === all.length ? true : undefined), 30_000);
    expect(overlap).toBe(0);
    for (let i = 0; i < 4; i++) {
      const k = `worker-${i}`;
      expect(order.get(k)).toEqual(all.filter((e) => e.concurrencyKey === k).map((e) => e.id));
    }
    // Both replicas took part.
    expect(replicas[0]!.taken.length).toBeGreaterThan(0);
    expect(replicas[1]!.taken.length).toBeGreaterThan(0);
    for (const r of replicas) await r.queue.stop();
  }, 40_000);
});
