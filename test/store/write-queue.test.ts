/**
 * The SQLite write queue answers a write only after the COMMIT that holds it AND the WAL sync
 * after it (synchronous=NORMAL + our own fdatasync): here the sync is held open by the test to
 * see that nobody is answered early, and that one sync serves every commit made while it ran.
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
  db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const tick = () => new Promise((r) => setTimeout(r, 5));

/** A queue whose syncs wait until the test releases them. */
function queueWithHeldSyncs() {
  const syncs: Array<(err: Error | null) => void> = [];
  const q = new WriteQueue(db, { committed: () => {}, mapError: (e) => e as Error, sync: (done) => syncs.push(done) });
  return { q, syncs };
}

describe('WriteQueue with a WAL sync', () => {
  it('answers a write only when the sync after its commit completes', async () => {
    const { q, syncs } = queueWithHeldSyncs();
    let answered = false;
    const write = q.run('w', () => db.prepare('INSERT INTO t VALUES (1)').run()).then(() => (answered = true));
    await tick();
    expect(db.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 1 }); // committed …
    expect(syncs).toHaveLength(1);
    expect(answered).toBe(false); // … but not acknowledged before the sync
    syncs[0](null);
    await write;
    expect(answered).toBe(true);
  });

  it('shares one sync among the commits made while another sync runs', async () => {
    const { q, syncs } = queueWithHeldSyncs();
    const first = q.run('w', () => db.prepare('INSERT INTO t VALUES (1)').run());
    await tick();
    const later = [2, 3, 4].map((v) => q.run('w', () => db.prepare('INSERT INTO t VALUES (?)').run(v)));
    await tick();
    q.flush();
    const more = q.run('w', () => db.prepare('INSERT INTO t VALUES (5)').run());
    await tick();
    expect(syncs).toHaveLength(1); // the second sync waits for the first
    syncs[0](null);
    await first;
    await tick();
    expect(syncs).toHaveLength(2); // one sync for the two batches committed meanwhile
    syncs[1](null);
    await Promise.all([...later, more]);
  });

  it('rejects the writes of a failed sync, and a write that fails alone without any sync outcome', async () => {
    const { q, syncs } = queueWithHeldSyncs();
    const ok = q.run('w', () => db.prepare('INSERT INTO t VALUES (1)').run());
    const dup = q.run('w', () => db.prepare('INSERT INTO t VALUES (1)').run());
    await tick();
    syncs[0](new Error('EIO: fsync failed'));
    await expect(ok).rejects.toThrow(/EIO/);
    await expect(dup).rejects.toThrow(/UNIQUE/);
  });

  it('drained() waits for the sync of everything committed', async () => {
    const { q, syncs } = queueWithHeldSyncs();
    void q.run('w', () => db.prepare('INSERT INTO t VALUES (1)').run());
    q.flush();
    let drained = false;
    const d = q.drained().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    syncs[0](null);
    await tick();
    if (syncs[1]) syncs[1](null);
    await d;
    expect(drained).toBe(true);
  });
});
