/**
 * Group commit for SQLite. Writes queued in the same tick are run in ONE transaction, flushed on
 * `setImmediate` (or at once when the batch reaches `maxBatch`); each caller's promise settles
 * only after the COMMIT that holds its rows AND the fsync of the WAL that makes it durable.
 *
 * The fsync runs off the event loop: the database uses `synchronous=NORMAL` (the COMMIT writes the
 * WAL frames without syncing them) and `hooks.sync` (an `fdatasync` of the WAL file on libuv's
 * thread pool) is called after each COMMIT; callers are answered when it completes. That is the
 * guarantee of `synchronous=FULL` — nobody is told "written" before the write is on disk — without
 * stopping every request of the process for the length of each fsync. One sync covers every commit
 * made before it started, so while one is in flight the next commits wait for one more, together.
 *
 * Each write runs inside its own SAVEPOINT, so a write that fails by itself (a constraint, bad
 * input) rejects only its caller; a failure of the transaction as a whole (the COMMIT, or an error
 * after which SQLite rolled the whole transaction back, such as SQLITE_FULL) rejects every caller
 * of the batch, and nothing of the batch is written.
 */
import type Database from 'better-sqlite3';

interface Op {
  fn: () => unknown;
  kind: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  result?: unknown;
  error?: unknown;
  failed?: boolean;
}

export interface WriteQueueHooks {
  /** Called after each successful commit with the kinds of writes it held. */
  committed(kinds: ReadonlySet<string>): void;
  /** Maps an error of the whole batch (e.g. disk full) to the error callers see. */
  mapError(err: unknown): Error;
  /**
   * Makes every commit so far durable (fdatasync of the WAL); calls back when done. Absent: the
   * COMMIT itself is durable (synchronous=FULL) and callers are answered at once.
   */
  sync?(done: (err: Error | null) => void): void;
}


export class WriteQueue {
  private pending: Op[] = [];
  private scheduled = false;
  private closed = false;
  /** Answers of committed batches waiting for the next WAL sync. */
  private unsynced: Array<{ settle: () => void; fail: (err: Error) => void }> = [];
  private syncing = false;
  /** The transaction-control statements, prepared once: `exec` would parse them on every write. */
  private readonly sql: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Database.Statement>;

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: WriteQueueHooks,
    private readonly maxBatch = 500,
  ) {
    this.sql = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT w'),
      release: db.prepare('RELEASE w'),
      rollbackTo: db.prepare('ROLLBACK TO w'),
    };
  }

  run<T>(kind: string, fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, kind, resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Writes everything queued now (synchronously). */
  flush(): void {
    this.scheduled = false;
    const ops = this.pending;
    this.pending = [];
    if (ops.length === 0) return;
    const db = this.db;
    const sql = this.sql;
    let batchError: unknown;
    try {
      sql.begin.run();
    } catch (err) {
      batchError = err;
    }
    if (batchError === undefined) {
      for (const op of ops) {
        sql.savepoint.run();
        try {
          op.result = op.fn();
          sql.release.run();
        } catch (err) {
          if (!db.inTransaction) {
            // SQLite rolled back the whole transaction (SQLITE_FULL, IOERR, …): nothing is kept.
            batchError = err;
            break;
          }
          op.failed = true;
          op.error = err;
          try {
            sql.rollbackTo.run();
            sql.release.run();
          } catch (err2) {
            batchError = err2;
            break;
          }
        }
      }
      if (batchError === undefined) {
        try {
          sql.commit.run();
        } catch (err) {
          batchError = err;
        }
      }
      if (batchError !== undefined && db.inTransaction) {
        try {
          sql.rollback.run();
        } catch {
          /* already rolled back */
        }
      }
    }
    if (batchError !== undefined) {
      const err = this.hooks.mapError(batchError);
      for (const op of ops) op.reject(err);
      return;
    }
    const kinds = new Set<string>();
    for (const op of ops) if (!op.failed) kinds.add(op.kind);
    this.hooks.committed(kinds);
    const settle = (syncError?: Error) => {
      for (const op of ops) {
        if (op.failed) op.reject(this.hooks.mapError(op.error));
        else if (syncError) op.reject(syncError);
        else op.resolve(op.result);
      }
    };
    if (!this.hooks.sync) return settle();
    this.unsynced.push({ settle: () => settle(), fail: settle });
    this.startSync();
  }

  /** Syncs the WAL for every batch committed so far unless a sync is already running. */
  private startSync(): void {
    if (this.syncing || this.unsynced.length === 0) return;
    this.syncing = true;
    const batches = this.unsynced;
    this.unsynced = [];
    this.hooks.sync!((err) => {
      this.syncing = false;
      if (err) {
        // Committed but maybe not on disk: nobody may be told it is written.
        const mapped = this.hooks.mapError(err);
        for (const b of batches) b.fail(mapped);
      } else for (const b of batches) b.settle();
      this.startSync();
    });
  }

  /** Resolves when every commit made so far is synced (for close). */
  drained(): Promise<void> {
    if (!this.syncing && this.unsynced.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = resolve;
      this.unsynced.push({ settle, fail: () => resolve() });
      this.startSync();
    });
  }

  /** Flushes what is queued and refuses further writes. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}
