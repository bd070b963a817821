/**
 * `idempotencyKey` + `dedupeWindow` over HTTP, on SQLite and on PostgreSQL (docs/triggers.md
 * "Idempotency"): a duplicate within the window creates no execution and is answered as the first
 * (async: its executionId; sync: its response, waiting for it) with `x-idempotent-replay: true`;
 * live and test URLs are apart; a bad key never refuses a request; long keys are hashed; a
 * request refused by backpressure claims no key; and two runners on one PostgreSQL database
 * create one execution for the same key sent to both at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { fixtures, poll, slowUpstream, startTestServer, tempDir, type SlowUpstream, type TestServer } from './helpers.js';

const pgUrl = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = join(fixtures, 'idempotency');
const REPLAY = 'x-idempotent-replay';

interface Backend {
  name: 'sqlite' | 'postgres';
  /** A new store (on PostgreSQL: on the suite's schema, so two runners share it). */
  open(): Promise<Store>;
  /** Runs SQL against the store's tables. */
  sql<R = Record<string, unknown>>(store: Store, text: string, params?: unknown[]): Promise<R[]>;
  cleanup(): Promise<void>;
}

function sqliteBackend(): Backend {
  const dirs: Array<{ remove(): void }> = [];
  return {
    name: 'sqlite',
    open: () => {
      const data = tempDir('hcm-idem-');
      dirs.push(data);
      return SqliteStore.open(data.path);
    },
    sql: async (store, text, params = []) => {
      const stmt = (store as SqliteStore).db.prepare(text.replace(/\$\d+/g, '?'));
      if (stmt.reader) return stmt.all(...params) as never;
      stmt.run(...params);
      return [];
    },
    cleanup: async () => {
      for (const d of dirs.splice(0)) d.remove();
    },
  };
}

function postgresBackend(): Backend {
  const schema = `idem_${randomBytes(6).toString('hex')}`;
  const tokenKey = randomBytes(32);
  return {
    name: 'postgres',
    open: () => PostgresStore.open({ databaseUrl: pgUrl, schema, tokenKey }),
    sql: async (_store, text, params = []) => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      try {
        await c.query(`SET search_path TO ${schema}`);
        return (await c.query(text, params)).rows as never;
      } finally {
        await c.end();
      }
    },
    cleanup: async () => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => c.end());
    },
  };
}

