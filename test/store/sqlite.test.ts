import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { SqliteStore, SQLITE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import Database from 'better-sqlite3';
import { newExecutionId } from '../../src/common/ids.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { retriesOf as retriesOfSql } from '../../src/store/sql/plans.js';
import { describeStoreContract, type TestStore } from './store-contract.js';

const root = mkdtempSync(join(tmpdir(), 'hcm-store-sqlite-'));
const dir = join(root, 'data', 'nested'); // created on open
const tokenKey = randomBytes(32);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describeStoreContract('sqlite', {
  open: () => SqliteStore.open(dir, { tokenKey }),
  crossInstanceLock: false,
  rawTokens: async (store) => {
    const db = (store as SqliteStore).db;
    const rows = db.prepare('SELECT key, blob FROM tokens').all();
    // The table and the database files on disk (main file + WAL).
    const files = readdirSync(dir)
      .filter((f) => f.startsWith('hcm-runner.db'))
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('\n');
    return JSON.stringify(rows) + files;
  },
});

describe('SqliteStore specifics', () => {
  it('upgrades a version-1 database: the finished index becomes partial, the rows stay', async () => {
    const old = join(root, 'v1');
    mkdirSync(old, { recursive: true });
    const db = new Database(join(old, SQLITE_FILE));
    db.pragma('journal_mode = WAL');
    db.exec(MIGRATIONS[0]!);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1)');
    db.prepare(
      `INSERT INTO executions (id, integration, status, trigger, record, queued_at, finished_at) VALUES ('old', 'i', 'succeeded', '{}', '{"steps":[],"log":[]}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z')`,
    ).run();
    db.close();
    const store = await SqliteStore.open(old, { tokenKey });
    try {
      expect(store.db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: MIGRATIONS.length });
      const index = store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'executions_finished'`).get() as { sql: string };
      expect(index.sql).toMatch(/WHERE finished_at IS NOT NULL/);
      expect((await store.getExecution('old'))?.status).toBe('succeeded');
    } finally {
      await store.close();
    }
  });

  it('upgrades a version-2 database: executions and captures keep their rows, bulky columns move last, old captures get sizes and summaries', async () => {
    const old = join(root, 'v2');
    mkdirSync(old, { recursive: true });
    const db = new Database(join(old, SQLITE_FILE));
    db.pragma('journal_mode = WAL');
    db.exec(MIGRATIONS[0]!);
    db.exec(MIGRATIONS[1]!);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (2)');
    db.prepare(
      `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at, started_at, finished_at, duration_ms, error)
       VALUES ('old', 'i', 'failed', 1, 2, '{"n":1}', '{"steps":[],"log":[]}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.500Z', '2026-01-01T00:00:01.000Z', 500, 'boom')`,
    ).run();
    const trigger = JSON.stringify({ method: 'POST', pathFragment: 'x', body: { data: { a: 'ż' }, contentType: 'application/json' } });
    db.prepare(`INSERT INTO captures (integration, id, received_at, trigger) VALUES ('i', 'c1', '2026-01-01T00:00:00.000Z', ?)`).run(trigger);
    db.close();
    const store = await SqliteStore.open(old, { tokenKey });
    try {
      expect(store.db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: MIGRATIONS.length });
      const columns = (table: string) => (store.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
      expect(columns('executions').slice(-2)).toEqual(['trigger', 'record']);
      expect(columns('captures').at(-1)).toBe('trigger');
      expect(await store.getExecution('old')).toMatchObject({
        status: 'failed',
        test: true,
        attempt: 2,
        trigger: { n: 1 },
        finishedAt: '2026-01-01T00:00:01.000Z',
      });
      expect(await store.listExecutions({ integration: 'i' })).toEqual([
        expect.objectContaining({ id: 'old', durationMs: 500, error: { message: 'boom' }, startedAt: '2026-01-01T00:00:00.500Z' }),
      ]);
      expect(await store.captureSummaries('i')).toEqual([
        {
          id: 'c1',
          integration: 'i',
          receivedAt: '2026-01-01T00:00:00.000Z',
          size: Buffer.byteLength(trigger),
          truncated: false,
          method: 'POST',
          path: '/x',
          contentType: 'application/json',
          preview: '{"a":"ż"}',
        },
      ]);
      // New captures continue the old numbering (newest first).
      await store.addCapture({ id: 'c2', integration: 'i', receivedAt: '2026-01-02T00:00:00.000Z', trigger: {} });
      expect((await store.captureSummaries('i')).map((c) => c.id)).toEqual(['c2', 'c1']);
      const indexes = (
        store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions' AND sql IS NOT NULL`).all() as Array<{
          name: string;
        }>
      ).map((r) => r.name);
      expect(indexes.sort()).toEqual([
        'executions_concurrency',
        'executions_correlation',
        'executions_finished',
        'executions_integration_queued',
        'executions_queued',
        'executions_retry_of',
        'executions_status',
        'executions_waiting_integration',
        'executions_waiting_wake',
      ]);
      // The correlation and version columns (migration 6), the durable ones (7) and the concurrency
      // key (8) sit before the bulky ones too.
      expect(columns('executions').slice(-9)).toEqual([
        'correlation_key',
        'version_sha256',
        'version_commit',
        'wake_at',
        'retry_of',
        'cancel_requested',
        'concurrency_key',
        'trigger',
        'record',
      ]);
    } finally {
      await store.close();
    }
  });

  it('upgrades a version-6 database to durable execution: rows kept, new columns before the bulky ones, waiting indexes and callbacks', async () => {
    const old = join(root, 'v6');
    mkdirSync(old, { recursive: true });
    const db = new Database(join(old, SQLITE_FILE));
    db.pragma('journal_mode = WAL');
    for (const m of MIGRATIONS.slice(0, 6)) db.exec(m);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (6)');
    db.prepare(
      `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at, correlation_key)
       VALUES ('old', 'i', 'queued', 0, 1, '{"n":1}', '{"steps":[],"log":[]}', '2026-01-01T00:00:00.000Z', 'K')`,
    ).run();
    db.close();
    const store = await SqliteStore.open(old, { tokenKey });
    try {
      expect(store.db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: MIGRATIONS.length });
      const columns = (store.db.prepare('PRAGMA table_info(executions)').all() as Array<{ name: string }>).map((c) => c.name);
      expect(columns.slice(-6)).toEqual(['wake_at', 'retry_of', 'cancel_requested', 'concurrency_key', 'trigger', 'record']);
      const old1 = (await store.getExecution('old'))!;
      expect(old1).toMatchObject({ status: 'queued', trigger: { n: 1 } });
      expect(await store.listExecutions({ integration: 'i' })).toEqual([expect.objectContaining({ id: 'old', correlationKey: 'K' })]);
      expect(old1.wakeAt).toBeUndefined();
      expect(old1.cancelRequested).toBeUndefined();
      expect(await store.cancelRequested(['old'])).toEqual([]);
      const plan = store.db.prepare(`EXPLAIN QUERY PLAN SELECT MIN(wake_at) FROM executions WHERE status = 'waiting'`).all();
      expect(JSON.stringify(plan)).toContain('executions_waiting_wake');
      const count = store.db.prepare(`EXPLAIN QUERY PLAN SELECT COUNT(*) FROM executions WHERE status = 'waiting' AND integration = 'i'`).all();
      expect(JSON.stringify(count)).toContain('executions_waiting_integration');
      // The retries of executions (a second retry refused, a bulk retry's skips): the partial index on retry_of (9).
      const retries = store.db.prepare(`EXPLAIN QUERY PLAN ${retriesOfSql(2)}`).all('a', 'b');
      expect(JSON.stringify(retries)).toContain('executions_retry_of');
      expect(await store.getCallback('none')).toBeUndefined();
      expect((await store.cancelExecution('old', new Date())).outcome).toBe('cancelled');
    } finally {
      await store.close();
    }
  });

  it('upgrades a version-7 database to per-key concurrency: the rebuild keeps the durable columns and indexes', async () => {
    const old = join(root, 'v7');
    mkdirSync(old, { recursive: true });
    const db = new Database(join(old, SQLITE_FILE));
    db.pragma('journal_mode = WAL');
    for (const m of MIGRATIONS.slice(0, 7)) db.exec(m);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (7)');
    db.prepare(
      `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at, wake_at, retry_of, cancel_requested)
       VALUES ('w', 'i', 'waiting', 0, 2, '{"n":1}', '{"steps":[],"log":[]}', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', 'r0', 1)`,
    ).run();
    db.prepare(
      `INSERT INTO callbacks (token, execution_id, integration, step, test, expires_at) VALUES ('t', 'w', 'i', 'approve', 0, '2099-01-01T00:00:00.000Z')`,
    ).run();
    db.close();
    const store = await SqliteStore.open(old, { tokenKey });
    try {
      expect(store.db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: MIGRATIONS.length });
      const w = (await store.getExecution('w'))!;
      expect(w).toMatchObject({ status: 'waiting', attempt: 2, wakeAt: '2026-01-02T00:00:00.000Z', retryOf: 'r0', cancelRequested: true });
      expect(w.concurrencyKey).toBeUndefined();
      expect(await store.nextWakeAt()).toBe('2026-01-02T00:00:00.000Z');
      expect(await store.countWaiting('i')).toBe(1);
      expect(await store.getCallback('t')).toMatchObject({ executionId: 'w', step: 'approve' });
      const plan = store.db.prepare(`EXPLAIN QUERY PLAN SELECT MIN(wake_at) FROM executions WHERE status = 'waiting'`).all();
      expect(JSON.stringify(plan)).toContain('executions_waiting_wake');
      const keyed = store.db
        .prepare(`EXPLAIN QUERY PLAN SELECT id FROM executions WHERE integration = 'i' AND concurrency_key = 'k' AND status = 'waiting'`)
        .all();
      expect(JSON.stringify(keyed)).toContain('executions_concurrency');
      expect((await store.wakeDue(new Date('2026-01-03T00:00:00.000Z'), 10)).map((r) => r.id)).toEqual(['w']);
    } finally {
      await store.close();
    }
  });

  it('the in-process queue wakes what is due into its lanes as the same attempt', async () => {
    const store = await SqliteStore.open(join(root, 'wake-queue'), { tokenKey });
    try {
      const queue = store.openQueue();
      const e = { id: newExecutionId(), integration: 'wake-q', trigger: {}, test: false, attempt: 2 };
      await store.enqueue([e]);
      const r = (await store.markRunning(e.id, 2))!;
      await store.saveExecution({ ...r, status: 'waiting', wakeAt: '2001-01-01T00:00:00.000Z' }, { stored: true });
      let available = 0;
      queue.onAvailable(() => available++);
      expect(queue.size).toBe(0);
      expect(await queue.wake(new Date('2000-12-31T00:00:00.000Z'))).toBe(0);
      expect(await queue.wake(new Date('2001-01-02T00:00:00.000Z'))).toBe(1);
      expect(available).toBe(1);
      expect(queue.take(() => true)).toEqual({ id: e.id, integration: 'wake-q', attempt: 2 });
      expect(await queue.wake(new Date('2001-01-02T00:00:00.000Z'))).toBe(0);
      expect((await store.getExecution(e.id))!.status).toBe('queued');
    } finally {
      await store.close();
    }
  });

  it('the in-process queue: a keyed execution woken before its settle is read back keeps its slot (the next of its key stays behind)', async () => {
    const store = await SqliteStore.open(join(root, 'wake-keyed'), { tokenKey });
    const queue = store.openQueue();
    try {
      queue.bind({ free: () => 8, freeFor: () => 8, maxInterruptions: () => 3, keyLimit: () => 1 });
      const a = { id: newExecutionId(), integration: 'keyed-q', trigger: {}, test: false, concurrencyKey: 'k' };
      const b = { id: newExecutionId(), integration: 'keyed-q', trigger: {}, test: false, concurrencyKey: 'k' };
      await store.enqueue([a, b]);
      queue.push([a, b].map((e) => ({ id: e.id, integration: e.integration, attempt: 1, concurrencyKey: 'k' })));
      const jobA = queue.take(() => true)!;
      expect(jobA.id).toBe(a.id);
      expect(queue.take(() => true)).toBeUndefined();
      // A's run ends waiting, and the waker takes it before the queue has read its status back.
      const r = (await store.markRunning(a.id, 1))!;
      await store.saveExecution({ ...r, status: 'waiting', wakeAt: '2001-01-01T00:00:00.000Z' }, { stored: true });
      expect(await queue.wake(new Date())).toBe(1);
      queue.settle(jobA, 'done');
      await new Promise((r) => setTimeout(r, 50));
      // A is back as the holder it still is; B is still behind it.
      expect(queue.take(() => true)?.id).toBe(a.id);
      expect(queue.take(() => true)).toBeUndefined();
      expect((queue as unknown as { aheadInLine(id: string): number | undefined }).aheadInLine(b.id)).toBe(1);
      // A's woken run ends: now B goes.
      const woke = (await store.markRunning(a.id, 1))!;
      await store.saveExecution({ ...woke, status: 'succeeded', finishedAt: new Date().toISOString() }, { stored: true });
      queue.settle(jobA, 'done');
      await new Promise((r) => setTimeout(r, 50));
      expect(queue.take(() => true)?.id).toBe(b.id);
    } finally {
      await queue.stop();
      await store.close();
    }
  });

  it('the in-process queue: a waiting keyed execution cancelled frees its slot at once (queue.ended), not at the next check', async () => {
    const store = await SqliteStore.open(join(root, 'cancel-keyed'), { tokenKey });
    const queue = store.openQueue();
    try {
      queue.bind({ free: () => 8, freeFor: () => 8, maxInterruptions: () => 3, keyLimit: () => 1 });
      const a = { id: newExecutionId(), integration: 'keyed-c', trigger: {}, test: false, concurrencyKey: 'k' };
      const b = { id: newExecutionId(), integration: 'keyed-c', trigger: {}, test: false, concurrencyKey: 'k' };
      await store.enqueue([a, b]);
      queue.push([a, b].map((e) => ({ id: e.id, integration: e.integration, attempt: 1, concurrencyKey: 'k' })));
      const jobA = queue.take(() => true)!;
      const r = (await store.markRunning(a.id, 1))!;
      await store.saveExecution({ ...r, status: 'waiting', wakeAt: '2999-01-01T00:00:00.000Z' }, { stored: true });
      queue.settle(jobA, 'done');
      await new Promise((r) => setTimeout(r, 50));
      expect(queue.take(() => true)).toBeUndefined();
      const outcome = await store.cancelExecution(a.id, new Date());
      if (outcome.outcome !== 'cancelled') throw new Error(`not cancelled: ${outcome.outcome}`);
      queue.ended?.(outcome.record);
      expect(queue.take(() => true)?.id).toBe(b.id);
    } finally {
      await queue.stop();
      await store.close();
    }
  });

  it('uses WAL, FULL commits for lone writes and a WAL sync off the loop for concurrent ones, and a schema version', async () => {
    const store = await SqliteStore.open(join(root, 'pragmas'), { tokenKey });
    try {
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(store.db.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(store.db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: MIGRATIONS.length });
    } finally {
      await store.close();
    }
    // A lone write commits with FULL; concurrent ones together with NORMAL and one WAL sync off
    // the event loop, answered after it; every row is there either way.
    const store2 = await SqliteStore.open(join(root, 'pragmas'), { tokenKey });
    try {
      const exec = () => ({ id: newExecutionId(), integration: 'sync-modes', trigger: { body: {} }, test: false });
      const syncs0 = store2.stats.walSyncs;
      await store2.enqueue([exec()]);
      expect(store2.stats.walSyncs).toBe(syncs0);
      expect(store2.db.pragma('synchronous', { simple: true })).toBe(2);
      await Promise.all(Array.from({ length: 8 }, () => store2.enqueue([exec()])));
      expect(store2.stats.walSyncs).toBe(syncs0 + 1);
      expect(store2.db.prepare(`SELECT COUNT(*) AS n FROM executions WHERE integration = 'sync-modes'`).get()).toEqual({ n: 9 });
    } finally {
      await store2.close();
    }
    // Reopening applies nothing twice.
    const again = await SqliteStore.open(join(root, 'pragmas'), { tokenKey });
    expect(again.db.prepare('SELECT COUNT(*) AS n FROM schema_version').get()).toEqual({ n: 1 });
    await again.close();
  });

  it('refuses a data directory below a regular file with a clear error', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    const bad = join(file, 'sub');
    await expect(SqliteStore.open(bad)).rejects.toThrow(/cannot use data directory ".*a-file\/sub".*a file, not a directory.*can write to/);
    await expect(openStore({ dataDir: bad })).rejects.toThrow(/a-file\/sub/);
    await expect(SqliteStore.open(file)).rejects.toThrow(/cannot use data directory ".*a-file"/);
  });

  it.skipIf(process.getuid?.() === 0)('refuses a read-only data directory with a clear error (non-root)', async () => {
    const ro = join(root, 'ro');
    mkdtempSync(ro);
    chmodSync(ro, 0o555);
    try {
      await expect(SqliteStore.open(ro)).rejects.toThrow(/cannot use data directory .*permission denied/);
    } finally {
      chmodSync(ro, 0o755);
    }
  });

  it('reports a full disk clearly and writes nothing of the failed batch', async () => {
    const d = join(root, 'full');
    const store = await SqliteStore.open(d, { tokenKey });
    try {
      await store.enqueue([{ id: 'kept', integration: 'full', trigger: {}, test: false }]);
      const pages = store.db.pragma('page_count', { simple: true }) as number;
      store.db.pragma(`max_page_count = ${pages + 2}`);
      const big = 'x'.repeat(64 * 1024);
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.enqueue([{ id: `big-${i}`, integration: 'full', trigger: { big }, test: false }])),
      );
      const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason.message));
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]).toMatch(/data directory ".*full" is full .*free disk space/);
      store.db.pragma('max_page_count = 1073741823');
      const ids = (await store.listExecutions({ integration: 'full' })).map((s) => s.id);
      expect(ids).toContain('kept');
      const ok = results.map((r, i) => (r.status === 'fulfilled' ? `big-${i}` : undefined)).filter(Boolean);
      expect(ids.sort()).toEqual(['kept', ...ok].sort());
      // Still usable afterwards.
      await store.enqueue([{ id: 'after', integration: 'full', trigger: {}, test: false }]);
      expect(await store.getExecution('after')).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it('openStore picks SQLite for a data dir and encrypts with the given secret', async () => {
    const d = join(root, 'open');
    const store = (await openStore({ dataDir: d, secret: 'test-secret' })) as TestStore;
    expect(store.kind).toBe('sqlite');
    await store.tokens.set('k', { accessToken: 'plain-access' });
    await store.close();
    const again = await openStore({ dataDir: d, secret: 'test-secret' });
    expect(await again.tokens.get('k')).toEqual({ accessToken: 'plain-access' });
    await again.close();
    const wrong = await openStore({ dataDir: d, secret: 'another' });
    await expect(wrong.tokens.get('k')).rejects.toThrow(/cannot be decrypted/);
    await wrong.close();
    await expect(openStore({})).rejects.toThrow(/data directory/);
    await expect(openStore({ databaseUrl: 'mysql://x' })).rejects.toThrow(/postgres/);
  });

  it('rejects writes after close', async () => {
    const store = await SqliteStore.open(join(root, 'closed'), { tokenKey });
    await store.close();
    await expect(store.enqueue([{ id: 'x', integration: 'x', trigger: {}, test: false }])).rejects.toThrow(/closed/);
    await expect(store.getExecution('x')).rejects.toThrow(/closed/);
  });
});
