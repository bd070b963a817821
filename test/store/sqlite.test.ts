import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { randomUUID } from 'node:crypto';
import type { NewExecution } from '../../src/store/types.js';
import { describeStoreContract, type TestStore } from './store-contract.js';

const newExecution = (integration: string): NewExecution => ({ id: randomUUID(), integration, trigger: { body: {} }, test: false });

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
  it('uses WAL, synchronous=NORMAL with its own WAL sync per group commit, and a schema version', async () => {
    const store = await SqliteStore.open(join(root, 'pragmas'), { tokenKey });
    try {
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(store.db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL: the write queue syncs
      const before = store.stats.walSyncs;
      await Promise.all([store.enqueue([newExecution('a')]), store.enqueue([newExecution('b')])]);
      expect(store.stats.walSyncs - before).toBe(1); // one group commit, one fsync, both answered after it
      expect(store.db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: 1 });
    } finally {
      await store.close();
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

  it('checkpoints the WAL into the database file from its own thread, never in a commit of the store', async () => {
    const d = join(root, 'checkpoint');
    const store = await SqliteStore.open(d, { tokenKey, checkpointIntervalMs: 20 });
    try {
      expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      const mainFile = () => statSync(join(d, 'hcm-runner.db')).size;
      const before = mainFile();
      const trigger = { body: 'x'.repeat(4000) };
      for (let i = 0; i < 10; i++) await store.enqueue(Array.from({ length: 50 }, (_, j) => ({ id: `c-${i}-${j}`, integration: 'cp', trigger, test: false })));
      // The rows reach the database file (not only the WAL) without this connection checkpointing.
      for (let waited = 0; (mainFile() < before + 1_000_000 || store.checkpointer.stats.pages === 0) && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(mainFile()).toBeGreaterThan(before + 1_000_000);
      expect(store.checkpointer.stats.pages).toBeGreaterThan(0);
      expect(store.checkpointer.stats.lastError).toBeUndefined();
    } finally {
      await store.close();
    }
    // Closed cleanly: the WAL was folded in and removed, and the rows are all there.
    expect(existsSync(join(d, 'hcm-runner.db-wal'))).toBe(false);
    const again = await SqliteStore.open(d, { tokenKey });
    expect(again.db.prepare("SELECT COUNT(*) AS n FROM executions WHERE integration = 'cp'").get()).toEqual({ n: 500 });
    await again.close();
  });

  it('rejects writes after close', async () => {
    const store = await SqliteStore.open(join(root, 'closed'), { tokenKey });
    await store.close();
    await expect(store.enqueue([{ id: 'x', integration: 'x', trigger: {}, test: false }])).rejects.toThrow(/closed/);
    await expect(store.getExecution('x')).rejects.toThrow(/closed/);
  });
});
