/**
 * The embedded store: one SQLite file `<dataDir>/hcm-runner.db` (better-sqlite3), owned by a
 * single process. Its behaviour and statements are the shared SQL store's (../sql/); this file is
 * the SQLite dialect: the file, its pragmas, group commit, in-process locks.
 *
 * Durability: WAL, and no write is answered before its commit is fsynced. In WAL mode, NORMAL
 * alone only fsyncs at checkpoints, so a power loss could drop the last commits — which would
 * break "an accepted webhook is never lost". Group commit (see write-queue.ts) amortises the fsync
 * over every write queued in the same tick: a lone write commits with FULL (the COMMIT fsyncs),
 * a batch of concurrent writes with NORMAL followed by our own `fdatasync` of the WAL file on
 * libuv's thread pool, so under load the event loop keeps serving during the fsync.
 *
 * All writes go through the write queue (one transaction per tick, in call order); reads run
 * directly against the committed state.
 */
import Database from 'better-sqlite3';
import { accessSync, chmodSync, closeSync, constants, fdatasync, mkdirSync, openSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CallbackRequest } from '../../engine/durable.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { queuedRecord } from '../execution-states.js';
import { columnsOf, parseJsonText, stateColumnsOf } from '../execution-rows.js';
import { KeyedMutex } from '../keyed-mutex.js';
import { InProcessQueue, type ExecutionQueue } from '../queue.js';
import type { SqlDialect, Step, StepResult } from '../sql/dialect.js';
import * as shared from '../sql/plans.js';
import * as plan from '../sql/sqlite-plans.js';
import { SqlStore } from '../sql/sql-store.js';
import { loadTokenKey, TokenCipher } from '../token-crypto.js';
import type { CallbackReceipt, IdempotencyClaim, NewExecution, SaveOptions } from '../types.js';
import { openError, readError, writeError } from './errors.js';
import { migrate } from './migrations.js';
import { WriteQueue } from './write-queue.js';

export const SQLITE_FILE = 'hcm-runner.db';

export interface SqliteStoreOptions {
  /** Token encryption key (32 bytes); default: from HCM_RUNNER_SECRET or `<dataDir>/secret.key`. */
  tokenKey?: Buffer;
  /** busy_timeout in ms (default 5000). */
  busyTimeoutMs?: number;
  /** Writes per group commit before flushing without waiting for the tick (default 500). */
  maxBatch?: number;
}

/** better-sqlite3 binds no booleans. */
const param = (v: unknown): unknown => (v === true ? 1 : v === false ? 0 : v);

class SqliteDialect implements SqlDialect {
  readonly kind = 'sqlite' as const;
  /** Prepared statements by SQL text (preparing costs more than running). */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly dataDir: string,
    readonly queue: WriteQueue,
  ) {}

  prepare(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      // Statements built per call (lists, seen keys) are not worth keeping.
      if (this.statements.size < 200) this.statements.set(sql, stmt);
    }
    return stmt;
  }

  read<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    try {
      return Promise.resolve(this.prepare(sql).all(...params.map(param)) as R[]);
    } catch (err) {
      return Promise.reject(readError(this.dataDir, err));
    }
  }

  /** Runs steps inside the current transaction (synchronously: group commit needs that). */
  runSync(steps: Step[]): StepResult[] {
    const out: StepResult[] = [];
    for (const step of steps) {
      if ('lock' in step) continue; // one process owns the file, and writes run one at a time
      const stmt = this.prepare(step.sql);
      const params = (step.params ?? []).map(param);
      if (stmt.reader) {
        const rows = stmt.all(...params) as Array<Record<string, unknown>>;
        out.push({ rows, changes: rows.length });
      } else out.push({ rows: [], changes: stmt.run(...params).changes });
    }
    return out;
  }

  write(kind: string, steps: Step[]): Promise<StepResult[]> {
    return this.queue.run(kind, () => this.runSync(steps));
  }

  json(value: unknown): unknown {
    return parseJsonText(value);
  }
}

