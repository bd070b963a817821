/**
 * Group commit for SQLite. Writes queued in the same tick are run in ONE transaction, flushed on
 * `setImmediate` (or at once when the batch reaches `maxBatch`); each caller's promise settles
 * only after the COMMIT that holds its rows is on disk.
 *
 * Where the fsync runs depends on the batch. A lone write (one request at a time: a synchronous
 * webhook's save) commits with `synchronous=FULL`: the COMMIT fsyncs the WAL on the event loop,
 * and the caller is answered right after — the shortest path for one caller. A batch of
 * `offLoopMin` writes or more (many requests at once) commits with `synchronous=NORMAL`, which
 * writes the WAL frames without syncing them, and `hooks.sync` (an `fdatasync` of the WAL file on
 * libuv's thread pool) makes them durable; its callers are answered, and `committed` is called,
 * only when that completes. Under load the event loop then serves requests during each fsync
 * (~1 ms per commit here, a tenth of the loop), and one sync covers every commit made before it
 * started, so while one runs the next batches wait for one more, together. Both ways nobody is
 * told "written" before the write is on disk: the promise of FULL.
 *
 * A write that fails by itself (a constraint, bad input) rejects only its caller, and nothing of
 * it is kept; a failure of the transaction as a whole (the COMMIT, or an error after which SQLite
 * rolled the whole transaction back, such as SQLITE_FULL) rejects every caller of the batch, and
 * nothing of the batch is written.
 *
 * For that, each write would need its own SAVEPOINT — two more statements per write, a tenth of
 * the intake's store time. Writes almost never fail by themselves, so a batch first runs without
 * them; only when one write throws is the transaction rolled back and the whole batch run again,
 * each write in its own SAVEPOINT. So a write's `fn` may run twice: it must do nothing but
 * database work (it does: statements of the store).
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

/** runAll's answer when a write failed: run the batch again, each write in a savepoint. */
const RETRY = Symbol('retry');

export interface WriteQueueHooks {
  /** Called after each successful commit with the kinds of writes it held. */
  committed(kinds: ReadonlySet<string>): void;
  /** Maps an error of the whole batch (e.g. disk full) to the error callers see. */
  mapError(err: unknown): Error;
  /**
   * Makes every commit so far durable (an fdatasync of the WAL, off the event loop); calls back
   * when done. Absent: every commit syncs inline (synchronous=FULL).
   */
  sync?(done: (err: Error | null) => void): void;
}

/** A committed batch waiting for the WAL sync that makes it durable. */
interface Unsynced {
  /** The kinds of writes it held (absent for `drained`'s marker, which committed nothing). */
  kinds?: ReadonlySet<string>;
  settle(syncError?: Error): void;
}

export class WriteQueue {
  private pending: Op[] = [];
  private scheduled = false;
  private closed = false;
  /** Batches committed with synchronous=NORMAL, waiting for the next WAL sync. */
  private unsynced: Unsynced[] = [];
  /** The batches the running WAL sync covers (undefined: no sync running). */
  private syncingBatches: Unsynced[] | undefined;
  /** The connection's synchronous setting as this queue last set it ('FULL' as the store opens it). */
  private synchronous: 'FULL' | 'NORMAL' = 'FULL';
  /** The transaction-control statements, prepared once: `exec` would parse them on every write. */
  private readonly sql: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Database.Statement>;

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: WriteQueueHooks,
    private readonly maxBatch = 500,
    /** Batches of at least this many writes sync off the event loop (with `hooks.sync`). */
    private readonly offLoopMin = 4,
  ) {
    this.sql = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT w'),
      release: db.prepare('RELEASE w'),
      rollbackTo: db.prepare('ROLLBACK TO w'),
    };
    // Not prepared: SQLite applies `PRAGMA synchronous` when it compiles the statement, so a
    // prepared copy would switch the connection at construction and not when it is run.
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
    const offLoop = this.hooks.sync !== undefined && !this.closed && ops.length >= this.offLoopMin;
    let batchError: unknown;
    try {
      const mode = offLoop ? 'NORMAL' : 'FULL';
      if (this.synchronous !== mode) {
        db.exec(`PRAGMA synchronous = ${mode}`);
        this.synchronous = mode;
      }
      sql.begin.run();
    } catch (err) {
      batchError = err;
    }
    if (batchError === undefined) {
      const fast = this.runAll(ops);
      batchError = fast === RETRY ? this.runEachInSavepoint(ops) : fast;
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
    const settle = (syncError?: Error) => {
      for (const op of ops) {
        if (op.failed) op.reject(this.hooks.mapError(op.error));
        else if (syncError) op.reject(syncError);
        else op.resolve(op.result);
      }
    };
    if (!offLoop) {
      // A FULL commit synced the WAL: this batch, and any NORMAL one before it, is on disk.
      this.hooks.committed(kinds);
      settle();
      return;
    }
    this.unsynced.push({ kinds, settle });
    this.startSync();
  }

  /** Syncs the WAL for every batch committed so far, unless a sync is running (then after it). */
  private startSync(): void {
    if (this.syncingBatches || this.unsynced.length === 0) return;
    const batches = (this.syncingBatches = this.unsynced);
    this.unsynced = [];
    this.hooks.sync!((err) => {
      this.syncingBatches = undefined;
      if (err) {
        // Committed, but maybe not on disk: nobody may be told it is written.
        const mapped = this.hooks.mapError(err);
        for (const b of batches) b.settle(mapped);
      } else {
        for (const b of batches) {
          if (b.kinds) this.hooks.committed(b.kinds);
          b.settle();
        }
      }
      this.startSync();
    });
  }

  /** Resolves when every commit made so far is on disk and answered (before closing the WAL file). */
  drained(): Promise<void> {
    if (!this.syncingBatches && this.unsynced.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      // Settled with the last batch committed so far: the one that waits for the next sync, or
      // else the one in the running sync.
      (this.unsynced.length > 0 ? this.unsynced : this.syncingBatches!).push({ settle: () => resolve() });
    });
  }

  /**
   * The fast path: every write in the open transaction, no savepoints. RETRY when a write threw:
   * the transaction was rolled back and a new one begun, for the savepoint path (which tells a
   * write failing by itself from a failure of the whole transaction). An error: the new
   * transaction could not be begun.
   */
  private runAll(ops: Op[]): typeof RETRY | unknown {
    for (const op of ops) {
      try {
        op.result = op.fn();
      } catch {
        try {
          this.sql.rollback.run();
        } catch {
          /* SQLite rolled it back already */
        }
        try {
          this.sql.begin.run();
        } catch (err) {
          return err;
        }
        return RETRY;
      }
    }
    return undefined;
  }

  /** Each write in its own SAVEPOINT: a failing one is undone and marked; returns a batch-wide error. */
  private runEachInSavepoint(ops: Op[]): unknown {
    const sql = this.sql;
    for (const op of ops) {
      op.result = undefined;
      try {
        sql.savepoint.run();
      } catch (err) {
        return err;
      }
      try {
        op.result = op.fn();
        sql.release.run();
      } catch (err) {
        if (!this.db.inTransaction) return err; // SQLite rolled back the whole transaction (SQLITE_FULL, IOERR, …)
        op.failed = true;
        op.error = err;
        try {
          sql.rollbackTo.run();
          sql.release.run();
        } catch (err2) {
          return err2;
        }
      }
    }
    return undefined;
  }

  /** Flushes what is queued (with an inline sync) and refuses further writes; see `drained`. */
  close(): void {
    this.closed = true;
    this.flush();
  }
}
