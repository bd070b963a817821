/**
 * The store contract on PostgreSQL. Needs the local server (scripts/ensure-postgres.sh starts it);
 * when it is not reachable the tests FAIL with a message saying so — they never skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    throw new Error(`PostgreSQL is not reachable at ${url} (${(err as Error).message}): run scripts/ensure-postgres.sh, or set HCM_TEST_DATABASE_URL`);
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
  await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_race, ${schema}_open CASCADE`)).catch(() => undefined);
});

describeStoreContract('postgres', {
  open: async () => {
    await reachable();
    return PostgresStore.open({ databaseUrl: url, schema, tokenKey });
  },
  crossInstanceLock: true,
  rawTokens: (store) =>
    (store as PostgresStore).pool.query(`SELECT key, blob FROM ${schema}.tokens`).then((r) => JSON.stringify(r.rows)),
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

  it('rejects an unsafe schema name', async () => {
    await expect(PostgresStore.open({ databaseUrl: url, schema: 'x; drop table y' })).rejects.toThrow(/schema name/);
  });
});
