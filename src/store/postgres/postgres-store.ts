/**
 * The shared store for several replicas: PostgreSQL through a `pg` Pool, every table in one
 * schema (option `schema`, default `public`; set as each connection's search path, so the shared
 * statements name tables unqualified). Its behaviour and statements are the shared SQL store's
 * (../sql/); this file is the PostgreSQL dialect: `$n` placeholders, transactions with advisory
 * locks for plans that must not interleave, group commit of the hot paths, lease locks.
 *
 * The `executions` table is also the cluster's queue (table-queue.ts): a running row carries who
 * holds it (`claimed_by`) and until when (`lease_until`).
 *
 * enqueue() calls of the same tick are gathered into one multi-row INSERT (group commit), and so
 * are saves (group-saves.ts); when a batch fails, each call is retried alone so only the bad one
 * is rejected.
 */
import pg from 'pg';
import type { PoolClient, PoolConfig } from 'pg';
import type { CallbackRequest } from '../../engine/durable.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { queuedRecord, runningRecord } from '../execution-states.js';
import { columnsOf } from '../execution-rows.js';
import { KeyedMutex } from '../keyed-mutex.js';
import type { ExecutionQueue, QueueOptions } from '../queue.js';
import { dollarPlaceholders, type SqlDialect, type Step, type StepResult } from '../sql/dialect.js';
import * as shared from '../sql/plans.js';
import { advisoryXactLock, executionPlans, setSearchPath, wakePlans } from '../sql/postgres-plans.js';
import { SqlStore } from '../sql/sql-store.js';
import { deriveKey, SECRET_ENV, TokenCipher } from '../token-crypto.js';
import type { CallbackReceipt, IdempotencyClaim, NewExecution, SaveOptions } from '../types.js';
import { storageError } from './errors.js';
import { GroupSaves, rowsJson } from './group-saves.js';
import { LeaseLocks } from './lease-locks.js';
import { migrate, quoteIdent } from './migrations.js';
import { prepared } from './prepared.js';
import { channelFor, DEFAULT_LEASE_SEC, defaultReplicaId, TableQueue } from './table-queue.js';

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// URL. */
  databaseUrl: string;
  /** Schema holding the tables (created if missing); default `public`. */
  schema?: string;
  /** Token encryption key (32 bytes); default derived from `secret`, then HCM_RUNNER_SECRET. */
  tokenKey?: Buffer;
  secret?: string;
  /** Extra pool settings (max, timeouts …). */
  pool?: Omit<PoolConfig, 'connectionString'>;
}

type Queryable = Pick<PoolClient, 'query'>;

/** The shared statements with PostgreSQL's placeholders, by their text. */
const numbered = new Map<string, string>();
function placeholders(sql: string): string {
  let out = numbered.get(sql);
  if (out === undefined) {
    out = dollarPlaceholders(sql);
    if (numbered.size < 500) numbered.set(sql, out);
  }
  return out;
}

class PostgresDialect implements SqlDialect {
  readonly kind = 'postgres' as const;
  closed = false;

  constructor(
    readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly committed: () => void,
  ) {}

  async read<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    const { rows } = await this.pool.query(placeholders(sql), params).catch((err: unknown) => Promise.reject(storageError(err)));
    return rows as R[];
  }

  /** A transaction-scoped advisory lock per key in this schema: plans holding the same key run one at a time. */
  private lock(c: Queryable, key: string): Promise<unknown> {
    const [purpose, ...rest] = key.split(':');
    return c.query(advisoryXactLock, [`hcm-runner:${purpose}:${this.schema}:${rest.join(':')}`]);
  }

  async runSteps(c: Queryable, steps: Step[]): Promise<StepResult[]> {
    const out: StepResult[] = [];
    for (const step of steps) {
      if ('lock' in step) {
        await this.lock(c, step.lock);
        continue;
      }
      const r = await c.query(placeholders(step.sql), step.params ?? []);
      out.push({ rows: r.rows, changes: r.rowCount ?? 0 });
    }
    return out;
  }

  async write(_kind: string, steps: Step[]): Promise<StepResult[]> {
    // One statement is its own transaction: no BEGIN/COMMIT round trips.
    if (steps.length === 1 && !('lock' in steps[0]!)) {
      const out = await this.runSteps(this.pool, steps).catch((err: unknown) => Promise.reject(storageError(err)));
      this.committed();
      return out;
    }
    return this.tx((c) => this.runSteps(c, steps));
  }

  /** Runs `fn` in a transaction on a dedicated client. */
  async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the store is closed');
    const c = await this.pool.connect().catch((err: unknown) => Promise.reject(storageError(err)));
    try {
      await c.query('BEGIN');
      const result = await fn(c);
      await c.query('COMMIT');
      this.committed();
      return result;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw storageError(err);
    } finally {
      c.release();
    }
  }

  json(value: unknown): unknown {
    return value;
  }
}

