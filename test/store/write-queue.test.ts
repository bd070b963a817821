/**
 * The SQLite write queue answers a write only once its commit is on disk: a lone write commits
 * with synchronous=FULL (the COMMIT itself fsyncs, no sync hook), a batch of concurrent writes
 * with NORMAL followed by the WAL sync hook — held open here by the test, to see that nobody is
 * answered early and that one sync serves every commit made while it ran.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteQueue } from '../../src/store/sqlite/write-queue.js';

let dir: string;
let db: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hcm-wq-'));
  db = new Database(join(dir, 'q.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const tick = () => new Promise((r) => setTimeout(r, 5));
const count = () => (db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
const synchronous = () => db.pragma('synchronous', { simple: true });

/** A queue whose syncs wait until the test releases them; batches of 2 or more sync off the loop. */
function queueWithHeldSyncs() {
  const syncs: Array<(err: Error | null) => void> = [];
  const committed: string[][] = [];
  const q = new WriteQueue(db, { committed: (k) => committed.push([...k]), mapError: (e) => e as Error, sync: (done) => syncs.push(done) }, 500, 2);
  const insert = (v: number) => q.run('w', () => db.prepare('INSERT INTO t VALUES (?)').run(v));
  return { q, syncs, committed, insert };
}

describe('WriteQueue: where the fsync runs', () => {
  it('commits a lone write with synchronous=FULL and answers it without a sync of its own', async () => {
    const { syncs, committed, insert } = queueWithHeldSyncs();
    await insert(1);
    expect(syncs).toHaveLength(0);
    expect(synchronous()).toBe(2); // FULL: the COMMIT synced the WAL
    expect(committed).toEqual([['w']]);
  });

  it('answers a batch only when the WAL sync after its NORMAL commit completes', async () => {
    const { syncs, committed, insert } = queueWithHeldSyncs();
    let answered = 0;
    const writes = [1, 2, 3].map((v) => insert(v).then(() => answered++));
    await tick();
    expect(count()).toBe(3); // committed …
    expect(synchronous()).toBe(1); // … with NORMAL: not synced by the COMMIT
    expect(syncs).toHaveLength(1);
    expect(answered).toBe(0); // … and not acknowledged before the sync
    expect(committed).toEqual([]);
    syncs[0]!(null);
    await Promise.all(writes);
    expect(answered).toBe(3);
    expect(committed).toEqual([['w']]);
  });

  it('shares one sync among the batches committed while another sync runs; a lone FULL commit meanwhile is answered at once', async () => {
    const { q, syncs, insert } = queueWithHeldSyncs();
    const first = [1, 2].map(insert);
    await tick();
    const second = [3, 4].map(insert);
    await tick();
    const third = [5, 6].map(insert);
    q.flush();
    await tick();
    expect(syncs).toHaveLength(1); // the next sync waits for the first
    await insert(7); // lone: FULL, answered without waiting for any sync
    expect(synchronous()).toBe(2);
    syncs[0]!(null);
    await Promise.all(first);
    await tick();
    expect(syncs).toHaveLength(2); // one sync for the two batches committed meanwhile
    syncs[1]!(null);
    await Promise.all([...second, ...third]);
  });

  it('rejects the writes of a failed sync, and a write that fails alone with its own error', async () => {
    const { syncs, insert } = queueWithHeldSyncs();
    const ok = insert(1);
    const dup = insert(1);
    await tick();
    syncs[0]!(new Error('EIO: fsync failed'));
    await expect(ok).rejects.toThrow(/EIO/);
    await expect(dup).rejects.toThrow(/UNIQUE/);
  });

  it('drained() waits for the sync of everything committed; close() commits what is queued with FULL', async () => {
    const { q, syncs, insert } = queueWithHeldSyncs();
    const batch = [1, 2].map(insert);
    q.flush();
    let drained = false;
    const d = q.drained().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    const last = [3, 4].map(insert);
    q.close(); // a batch, but committed inline: nothing may wait on a sync after close
    expect(synchronous()).toBe(2);
    await Promise.all(last);
    syncs[0]!(null);
    await Promise.all(batch);
    await d;
    expect(drained).toBe(true);
    await expect(insert(5)).rejects.toThrow(/closed/);
  });

  it('without a sync hook every batch commits with FULL', async () => {
    const q = new WriteQueue(db, { committed: () => {}, mapError: (e) => e as Error }, 500, 2);
    await Promise.all([1, 2, 3].map((v) => q.run('w', () => db.prepare('INSERT INTO t VALUES (?)').run(v))));
    expect(synchronous()).toBe(2);
    expect(count()).toBe(3);
  });
});
