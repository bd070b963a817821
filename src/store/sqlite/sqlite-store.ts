/**
 * The embedded store: one SQLite file `<dataDir>/hcm-runner.db` (better-sqlite3), owned by a
 * single process. Its behaviour and statements are the shared SQL store's (../sql/); this file is
 * the SQLite dialect: the file, its pragmas, group commit, in-process locks.
 *
 * Two connections: the event loop's reads committed state; every write goes to a writer thread
 * with its own connection (write-queue.ts, writer-thread.cjs), group-committed. better-sqlite3 is
 * synchronous, so statements, COMMITs and checkpoints run there instead of stopping the server.
 *
 * Durability: WAL with `synchronous=FULL` on the writer's connection. In WAL mode, NORMAL only
 * fsyncs at checkpoints, so a power loss could drop the last commits — which would break "an
 * accepted webhook is never lost". FULL fsyncs the WAL on every commit; group commit amortises
 * that fsync over every write queued meanwhile, and a write is answered only after its COMMIT.
 */
import Database from 'better-sqlite3';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ExecutionRecord } from '../../engine/record.js';
import { columnsOf, KeyedMutex, parseJsonText, queuedRecord, stateColumnsOf } from '../common.js';
import { InProcessQueue, type ExecutionQueue } from '../queue.js';
import type { SqlDialect, Step, StepResult } from '../sql/dialect.js';
import { SqlStore } from '../sql/sql-store.js';
import { loadTokenKey, TokenCipher } from '../token-crypto.js';
import type { NewExecution, SaveOptions } from '../types.js';
import { openError, readError, writeError } from './errors.js';
import { migrate } from './migrations.js';
import { WriteQueue, type WriteStep } from './write-queue.js';

export const SQLITE_FILE = 'hcm-runner.db';

export interface SqliteStoreOptions {
  /** Token encryption key (32 bytes); default: from HCM_RUNNER_SECRET or `<dataDir>/secret.key`. */
  tokenKey?: Buffer;
  /** busy_timeout in ms (default 5000). */
  busyTimeoutMs?: number;
  /** Writes per group commit at most (default 500). */
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

  /** Lock steps are dropped (one process owns the file, and writes run one at a time). */
  write(kind: string, steps: Step[]): Promise<StepResult[]> {
    return this.queue.run(kind, writeSteps(steps));
  }

  json(value: unknown): unknown {
    return parseJsonText(value);
  }
}

/** The steps as the writer thread takes them: no lock steps, booleans as numbers. */
function writeSteps(steps: Step[]): WriteStep[] {
  const out: WriteStep[] = [];
  for (const step of steps) if (!('lock' in step)) out.push({ sql: step.sql, params: (step.params ?? []).map(param) });
  return out;
}

export class SqliteStore extends SqlStore {
  readonly kind = 'sqlite' as const;
  readonly file: string;
  private readonly sqlite: SqliteDialect;
  /** One process owns the file, so a lock within the process is cluster-wide. */
  private readonly locks = new KeyedMutex();