interface PendingEnqueue {
  executions: NewExecution[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class PostgresStore extends SqlStore {
  readonly kind = 'postgres' as const;
  readonly schema: string;
  /** The pool; exposed for tests and diagnostics. */
  readonly pool: pg.Pool;
  private readonly pgd: PostgresDialect;
  private readonly s: string;
  private pending: PendingEnqueue[] = [];
  private scheduled = false;
  private inflight = new Set<Promise<void>>();
  /** NOTIFY channel of new work (table-queue.ts). */
  private readonly channel: string;
  /** Who holds the executions this process runs, and for how long (set by openQueue). */
  private owner = defaultReplicaId();
  private leaseSec = DEFAULT_LEASE_SEC;
  private readonly saves: GroupSaves;
  /** This store's own statements (built once for its schema's table). */
  private readonly sql: ReturnType<typeof executionPlans>;
  private readonly wakeSql: ReturnType<typeof wakePlans>;
  private leaseLocks?: LeaseLocks;

  private constructor(pool: pg.Pool, schema: string, tokenKey: () => Buffer) {
    let cipher: TokenCipher | undefined;
    const tokenMutex = new KeyedMutex();
    const dialect = new PostgresDialect(pool, schema, () => this.stats.commits++);
    super(
      dialect,
      async () => (cipher ??= new TokenCipher(tokenKey())),
      // One refresh per key in flight across all replicas: an advisory lock held in a transaction on
      // a dedicated client while `fn` runs. The in-process mutex in front keeps a process from tying
      // up several pool clients on one key.
      (key, fn) =>
        tokenMutex.run(key, () =>
          dialect.tx(async (c) => {
            await c.query(advisoryXactLock, [`hcm-runner:token:${schema}:${key}`]);
            return fn();
          }),
        ),
    );
    this.pgd = dialect;
    this.pool = pool;
    this.schema = schema;
    this.s = quoteIdent(schema);
    this.channel = channelFor(schema);
    this.sql = executionPlans(`${this.s}.executions`);
    this.wakeSql = wakePlans(this.s);
    this.saves = new GroupSaves({
      pool,
      table: `${this.s}.executions`,
      lease: () => ({ owner: this.owner, seconds: this.leaseSec }),
      mapError: storageError,
      committed: () => this.stats.commits++,
    });
  }

  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = opts.schema ?? 'public';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
    // The shared statements name tables unqualified: every connection looks in this schema first.
    // pg-pool awaits onConnect before it hands a new connection out, and a failure fails that
    // connect (a query issued from the 'connect' event would race the caller's first query).
    const onConnect = async (client: pg.ClientBase): Promise<void> => {
      await client.query(setSearchPath(quoteIdent(schema)));
    };
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, ...opts.pool, onConnect });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    try {
      await migrate(pool, schema);
    } catch (err) {
      await pool.end().catch(() => undefined);
      const e = new Error(`cannot open the PostgreSQL store at ${redact(opts.databaseUrl)} (schema ${schema}): ${(err as Error).message}`);
      (e as Error & { cause?: unknown }).cause = err;
      throw e;
    }
    let key: Buffer | undefined = opts.tokenKey;
    const keyFn = () => {
      if (key) return key;
      const secret = opts.secret;
      if (!secret)
        throw new Error(`${SECRET_ENV} is not set: replicas sharing a PostgreSQL database need the same ${SECRET_ENV} to encrypt stored tokens`);
      key = deriveKey(secret);
      return key;
    };
    return new PostgresStore(pool, schema, keyFn);
  }

  /** Runs `fn` in a transaction on a dedicated client. */
  tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.pgd.tx(fn);
  }

  /** The `executions` table as a queue shared by every replica (table-queue.ts). */
  openQueue(opts: QueueOptions = {}): ExecutionQueue {
    this.owner = opts.replicaId ? `${opts.replicaId}:${process.pid}` : this.owner;
    this.leaseSec = opts.leaseSec ?? this.leaseSec;
    return new TableQueue(this, { ...opts, owner: this.owner, leaseSec: this.leaseSec });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flushEnqueue();
    await Promise.allSettled([...this.inflight]);
    await this.saves.drain();
    this.closed = true;
    this.pgd.closed = true;
    await this.pool.end();
  }

  // Group-committed hot paths ----------------------------------------------------------------------

  /**
   * One statement: the rows, and a NOTIFY (delivered at commit) naming the integrations that got
   * work, which wakes every replica's queue. Too many names for a payload: an empty one (= look).
   */
  private async insertExecutions(executions: NewExecution[], on: Queryable = this.pool): Promise<void> {
    const now = new Date().toISOString();
    const cols = executions.map((e) => columnsOf(queuedRecord(e, now), now));
    await on.query(prepared(this.sql.insertQueued, [rowsJson(cols), this.channel])).catch((err: unknown) => Promise.reject(storageError(err)));
  }

  enqueue(executions: NewExecution[]): Promise<void> {
    if (executions.length === 0) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    this.stats.enqueueCalls++;
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ executions, resolve, reject });
      if (this.pending.length >= 500) this.flushEnqueue();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flushEnqueue());
      }
    });
  }

  private flushEnqueue(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const p = this.writeBatch(batch);
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private async writeBatch(batch: PendingEnqueue[]): Promise<void> {
    try {
      await this.insertExecutions(batch.flatMap((b) => b.executions));
      this.stats.commits++;
      this.stats.enqueueCommits++;
      for (const b of batch) b.resolve();
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
    }
    // The batch failed as a whole (one statement = one transaction, nothing written): retry alone.
    await Promise.all(
      batch.map(async (b) => {
        try {
          await this.insertExecutions(b.executions);
          this.stats.commits++;
          this.stats.enqueueCommits++;
          b.resolve();
        } catch (err) {
          b.reject(err);
        }
      }),
    );
  }

  /**
   * The key's claim and the execution's row in one transaction (no row when the key is held). A
   * concurrent claim of the same key on another replica waits on the primary key until this one
   * commits or rolls back, then sees it.
   */
  async enqueueOnce(execution: NewExecution, claim: IdempotencyClaim): Promise<{ executionId: string; duplicate: boolean }> {
    const steps = this.claimSteps(execution, claim);
    this.stats.enqueueCalls++;
    const outcome = await this.pgd.tx(async (c) => {
      const result = this.claimOutcome(execution, await this.pgd.runSteps(c, steps));
      if (!result.duplicate) await this.insertExecutions([execution], c);
      return result;
    });
    this.stats.commits++;
    return outcome;
  }

  /** Also takes the lease (this process holds the running execution). */
  async markRunning(id: string, attempt: number): Promise<ExecutionRecord | undefined> {
    if (this.closed) throw new Error('the store is closed');
    const now = new Date().toISOString();
    const { rows } = await this.pool
      .query(prepared(this.sql.markRunning, [attempt, now, this.owner, this.leaseSec, id]))
      .catch((err: unknown) => Promise.reject(storageError(err)));
    this.stats.commits++;
    return rows[0] ? runningRecord(this.record(rows[0]), attempt, now) : undefined;
  }

  saveExecution(record: ExecutionRecord, opts: SaveOptions = {}): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.saves.save(record, !!opts.stored);
  }

  /** Seen keys and new executions in one transaction. */
  async commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void> {
    const seen = this.seenSteps(integration, keys, maxSeen);
    await this.pgd.tx(async (c) => {
      await this.pgd.runSteps(c, seen);
      if (executions.length) await this.insertExecutions(executions, c);
    });
  }

  lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.leaseLocks ??= new LeaseLocks(this.pool, `${this.s}.locks`);
    return this.leaseLocks.run(key, fn, signal);
  }

  // Durable execution -------------------------------------------------------------------------------

  /**
   * One statement (one commit): the due rows each locked by one waker cluster-wide, made queued,
   * and a NOTIFY that makes every replica's queue claim them (postgres-plans.ts `wakePlans`).
   */
  async wakeDue(now: Date, limit: number): Promise<ExecutionRecord[]> {
    if (this.closed) throw new Error('the store is closed');
    const at = now.toISOString();
    const n = Math.max(0, Math.floor(limit));
    const { rows } = await this.pool
      .query<Record<string, unknown> & { id: string; due_at: Date }>(prepared(this.wakeSql.wakeDue, [at, at, at, n, n, at, this.channel]))
      .catch((err: unknown) => Promise.reject(storageError(err)));
    this.stats.commits++;
    // Oldest wake-up first, as picked.
    rows.sort((a, b) => a.due_at.getTime() - b.due_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return rows.map((r) => this.record(r));
  }

  /**
   * The request and the wake-up in one transaction. Concurrent requests to one token wait on its
   * row: the first records its request, the others then find it recorded (`used`).
   */
  async receiveCallback(token: string, request: CallbackRequest, now: Date): Promise<CallbackReceipt> {
    const at = now.toISOString();
    return this.pgd.tx(async (c) => {
      const { rows } = await c.query<{ execution_id: string }>(dollarPlaceholders(shared.recordCallbackRequest), [
        JSON.stringify(request),
        at,
        token,
        at,
      ]);
      const got = rows[0]?.execution_id;
      if (got !== undefined) {
        await c.query(dollarPlaceholders(shared.makeDue), [at, got]);
        return this.callbackReceipt(got, undefined, at);
      }
      const existing = await c.query(dollarPlaceholders(shared.getCallback), [token]);
      return this.callbackReceipt(undefined, existing.rows[0], at);
    });
  }
}

/** The URL without its password, for error messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured database URL';
  }
}