export class SqliteStore extends SqlStore {
  readonly kind = 'sqlite' as const;
  readonly file: string;
  private readonly sqlite: SqliteDialect;
  /** One process owns the file, so a lock within the process is cluster-wide. */
  private readonly locks = new KeyedMutex();

  private constructor(
    readonly dataDir: string,
    /** The connection; exposed for tests and diagnostics only. */
    readonly db: Database.Database,
    /** The WAL file, open for the `fdatasync` after a batch's NORMAL commit. */
    private readonly walFd: number,
    tokenKey: Buffer | undefined,
    opts: SqliteStoreOptions,
  ) {
    let cipher: Promise<TokenCipher> | undefined;
    const tokenMutex = new KeyedMutex();
    const queue = new WriteQueue(
      db,
      {
        committed: (kinds) => {
          this.stats.commits++;
          if (kinds.has('enqueue')) this.stats.enqueueCommits++;
        },
        mapError: (err) => writeError(dataDir, err),
        sync: (done) => {
          this.stats.walSyncs++;
          fdatasync(walFd, done);
        },
      },
      opts.maxBatch,
    );
    const dialect = new SqliteDialect(db, dataDir, queue);
    super(
      dialect,
      () => (cipher ??= (tokenKey ? Promise.resolve(tokenKey) : loadTokenKey(dataDir)).then((k) => new TokenCipher(k))),
      (key, fn) => tokenMutex.run(key, fn),
    );
    this.sqlite = dialect;
    this.file = join(dataDir, SQLITE_FILE);
  }

  /** Opens (creating if needed) the store in `dataDir`, applying pending migrations. */
  static async open(dataDir: string, opts: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const dir = resolve(dataDir);
    let db: Database.Database | undefined;
    let walFd: number | undefined;
    try {
      // The database holds webhook tokens, OAuth tokens and every payload: a directory created here
      // is the owner's alone (one the operator made keeps its mode), the files always are.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
      const file = join(dir, SQLITE_FILE);
      // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database's mode.
      closeSync(openSync(file, 'a', 0o600));
      ownerOnly(file);
      db = new Database(file);
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal') throw Object.assign(new Error(`journal_mode is ${mode}, not wal`), { code: 'SQLITE_READONLY' });
      db.pragma('synchronous = FULL');
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
      db.pragma('foreign_keys = ON');
      migrate(db);
      // The WAL file exists while a connection is open (SQLite deletes it when the last closes).
      walFd = openSync(`${file}-wal`, 'r+');
      // Left by an older version (or another tool) with wider modes: tightened too.
      ownerOnly(`${file}-wal`);
      ownerOnly(`${file}-shm`);
    } catch (err) {
      if (walFd !== undefined) closeSync(walFd);
      try {
        db?.close();
      } catch {
        /* ignore */
      }
      throw openError(dir, err);
    }
    return new SqliteStore(dir, db, walFd, opts.tokenKey, opts);
  }

