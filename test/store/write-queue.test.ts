/**
 * The SQLite write queue: writes of the same moment are one transaction on the writer thread;
 * a write that fails by itself fails alone, a batch that fails as a whole writes nothing; the
 * writes queued while a batch is in flight go out together as the next one.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteQueue } from '../../src/store/sqlite/write-queue.js';

let dir: string;
let db: Database.Database;
let q: WriteQueue;
const commits: string[][] = [];
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcm-wq-'));
  db = new Database(join(dir, 'q.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
  commits.length = 0;
  q = await WriteQueue.start(join(dir, 'q.db'), { committed: (kinds) => commits.push([...kinds]), mapError: (e) => e as Error }, { busyTimeoutMs: 1000 });
});
afterEach(async () => {
  await q.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (v: number) => [{ sql: 'INSERT INTO t VALUES (?)', params: [v] }];
const count = () => (db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;

describe('WriteQueue (writer thread)', () => {
  it('commits the writes of one moment together and answers each with its results', async () => {
    const results = await Promise.all([1, 2, 3].map((v) => q.run('w', insert(v))));
    expect(results.map((r) => r[0]!.changes)).toEqual([1, 1, 1]);
    expect(commits).toEqual([['w']]);
    expect(count()).toBe(3);
    const [read] = await q.run('r', [{ sql: 'UPDATE t SET v = v + 10 WHERE v > ? RETURNING v', params: [1] }]);
    expect(read!.rows.map((r) => r.v).sort()).toEqual([12, 13]);
  });

  it('fails a write that fails by itself alone, keeping the rest of its batch', async () => {
    const [ok, dup, ok2] = await Promise.allSettled([q.run('w', insert(1)), q.run('w', insert(1)), q.run('w', insert(2))]);
    expect(ok.status).toBe('fulfilled');
    expect(dup.status === 'rejected' && String(dup.reason.message)).toMatch(/UNIQUE/);
    expect((dup as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(ok2.status).toBe('fulfilled');
    expect(count()).toBe(2);
  });

  it('writes nothing of a batch that fails as a whole (the disk is full)', async () => {
    await q.run('w', insert(0));
    const pages = (await q.pragma('page_count')) as number;
    await q.pragma(`max_page_count = ${pages}`);
    const big = 'x'.repeat(256 * 1024);
    const settled = await Promise.allSettled([1, 2, 3].map((v) => q.run('w', [{ sql: 'INSERT INTO t VALUES (?)', params: [v] }, { sql: 'SELECT ? AS pad', params: [big] }, { sql: "CREATE TABLE IF NOT EXISTS pad (x)" }, { sql: 'INSERT INTO pad VALUES (?)', params: [big] }])));
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    expect((settled[0] as PromiseRejectedResult).reason.code).toBe('SQLITE_FULL');
    expect(count()).toBe(1);
  });

  it('sends what is queued during a batch in flight as the next batch', async () => {
    const first = q.run('a', insert(1));
    await new Promise((r) => setImmediate(r)); // the first batch has left
    const later = [2, 3, 4].map((v) => q.run('b', insert(v)));
    await Promise.all([first, ...later]);
    expect(commits).toEqual([['a'], ['b']]);
  });

  it('refuses every waiting and later write when the thread dies (never a write left hanging)', async () => {
    const worker = (q as unknown as { worker: import('node:worker_threads').Worker }).worker;
    const waiting = q.run('w', insert(1));
    await worker.terminate();
    await expect(waiting).rejects.toThrow(/writer thread exited/);
    await expect(q.run('w', insert(2))).rejects.toThrow(/writer thread exited/);
  });

  it('refuses writes after close, having written what was queued', async () => {
    const queued = q.run('w', insert(7));
    await q.close();
    await queued;
    expect(count()).toBe(1);
    await expect(q.run('w', insert(8))).rejects.toThrow(/closed/);
  });
});