describe.each([sqliteBackend(), postgresBackend()])('idempotency on $name', (backend) => {
  let s: TestServer;
  let store: Store;
  let slow: SlowUpstream;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    slow = await slowUpstream(1500);
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
    s = await startTestServer({ dir, logger, slowUrl: slow.url, store: await backend.open() });
    store = s.runtime.store;
  });
  afterAll(async () => {
    await s?.stop();
    await slow?.close();
    await backend.cleanup();
  });

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const executions = async (integration: string) =>
    (await s.api('GET', `/executions?integration=${integration}&limit=500`)).body as Array<{ id: string }>;
  const keyRows = (integration: string) =>
    backend.sql<{ key: string; execution_id: string }>(store, 'SELECT key, execution_id FROM idempotency_keys WHERE integration = $1', [integration]);

  it('answers an async duplicate with the first executionId and x-idempotent-replay, and runs it once', async () => {
    const url = s.urls('idem-async').live;
    const first = await post(url, { n: 1 }, { 'webhook-id': 'msg_1' });
    expect(first.status).toBe(200);
    expect(first.headers.get(REPLAY)).toBeNull();
    const { executionId } = (await first.json()) as { executionId: string };
    const again = await post(url, { n: 2 }, { 'webhook-id': 'msg_1' });
    expect(again.status).toBe(200);
    expect(again.headers.get(REPLAY)).toBe('true');
    expect(await again.json()).toEqual({ executionId });
    const record = await s.waitForExecution(executionId);
    expect(record.idempotencyKey).toBe('msg_1');
    expect(record.result).toEqual({ n: 1 });
    expect((await executions('idem-async')).map((e) => e.id)).toEqual([executionId]);
  });

  it('keeps live and test URLs apart, and a request without a key is never deduplicated', async () => {
    const live = await (await post(s.urls('idem-async').live, {}, { 'webhook-id': 'msg_kinds' })).json();
    const test1 = await post(s.urls('idem-async').test, {}, { 'webhook-id': 'msg_kinds' });
    expect(test1.headers.get(REPLAY)).toBeNull();
    const testId = ((await test1.json()) as { executionId: string }).executionId;
    expect(testId).not.toBe(live.executionId);
    const test2 = await post(s.urls('idem-async').test, {}, { 'webhook-id': 'msg_kinds' });
    expect(test2.headers.get(REPLAY)).toBe('true');
    expect(((await test2.json()) as { executionId: string }).executionId).toBe(testId);

    const a = await (await post(s.urls('idem-async').live, {})).json();
    const b = await (await post(s.urls('idem-async').live, {})).json();
    expect(a.executionId).not.toBe(b.executionId);
    const empty1 = await (await post(s.urls('idem-body').live, { key: '' })).json();
    const empty2 = await (await post(s.urls('idem-body').live, { key: '' })).json();
    expect(empty1.executionId).not.toBe(empty2.executionId);
  });

  it('forgets a key after its window: the next request runs again, and pruning removes the key', async () => {
    const url = s.urls('idem-async').live;
    const first = ((await (await post(url, {}, { 'webhook-id': 'msg_window' })).json()) as { executionId: string }).executionId;
    const replay = await post(url, {}, { 'webhook-id': 'msg_window' });
    expect(((await replay.json()) as { executionId: string }).executionId).toBe(first);
    // The 1m window has passed (moved, not waited for).
    const past = new Date(Date.now() - 1000).toISOString();
    await backend.sql(store, 'UPDATE idempotency_keys SET expires_at = $1 WHERE key = $2', [past, 'msg_window']);
    const later = await post(url, {}, { 'webhook-id': 'msg_window' });
    expect(later.headers.get(REPLAY)).toBeNull();
    const second = ((await later.json()) as { executionId: string }).executionId;
    expect(second).not.toBe(first);
    expect((await keyRows('idem-async')).find((r) => r.key === 'msg_window')?.execution_id).toBe(second);

    await backend.sql(store, 'UPDATE idempotency_keys SET expires_at = $1 WHERE key = $2', [past, 'msg_window']);
    expect(await store.pruneIdempotencyKeys(new Date())).toBeGreaterThanOrEqual(1);
    expect((await keyRows('idem-async')).find((r) => r.key === 'msg_window')).toBeUndefined();
    // The window is the trigger's: 1m from now, give or take the test's own time.
    await post(url, {}, { 'webhook-id': 'msg_fresh' });
    const [row] = await backend.sql<{ expires_at: string | Date }>(store, 'SELECT expires_at FROM idempotency_keys WHERE key = $1', ['msg_fresh']);
    const left = new Date(row!.expires_at).getTime() - Date.now();
    expect(left).toBeGreaterThan(30_000);
    expect(left).toBeLessThanOrEqual(60_000);
  });

  it('accepts a request whose key fails or is not a string, without deduplication, and warns', async () => {
    for (const [integration, reason] of [
      ['idem-fail', /idempotencyKey expression failed/],
      ['idem-body', /gave a number, not a string/],
    ] as const) {
      const from = logLines.length;
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await post(s.urls(integration).live, { key: 5 });
        expect(res.status).toBe(200);
        expect(res.headers.get(REPLAY)).toBeNull();
        ids.push(((await res.json()) as { executionId: string }).executionId);
      }
      expect(ids[0]).not.toBe(ids[1]);
      const warned = logLines.slice(from).filter((l) => reason.test(String(l.msg)));
      expect(warned).toHaveLength(2);
      expect(warned[0]).toMatchObject({ integration, level: 40 });
      const record = await s.waitForExecution(ids[0]!);
      expect(record.status).toBe('succeeded');
      expect(record.idempotencyKey).toBeUndefined();
    }
  });

  it('hashes keys longer than 512 bytes (sha256) and still deduplicates them', async () => {
    const long = `evt_${'ż'.repeat(300)}`;
    const hashed = `sha256:${createHash('sha256').update(long, 'utf8').digest('hex')}`;
    const url = s.urls('idem-body').live;
    const first = ((await (await post(url, { key: long })).json()) as { executionId: string }).executionId;
    const again = await post(url, { key: long });
    expect(again.headers.get(REPLAY)).toBe('true');
    expect(((await again.json()) as { executionId: string }).executionId).toBe(first);
    expect((await s.waitForExecution(first)).idempotencyKey).toBe(hashed);
    expect((await keyRows('idem-body')).map((r) => r.key)).toContain(hashed);
    // 512 bytes exactly is kept as it is.
    const edge = 'k'.repeat(512);
    const id = ((await (await post(url, { key: edge })).json()) as { executionId: string }).executionId;
    expect((await s.waitForExecution(id)).idempotencyKey).toBe(edge);
  });

  it('gives a sync duplicate the first run’s response, waiting for it while it runs', async () => {
    const url = s.urls('idem-sync').live;
    const hits = slow.hits;
    const first = post(url, { n: 1 }, { 'webhook-id': 'sync_1' });
    await poll(async () => (slow.hits > hits ? true : undefined));
    const duplicate = await post(url, { n: 2 }, { 'webhook-id': 'sync_1' });
    const original = await first;
    expect(original.status).toBe(200);
    expect(duplicate.status).toBe(200);
    const body = await original.json();
    expect(body.first).toBe(1);
    expect(await duplicate.json()).toEqual(body);
    expect(duplicate.headers.get(REPLAY)).toBe('true');
    expect(duplicate.headers.get('x-execution-id')).toBe(body.execution);
    expect(slow.hits).toBe(hits + 1);
    // Once it has finished: answered at once, the same again.
    const late = await post(url, { n: 3 }, { 'webhook-id': 'sync_1' });
    expect(await late.json()).toEqual(body);
    expect(slow.hits).toBe(hits + 1);
    expect((await executions('idem-sync')).map((e) => e.id)).toEqual([body.execution]);
  });

  it('takes keys on appEvent triggers too', async () => {
    const url = s.urls('idem-app-event').live;
    const a = ((await (await post(url, { id: 'evt_1' })).json()) as { executionId: string }).executionId;
    const b = await post(url, { id: 'evt_1' });
    expect(b.headers.get(REPLAY)).toBe('true');
    expect(((await b.json()) as { executionId: string }).executionId).toBe(a);
  });
});

