/**
 * The store contract on PostgreSQL. Needs the local server (scripts/ensure-postgres.sh starts it);
 * when it is not reachable the tests FAIL with a message saying so — they never skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../src/engine/record.js';
import { openStore } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { describeStoreContract } from './store-contract.js';

const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `t_${randomBytes(6).toString('hex')}`;
const tokenKey = randomBytes(32);

async function reachable(): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${url} (${(err as Error).message}): run scripts/ensure-postgres.sh, or set HCM_TEST_DATABASE_URL`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

beforeAll(reachable);
afterAll(async () => {
  await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_race, ${schema}_open, ${schema}_saves, ${schema}_v8 CASCADE`)).catch(
    () => undefined,
  );
});

describeStoreContract('postgres', {
  open: async () => {
    await reachable();
    return PostgresStore.open({ databaseUrl: url, schema, tokenKey });
  },
  crossInstanceLock: true,
  rawTokens: (store) => (store as PostgresStore).pool.query(`SELECT key, blob FROM ${schema}.tokens`).then((r) => JSON.stringify(r.rows)),
});

describe('PostgresStore specifics', () => {
  it('migrates once when several replicas start at the same time', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.open({ databaseUrl: url, schema: `${schema}_race`, tokenKey })));
    try {
      const { rows } = await stores[0]!.pool.query(`SELECT version FROM ${schema}_race.schema_version`);
      expect(rows).toEqual([{ version: MIGRATIONS.length }]);
      await stores[1]!.enqueue([{ id: 'r1', integration: 'race', trigger: { a: 1 }, test: false }]);
      expect((await stores[2]!.getExecution('r1'))!.trigger).toEqual({ a: 1 });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('upgrades a version-8 schema to durable execution and per-key concurrency: rows kept, waiting indexes and callbacks', async () => {
    const v8 = `${schema}_v8`;
    await admin(async (c) => {
      await c.query(`CREATE SCHEMA ${v8}`);
      for (const m of MIGRATIONS.slice(0, 8)) await c.query(m(v8));
      await c.query(`CREATE TABLE ${v8}.schema_version (version INTEGER NOT NULL); INSERT INTO ${v8}.schema_version VALUES (8)`);
      await c.query(
        `INSERT INTO ${v8}.executions (id, integration, status, test, attempt, trigger, record, queued_at, correlation_key)
         VALUES ('old', 'i', 'queued', false, 1, '{"n":1}', '{"steps":[],"log":[]}', '2026-01-01T00:00:00.000Z', 'K')`,
      );
    });
    const store = await PostgresStore.open({ databaseUrl: url, schema: v8, tokenKey });
    try {
      expect((await store.pool.query(`SELECT version FROM ${v8}.schema_version`)).rows).toEqual([{ version: MIGRATIONS.length }]);
      const old = (await store.getExecution('old'))!;
      expect(old).toMatchObject({ status: 'queued', trigger: { n: 1 } });
      expect(await store.listExecutions({ integration: 'i' })).toEqual([expect.objectContaining({ id: 'old', correlationKey: 'K' })]);
      expect(old.wakeAt).toBeUndefined();
      expect(old.cancelRequested).toBeUndefined();
      const { rows } = await store.pool.query(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE ANY (ARRAY['executions_waiting%', 'callbacks%']) ORDER BY 1`,
        [v8],
      );
      expect(rows.map((r) => r.indexname)).toEqual([
        'callbacks_expires',
        'callbacks_pkey',
        'callbacks_unconsumed',
        'executions_waiting_integration',
        'executions_waiting_wake',
      ]);
      expect(rows.find((r) => r.indexname === 'executions_waiting_wake').indexdef).toMatch(/WHERE \(status = 'waiting'::text\)/);
      expect(rows.find((r) => r.indexname === 'callbacks_unconsumed').indexdef).toMatch(/received_at IS NOT NULL\) AND \(consumed_at IS NULL/);
      // 10: the concurrency key, indexed for rows that have one.
      expect(old.concurrencyKey).toBeUndefined();
      const keyed = await store.pool.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'executions_concurrency'`, [v8]);
      expect(keyed.rows[0]?.indexdef).toMatch(/\(integration, concurrency_key, status, queued_at\) WHERE \(concurrency_key IS NOT NULL\)/);
      expect((await store.cancelExecution('old', new Date())).outcome).toBe('cancelled');
      // The retries of executions (11): a partial index on retry_of.
      const retryIndex = await store.pool.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'executions_retry_of'`, [v8]);
      expect(retryIndex.rows[0]?.indexdef).toMatch(/\(retry_of, queued_at\) WHERE \(retry_of IS NOT NULL\)/);
      expect(await store.retriesOf(['old'])).toEqual(new Map());
    } finally {
      await store.close();
    }
  });

  it('openStore picks PostgreSQL for a postgres:// URL', async () => {
    const store = await openStore({ databaseUrl: url, schema: `${schema}_open`, secret: 'pg-test-secret' });
    try {
      expect(store.kind).toBe('postgres');
      await store.tokens.set('k', { accessToken: 'a' });
      expect(await store.tokens.get('k')).toEqual({ accessToken: 'a' });
    } finally {
      await store.close();
    }
  });

  it('names the database in the error when it cannot connect', async () => {
    await expect(
      PostgresStore.open({ databaseUrl: 'postgres://nobody:secret-pw@127.0.0.1:1/none', schema: 'x', pool: { connectionTimeoutMillis: 2000 } }),
    ).rejects.toThrow(/cannot open the PostgreSQL store at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none/);
  });

  // A lone save goes through single-row statements, saves of the same tick through one statement
  // over arrays (group-saves.ts): both must write the same rows.
  for (const together of [1, 6]) {
    it(`saves ${together === 1 ? 'one at a time' : `${together} at once (one statement)`}: trigger and queued_at kept, lease while running`, async () => {
      const store = await PostgresStore.open({ databaseUrl: url, schema: `${schema}_saves`, tokenKey });
      const row = async (id: string) =>
        (
          await store.pool.query(
            `SELECT status, trigger, queued_at, claimed_by, lease_until > now() AS leased, error, duration_ms FROM ${schema}_saves.executions WHERE id = $1`,
            [id],
          )
        ).rows[0];
      const saveAll = async (recs: ExecutionRecord[], opts?: { stored: true }) => {
        const before = store.stats.commits;
        await Promise.all(recs.map((r) => store.saveExecution(r, opts)));
        return store.stats.commits - before;
      };
      try {
        const queuedAt = '2024-01-01T00:00:00.000Z';
        const recs: ExecutionRecord[] = Array.from({ length: together }, (_, i) => ({
          id: `save-${together}-${i}-${randomBytes(4).toString('hex')}`,
          integration: 'saves',
          status: 'succeeded',
          test: false,
          attempt: 1,
          trigger: { body: { i } },
          steps: [],
          log: [],
          queuedAt,
          startedAt: '2024-01-01T00:00:01.000Z',
          finishedAt: '2024-01-01T00:00:02.000Z',
          durationMs: 1000,
        }));
        // New rows, finished (a synchronous run's only write): inserted with their trigger.
        expect(await saveAll(recs)).toBe(1);
        for (const [i, r] of recs.entries()) {
          expect(await row(r.id)).toEqual({
            status: 'succeeded',
            trigger: { body: { i } },
            queued_at: new Date(queuedAt),
            claimed_by: null,
            leased: null,
            error: null,
            duration_ms: '1000',
          });
        }
        // Saved as running over the stored rows: the lease is taken; the trigger is never rewritten.
        expect(
          await saveAll(
            recs.map((r) => ({ ...r, status: 'running', trigger: { other: true }, finishedAt: undefined, durationMs: undefined })),
            { stored: true },
          ),
        ).toBe(1);
        for (const [i, r] of recs.entries())
          expect(await row(r.id)).toMatchObject({
            status: 'running',
            trigger: { body: { i } },
            claimed_by: expect.any(String),
            leased: true,
            duration_ms: null,
          });
        // An upsert of existing rows without queuedAt keeps theirs; finished: no lease.
        expect(
          await saveAll(recs.map((r) => ({ ...r, status: 'failed', trigger: { other: true }, queuedAt: undefined, error: { message: 'boom' } }))),
        ).toBe(1);
        for (const [i, r] of recs.entries()) {
          expect(await row(r.id)).toEqual({
            status: 'failed',
            trigger: { body: { i } },
            queued_at: new Date(queuedAt),
            claimed_by: null,
            leased: null,
            error: 'boom',
            duration_ms: '1000',
          });
        }
        // `stored` but the row is missing: inserted after all.
        const missing = recs.map((r) => ({ ...r, id: `${r.id}-missing` }));
        await saveAll(missing, { stored: true });
        for (const [i, r] of missing.entries())
          expect(await row(r.id)).toMatchObject({ status: 'succeeded', trigger: { body: { i } }, queued_at: new Date(queuedAt) });
      } finally {
        await store.close();
      }
    });
  }

  it('batched enqueues and saves take a null trigger, quotes and backslashes, and a lone surrogate in an error', async () => {
    const store = await PostgresStore.open({ databaseUrl: url, schema: `${schema}_saves`, tokenKey });
    try {
      const id = (n: number) => `odd-${n}-${randomBytes(4).toString('hex')}`;
      const ids = [id(1), id(2), id(3)];
      await Promise.all([
        store.enqueue([{ id: ids[0]!, integration: 'odd', trigger: null, test: false }]),
        store.enqueue([{ id: ids[1]!, integration: 'odd', trigger: { s: 'a "quoted" \\ back\\slash\n' }, test: false }]),
      ]);
      expect((await store.getExecution(ids[0]!))!.trigger).toBeNull();
      expect((await store.getExecution(ids[1]!))!.trigger).toEqual({ s: 'a "quoted" \\ back\\slash\n' });
      const lone = 'cut \ud83d';
      await Promise.all(
        [ids[0]!, ids[2]!].map((i) =>
          store.saveExecution({
            id: i,
            integration: 'odd',
            status: 'failed',
            test: false,
            attempt: 1,
            trigger: null,
            steps: [],
            log: [],
            error: { message: lone },
            finishedAt: new Date().toISOString(),
          }),
        ),
      );
      for (const i of [ids[0]!, ids[2]!]) {
        const r = (await store.getExecution(i))!;
        expect(r.trigger).toBeNull();
        expect(r.status).toBe('failed');
      }
      const { rows } = await store.pool.query(`SELECT error FROM ${schema}_saves.executions WHERE id = $1`, [ids[2]]);
      expect(rows[0].error).toBe('cut \ufffd');
    } finally {
      await store.close();
    }
  });

  it('rejects an unsafe schema name', async () => {
    await expect(PostgresStore.open({ databaseUrl: url, schema: 'x; drop table y' })).rejects.toThrow(/schema name/);
  });
});