  private constructor(
    readonly dataDir: string,
    /** The event loop's connection (reads); exposed for tests and diagnostics only. */
    readonly db: Database.Database,
    queue: WriteQueue,
    tokenKey: Buffer | undefined,
  ) {
    let cipher: Promise<TokenCipher> | undefined;
    const tokenMutex = new KeyedMutex();
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
    const busyTimeoutMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000));
    let db: Database.Database | undefined;
    let queue: WriteQueue | undefined;
    let store: SqliteStore | undefined;
    try {
      mkdirSync(dir, { recursive: true });
      if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
      db = new Database(join(dir, SQLITE_FILE));
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal') throw Object.assign(new Error(`journal_mode is ${mode}, not wal`), { code: 'SQLITE_READONLY' });
      db.pragma('synchronous = FULL');
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      db.pragma('foreign_keys = ON');
      migrate(db);
      queue = await WriteQueue.start(
        join(dir, SQLITE_FILE),
        {
          committed: (kinds) => {
            if (!store) return;
            store.stats.commits++;
            if (kinds.has('enqueue')) store.stats.enqueueCommits++;
          },
          mapError: (err) => writeError(dir, err),
        },
        { busyTimeoutMs, maxBatch: opts.maxBatch },
      );
    } catch (err) {
      try {
        db?.close();
      } catch {
        /* ignore */
      }
      throw openError(dir, err);
    }
    return (store = new SqliteStore(dir, db, queue, opts.tokenKey));
  }

  /** Runs a pragma on the writer thread's connection (tests: e.g. `max_page_count` for a full disk). */
  writerPragma(pragma: string): Promise<unknown> {
    return this.sqlite.queue.pragma(pragma);
  }

  /** One process owns the file: the queue is an in-memory work list over these rows. */
  openQueue(): ExecutionQueue {
    return new InProcessQueue(this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sqlite.queue.close(); // writes what was queued, then the thread's connection closes
    this.db.close(); // the last connection: checkpoints and removes the WAL
  }

  private run(kind: string, steps: WriteStep[]): Promise<StepResult[]> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.sqlite.queue.run(kind, steps);
  }

  // Group-committed hot paths ----------------------------------------------------------------------

  private insertSteps(executions: NewExecution[]): WriteStep[] {
    const now = new Date().toISOString();
    return executions.map((e) => {
      const c = columnsOf(queuedRecord(e, now), now);
      return {
        sql: `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at)
       VALUES (@id, @integration, 'queued', @test, @attempt, @trigger, @record, @queuedAt)`,
        params: [{ id: c.id, integration: c.integration, test: c.test ? 1 : 0, attempt: c.attempt, trigger: c.trigger, record: c.record, queuedAt: c.queuedAt }],
      };
    });
  }

  async enqueue(executions: NewExecution[]): Promise<void> {
    if (executions.length === 0) return;
    this.stats.enqueueCalls++;
    await this.run('enqueue', this.insertSteps(executions));
  }

  async saveExecution(record: ExecutionRecord, opts: SaveOptions = {}): Promise<void> {
    if (opts.stored) {
      // The row exists: what a run changes, without the trigger (and queued_at) again.
      const [updated] = await this.run('saveExecution', [
        {
          sql: `UPDATE executions SET status = @status, attempt = @attempt, record = @record, started_at = @startedAt,
               finished_at = @finishedAt, duration_ms = @durationMs, error = @error WHERE id = @id`,
          params: [stateColumnsOf(record)],
        },
      ]);
      if (updated!.changes) return;
    }
    const c = columnsOf(record, new Date().toISOString());
    await this.run('saveExecution', [
      {
        sql: `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at, started_at, finished_at, duration_ms, error)
           VALUES (@id, @integration, @status, @test, @attempt, @trigger, @record, @queuedAt, @startedAt, @finishedAt, @durationMs, @error)
           ON CONFLICT (id) DO UPDATE SET integration = excluded.integration, status = excluded.status, test = excluded.test,
             attempt = excluded.attempt, record = excluded.record,
             queued_at = CASE WHEN @queuedAtGiven THEN excluded.queued_at ELSE executions.queued_at END,
             started_at = excluded.started_at, finished_at = excluded.finished_at,
             duration_ms = excluded.duration_ms, error = excluded.error`,
        params: [{ ...c, test: c.test ? 1 : 0, queuedAtGiven: record.queuedAt ? 1 : 0 }],
      },
    ]);
  }

  /** Seen keys and new executions in one transaction. */
  async commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void> {
    const seen = writeSteps(this.seenSteps(integration, keys, maxSeen));
    await this.run(executions.length ? 'enqueue' : 'poll', executions.length ? [...seen, ...this.insertSteps(executions)] : seen);
  }

  lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.locks.run(key, fn, signal);
  }
}