describe.each([sqliteBackend(), postgresBackend()])('a flood of distinct keys on $name', (backend) => {
  let s: TestServer;
  let slow: SlowUpstream;
  afterAll(async () => {
    await s?.stop();
    await slow?.close();
    await backend.cleanup();
  });

  it('is bounded by the backlog: a refused request claims no key, and its retry runs', async () => {
    slow = await slowUpstream(2000);
    s = await startTestServer({
      dir,
      slowUrl: slow.url,
      limits: { concurrency: 1, perIntegration: 1, backlog: 4 },
      store: await backend.open(),
    });
    const url = s.urls('idem-slow').live;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(url, { method: 'POST', headers: { 'webhook-id': `flood_${i}` }, body: '{}' }).then(async (r) => ({
          i,
          status: r.status,
          body: await r.json(),
        })),
      ),
    );
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(accepted.length + refused.length).toBe(30);
    expect(refused.length).toBeGreaterThan(20);
    const rows = await backend.sql<{ key: string }>(s.runtime.store, 'SELECT key FROM idempotency_keys WHERE integration = $1', ['idem-slow']);
    expect(rows.map((r) => r.key).sort()).toEqual(accepted.map((a) => `flood_${a.i}`).sort());
    // Once there is room, a refused request's retry is a new execution, not a replay.
    const retry = refused[0]!;
    const res = await poll(
      async () => {
        const r = await fetch(url, { method: 'POST', headers: { 'webhook-id': `flood_${retry.i}` }, body: '{}' });
        return r.status === 200 ? r : undefined;
      },
      30_000,
      250,
    );
    expect(res.headers.get(REPLAY)).toBeNull();
  }, 60_000);
});

describe('two runners on one PostgreSQL database', () => {
  const backend = postgresBackend();
  let a: TestServer;
  let b: TestServer;
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await backend.cleanup();
  });

  it('create one execution for the same key sent to both at once', async () => {
    a = await startTestServer({ dir, replicaId: 'replica-a', store: await backend.open() });
    b = await startTestServer({ dir, replicaId: 'replica-b', store: await backend.open() });
    const keys = Array.from({ length: 20 }, (_, i) => `race_${i}_${randomBytes(4).toString('hex')}`);
    const send = (s: TestServer, key: string) =>
      fetch(s.urls('idem-async').live, { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': key }, body: '{}' }).then(
        async (r) => ({ status: r.status, replay: r.headers.get(REPLAY), id: ((await r.json()) as { executionId: string }).executionId }),
      );
    for (const key of keys) {
      const [x, y] = await Promise.all([send(a, key), send(b, key)]);
      expect([x.status, y.status]).toEqual([200, 200]);
      expect(x.id).toBe(y.id);
      expect([x.replay, y.replay].sort()).toEqual(['true', null].sort());
    }
    const rows = await backend.sql<{ n: string }>(a.runtime.store, 'SELECT COUNT(*) AS n FROM executions WHERE integration = $1', ['idem-async']);
    expect(Number(rows[0]!.n)).toBe(keys.length);
  }, 60_000);
});
