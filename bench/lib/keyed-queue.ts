/**
 * The `keyed-queue` scenario: what per-key concurrency costs PostgreSQL's claim. A fresh schema
 * holds 10 000 queued executions accepted round-robin over 1 000 keys; a replica with 16 free
 * slots claims (the queue's own `claim` statement, postgres-plans.ts) and its runs end at once,
 * until every row ran — once with `concurrency: {key, limit: 1}` (each claim takes only heads of
 * free keys) and once without keys, same rows, same run. The figure is the claim statement's
 * latency (what the queue adds to pick-up), measured in this process over the pool.
 */
import { randomBytes } from 'node:crypto';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { quoteIdent } from '../../src/store/postgres/migrations.js';
import { queuePlans } from '../../src/store/sql/postgres-plans.js';

export const KEYED_QUEUE = { executions: 10_000, keys: 1_000, slots: 16 } as const;

export interface ClaimVariant {
  claims: number;
  claimed: number;
  p50: number;
  p99: number;
  max: number;
}

export interface KeyedQueueResult {
  keyed: ClaimVariant;
  plain: ClaimVariant;
  /** Claims with keys that found nothing while rows were queued (every head's key busy): none expected with instant runs. */
  emptyKeyedClaims: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** Fills a fresh schema, claims everything with or without keys; claim latencies in ms. `maxClaims` bounds a short run. */
async function variant(url: string, keyed: boolean, maxClaims: number): Promise<ClaimVariant & { empty: number }> {
  const schema = `bench_kq_${randomBytes(4).toString('hex')}`;
  const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
  const t = `${quoteIdent(schema)}.executions`;
  const sql = queuePlans(t);
  const integration = 'bench-keyed';
  try {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const rows = Array.from({ length: KEYED_QUEUE.executions }, (_, i) => ({
      id: `e${String(i).padStart(6, '0')}`,
      integration,
      trigger: { i },
      test: false,
      queuedAt: new Date(start + i).toISOString(),
      ...(keyed ? { concurrencyKey: `worker-${i % KEYED_QUEUE.keys}` } : {}),
    }));
    for (let i = 0; i < rows.length; i += 1000) await store.enqueue(rows.slice(i, i + 1000));
    await store.pool.query(`ANALYZE ${t}`);
    const times: number[] = [];
    let claimed = 0;
    let empty = 0;
    while (claimed < rows.length && times.length < maxClaims) {
      const t0 = performance.now();
      const { rows: got } = await store.pool.query<{ id: string }>(sql.claim, [[integration], [KEYED_QUEUE.slots], 3, 'bench', 60, [keyed ? 1 : 0]]);
      times.push(performance.now() - t0);
      if (got.length === 0) empty++;
      claimed += got.length;
      // The runs end at once: their keys are free for the next claim.
      await store.pool.query(`UPDATE ${t} SET status = 'succeeded', finished_at = now(), lease_until = NULL WHERE id = ANY($1)`, [
        got.map((r) => r.id),
      ]);
      if (got.length === 0 && empty > 100) break;
    }
    times.sort((a, b) => a - b);
    return { claims: times.length, claimed, p50: quantile(times, 0.5), p99: quantile(times, 0.99), max: times.at(-1) ?? Number.NaN, empty };
  } finally {
    await store.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`).catch(() => undefined);
    await store.close();
  }
}

/** Both variants, plain first then keyed, then plain and keyed again; the second of each counts (warm database). */
export async function keyedQueueScenario(url: string, maxClaims: number, log: (msg: string) => void): Promise<KeyedQueueResult> {
  log(`keyed-queue: ${KEYED_QUEUE.executions} queued over ${KEYED_QUEUE.keys} keys, claims of ${KEYED_QUEUE.slots} (warm-up round)`);
  await variant(url, false, Math.min(maxClaims, 50));
  await variant(url, true, Math.min(maxClaims, 50));
  log('keyed-queue: measuring without keys');
  const plain = await variant(url, false, maxClaims);
  log('keyed-queue: measuring with concurrency: {key, limit: 1}');
  const keyed = await variant(url, true, maxClaims);
  const { empty: _p, ...plainOut } = plain;
  const { empty, ...keyedOut } = keyed;
  return { plain: plainOut, keyed: keyedOut, emptyKeyedClaims: empty };
}
