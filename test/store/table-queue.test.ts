/**
 * The PostgreSQL queue is the `executions` table (src/store/postgres/table-queue.ts): replicas
 * claiming at once never get the same execution; an execution whose holder stopped is claimed
 * again as attempt + 1 once its lease is over, and one interrupted too often comes back unchanged,
 * marked with its history, for the dispatcher to fail (poison).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { ExecutionQueue, QueuedJob } from '../../src/store/queue.js';
import { poll } from '../server/helpers.js';

const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `tq_${randomBytes(5).toString('hex')}`;
const stores: PostgresStore[] = [];
const queues: ExecutionQueue[] = [];
afterAll(async () => {
  for (const q of queues) await q.stop();
  await stores[0]?.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  for (const s of stores) await s.close();
});

async function replica(
  free: number,
  maxInterruptions = 3,
  only?: string,
  pollMs = 50,
): Promise<{ store: PostgresStore; queue: ExecutionQueue; taken: QueuedJob[] }> {
  const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
  stores.push(store);
  const queue = store.openQueue({ leaseSec: 1, pollMs });
  queues.push(queue);
  const taken: QueuedJob[] = [];
  queue.bind({
    free: () => free - taken.length,
    freeFor: (integration) => (only === undefined || integration === only ? free - taken.length : 0),
    maxInterruptions: () => maxInterruptions,
  });
  queue.onAvailable(() => {
    for (let job = queue.take(() => true); job; job = queue.take(() => true)) taken.push(job);
  });
  await queue.recover();
  return { store, queue, taken };
}

describe('the executions table as the queue', () => {
  it('two replicas claiming at once never take the same execution', async () => {
    const a = await replica(30);
    const b = await replica(30);
    const ids = Array.from({ length: 40 }, () => randomUUID());
    await a.store.enqueue(ids.map((id) => ({ id, integration: 'shared', trigger: { id }, test: false })));
    await poll(async () => (a.taken.length + b.taken.length === ids.length ? true : undefined), 10_000);
    const all = [...a.taken, ...b.taken].map((j) => j.id);
    expect(new Set(all).size).toBe(ids.length);
    expect(all.sort()).toEqual([...ids].sort());
    // The claim marked them running under a lease: that is their markRunning.
    const [row] = (
      await a.store.pool.query(`SELECT status, claimed_by, lease_until > now() AS leased FROM ${schema}.executions WHERE id = $1`, [ids[0]])
    ).rows;
    expect(row).toMatchObject({ status: 'running', leased: true });
    for (const j of [...a.taken, ...b.taken]) expect(j.record?.trigger).toEqual({ id: j.id });
    await a.queue.stop();
    await b.queue.stop();
  });

  it('an execution claimed but still waiting for a slot keeps its lease', async () => {
    const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
    stores.push(store);
    const queue = store.openQueue({ leaseSec: 1, pollMs: 50 });
    queues.push(queue);
    // Room for one 'waiting' execution, but nothing is ever taken (its slot went to something else).
    queue.bind({ free: () => 1, freeFor: (integration) => (integration === 'waiting' ? 1 : 0), maxInterruptions: () => 3 });
    await queue.recover();
    const id = randomUUID();
    await store.enqueue([{ id, integration: 'waiting', trigger: {}, test: false }]);
    const leased = async () =>
      (await store.pool.query(`SELECT lease_until > now() AS leased FROM ${schema}.executions WHERE id = $1 AND status = 'running'`, [id])).rows[0]
        ?.leased;
    await poll(async () => ((await leased()) ? true : undefined), 10_000);
    // Two and a half lease lengths later the claim still holds it: no other replica may take it over.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await leased()).toBe(true);
    await queue.stop();
  });

  it('stopping while a claim is in flight hands the claimed execution back', async () => {
    const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
    stores.push(store);
    const queue = store.openQueue({ leaseSec: 60, pollMs: 60_000 });
    queues.push(queue);
    // No room until the row is committed and its notification handled: the claim below is the first.
    let room = 0;
    queue.bind({ free: () => room, freeFor: (integration) => (integration === 'stopping' ? room : 0), maxInterruptions: () => 3 });
    await queue.recover();
    const id = randomUUID();
    await store.enqueue([{ id, integration: 'stopping', trigger: {}, test: false }]);
    await new Promise((r) => setTimeout(r, 200));
    room = 1;
    queue.push([{ id, integration: 'stopping', attempt: 1 }]);
    // The claim starts on the next turn of the event loop; stop while its statement is under way.
    await new Promise((r) => setImmediate(r));
    await queue.stop();
    await new Promise((r) => setTimeout(r, 200)); // a claim stop() did not wait for has landed by now
    const [row] = (await store.pool.query(`SELECT status, claimed_by FROM ${schema}.executions WHERE id = $1`, [id])).rows;
    expect(row).toEqual({ status: 'queued', claimed_by: null });
  });

  it('a row announced while a claim for its integration is under way is claimed, not left to the poll', async () => {
    const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
    stores.push(store);
    const other = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
    stores.push(other);
    // The fallback poll is a minute away: only the notification can get the second row claimed.
    const queue = store.openQueue({ leaseSec: 60, pollMs: 60_000 });
    queues.push(queue);
    const taken: QueuedJob[] = [];
    queue.bind({ free: () => 5 - taken.length, freeFor: (i) => (i === 'announced' ? 5 - taken.length : 0), maxInterruptions: () => 3 });
    queue.onAvailable(() => {
      for (let job = queue.take(() => true); job; job = queue.take(() => true)) taken.push(job);
    });
    await queue.recover();
    // Hold the first claim statement in flight (the database still runs it) while another replica
    // enqueues a second row: its NOTIFY arrives while that claim is under way.
    const query = store.pool.query.bind(store.pool) as (...a: unknown[]) => Promise<unknown>;
    let held = false;
    (store.pool as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string }).text ?? '');
      if (!held && text.includes('SKIP LOCKED')) {
        held = true;
        const result = await query(...args);
        await other.enqueue([{ id: randomUUID(), integration: 'announced', trigger: {}, test: false }]);
        await new Promise((r) => setTimeout(r, 300)); // the notification is handled meanwhile
        return result;
      }
      return query(...args);
    };
    await other.enqueue([{ id: randomUUID(), integration: 'announced', trigger: {}, test: false }]);
    await poll(async () => (taken.length === 2 ? true : undefined), 5_000, 50);
    expect(held).toBe(true);
    expect(taken.map((j) => j.integration)).toEqual(['announced', 'announced']);
  });

  it('an interrupted execution comes back as attempt + 1, and unchanged once interrupted too often', async () => {
    const id = randomUUID();
    const first = await replica(1, 2, 'poison');
    await first.store.enqueue([{ id, integration: 'poison', trigger: {}, test: false }]);
    const attempts: QueuedJob[] = [];
    let holder = first;
    for (let life = 1; life <= 3; life++) {
      const job = await poll(async () => holder.taken.find((j) => j.id === id), 10_000);
      attempts.push(job);
      // The holder stops without finishing it: its lease ends, another replica takes it.
      await holder.queue.stop();
      holder = await replica(1, 2, 'poison');
    }
    expect(attempts.map((j) => j.attempt)).toEqual([1, 2, 2]);
    expect(attempts[0]!.previous).toBeUndefined();
    expect(attempts[1]!.previous).toEqual({ status: 'running', attempt: 1 });
    // Interrupted twice with a limit of 2: handed over as it was, for the dispatcher to fail.
    expect(attempts[2]!.previous).toEqual({ status: 'running', attempt: 2 });
  });

  it('waiting executions woken by two replicas at once wake once each, and are claimed once each at the same attempt; a wake tells every replica', async () => {
    const setup = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
    stores.push(setup);
    const now = Date.now();
    const park = async (wakeAt: string) => {
      const id = randomUUID();
      await setup.enqueue([{ id, integration: 'woken', trigger: { id }, test: false, attempt: 2 }]);
      const r = (await setup.markRunning(id, 2))!;
      await setup.saveExecution({ ...r, status: 'waiting', wakeAt }, { stored: true });
      return id;
    };
    const due = await Promise.all(Array.from({ length: 12 }, (_, i) => park(new Date(now - 60_000 + i).toISOString())));
    const later = await Promise.all(Array.from({ length: 3 }, () => park(new Date(now + 3_600_000).toISOString())));
    // The fallback poll is a minute away: what they claim, they claim because they were told.
    const a = await replica(30, 3, 'woken', 60_000);
    const b = await replica(30, 3, 'woken', 60_000);
    // Waiting rows are nobody's backlog (recover() ran the poll that counts it).
    expect(a.queue.depthOf('woken')).toBe(0);
    expect(a.taken).toEqual([]);
    const woke = await Promise.all([a.queue.wake(new Date(now)), b.queue.wake(new Date(now)), a.queue.wake(new Date(now))]);
    expect(woke.reduce((x, y) => x + y, 0)).toBe(12);
    await poll(async () => (a.taken.length + b.taken.length === 12 ? true : undefined), 10_000);
    const taken = [...a.taken, ...b.taken];
    expect(taken.map((j) => j.id).sort()).toEqual([...due].sort());
    expect(taken.every((j) => j.attempt === 2 && !j.recovered && j.record?.status === 'running')).toBe(true);

    // Woken by a process without a queue (the statement's NOTIFY): the replicas claim at once.
    expect((await setup.wakeDue(new Date(now + 7_200_000), 10)).map((r) => r.id).sort()).toEqual([...later].sort());
    await poll(async () => (a.taken.length + b.taken.length === 15 ? true : undefined), 5_000);
    expect([...a.taken, ...b.taken].filter((j) => (later as string[]).includes(j.id)).map((j) => j.attempt)).toEqual([2, 2, 2]);
    await a.queue.stop();
    await b.queue.stop();
  });
});