  /** One process owns the file: the queue is an in-memory work list over these rows. */
  openQueue(): ExecutionQueue {
    return new InProcessQueue(this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.sqlite.queue.close();
    this.closed = true;
    await this.sqlite.queue.drained();
    this.db.close();
    closeSync(this.walFd);
  }

  private run<T>(kind: string, fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.sqlite.queue.run(kind, fn);
  }

  // Group-committed hot paths ----------------------------------------------------------------------

  private insertExecutions(executions: NewExecution[]): void {
    const now = new Date().toISOString();
    const stmt = this.sqlite.prepare(plan.insertQueued);
    for (const e of executions) {
      const c = columnsOf(queuedRecord(e, now), now);
      stmt.run({
        id: c.id,
        integration: c.integration,
        test: c.test ? 1 : 0,
        attempt: c.attempt,
        trigger: c.trigger,
        record: c.record,
        queuedAt: c.queuedAt,
        correlationKey: c.correlationKey,
        versionSha256: c.versionSha256,
        versionCommit: c.versionCommit,
        retryOf: c.retryOf,
        concurrencyKey: c.concurrencyKey,
      });
    }
  }

  enqueue(executions: NewExecution[]): Promise<void> {
    if (executions.length === 0) return Promise.resolve();
    this.stats.enqueueCalls++;
    return this.run('enqueue', () => this.insertExecutions(executions));
  }

  /** The key's claim and the execution's row in one transaction (no row when the key is held). */
  enqueueOnce(execution: NewExecution, claim: IdempotencyClaim): Promise<{ executionId: string; duplicate: boolean }> {
    const steps = this.claimSteps(execution, claim);
    this.stats.enqueueCalls++;
    return this.run('enqueue', () => {
      const outcome = this.claimOutcome(execution, this.sqlite.runSync(steps));
      if (!outcome.duplicate) this.insertExecutions([execution]);
      return outcome;
    });
  }

  saveExecution(record: ExecutionRecord, opts: SaveOptions = {}): Promise<void> {
    return this.run('saveExecution', () => {
      if (opts.stored) {
        // The row exists: what a run changes, without the trigger (and queued_at) again.
        const changed = this.sqlite.prepare(plan.updateState).run(stateColumnsOf(record)).changes;
        if (changed) return;
      }
      const c = columnsOf(record, new Date().toISOString());
      this.sqlite.prepare(plan.upsertExecution).run({
        ...c,
        test: c.test ? 1 : 0,
        cancelRequested: c.cancelRequested ? 1 : 0,
        queuedAtGiven: record.queuedAt ? 1 : 0,
      });
    });
  }

  /** Seen keys and new executions in one transaction. */
  commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void> {
    const seen = this.seenSteps(integration, keys, maxSeen);
    return this.run(executions.length ? 'enqueue' : 'poll', () => {
      this.sqlite.runSync(seen);
      if (executions.length) this.insertExecutions(executions);
    });
  }

  lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.locks.run(key, fn, signal);
  }

  // Durable execution -------------------------------------------------------------------------------

  /** One process writes the file, one write at a time: what this transaction picks, nobody else does. */
  wakeDue(now: Date, limit: number): Promise<ExecutionRecord[]> {
    const at = now.toISOString();
    const n = Math.max(0, Math.floor(limit));
    return this.run('wake', () => {
      const due = this.sqlite.prepare(shared.dueWaiting()).all(at, at, at, n, n) as Array<{ id: string }>;
      const woke: ExecutionRecord[] = [];
      for (const { id } of due) {
        const row = this.sqlite.prepare(shared.wakeOne).get(id) as Record<string, unknown> | undefined;
        if (!row) continue;
        this.sqlite.prepare(shared.consumeCallbacks).run(at, id);
        woke.push(this.record(row));
      }
      return woke;
    });
  }

  /** The request and the wake-up in one transaction (the write queue's). */
  receiveCallback(token: string, request: CallbackRequest, now: Date): Promise<CallbackReceipt> {
    const at = now.toISOString();
    const body = JSON.stringify(request);
    return this.run('callback', () => {
      const got = this.sqlite.prepare(shared.recordCallbackRequest).get(body, at, token, at) as { execution_id: string } | undefined;
      if (got) this.sqlite.prepare(shared.makeDue).run(at, got.execution_id);
      const existing = got ? undefined : (this.sqlite.prepare(shared.getCallback).get(token) as Record<string, unknown> | undefined);
      return this.callbackReceipt(got?.execution_id, existing, at);
    });
  }
}

/**
 * Takes group and other permissions off a file, when it has any. Best effort: a file that is
 * missing or not ours to change is left as it is (SQLite reports what it cannot use).
 */
function ownerOnly(file: string): void {
  try {
    if (statSync(file).mode & 0o077) chmodSync(file, 0o600);
  } catch {
    /* missing or not ours */
  }
}
