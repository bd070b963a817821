/**
 * The shared store for several replicas: PostgreSQL through a `pg` Pool, every table in one
 * schema (option `schema`, default `public`). Same behaviour as the SQLite store; concurrency is
 * PostgreSQL's: ticks are claimed with INSERT … ON CONFLICT DO NOTHING, token refreshes are
 * serialised with a transaction-scoped advisory lock held by a dedicated client.
 *
 * The `executions` table is also the cluster's queue (table-queue.ts): a running row carries who
 * holds it (`claimed_by`) and until when (`lease_until`).
 *
 * enqueue() calls of the same tick are still gathered into one multi-row INSERT (group commit);
 * when that batch fails, each call is retried alone so only the bad one is rejected.
 */
import pg from 'pg';
import type { PoolClient, PoolConfig } from 'pg';
import type { StoredTokens, TokenStore } from '../../connectors/types.js';
import type { ExecutionRecord, ExecutionStatus } from '../../engine/record.js';
import { deriveKey, SECRET_ENV, TokenCipher } from '../token-crypto.js';
import { storageError } from './errors.js';
import type { Capture, ExecutionFilter, ExecutionSummary, NewExecution, SavedPayload, SaveOptions, Store } from '../types.js';
import {
  checkFilter,
  clampLimit,
  columnsOf,
  dedupeKeepLast,
  DEFAULT_CAPTURE_KEEP,
  emptyCounts,
  iso,
  isFinished,
  KeyedMutex,
  newStats,
  newWebhookToken,
  queuedRecord,
  recordFromRow,
  recordJson,
  runningRecord,
  summaryFromRow,
  type StoreStats,
} from '../common.js';
import type { ExecutionQueue, QueueOptions } from '../queue.js';
import { GroupSaves } from './group-saves.js';
import { LeaseLocks } from './lease-locks.js';
import { migrate, quoteIdent } from './migrations.js';
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

type Row = Record<string, unknown>;
type Queryable = Pick<PoolClient, 'query'>;

const EXEC_COLS = 'id, integration, status, test, attempt, trigger, record, queued_at, started_at, finished_at';
const SUMMARY_COLS = 'id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error';

interface PendingEnqueue {
  executions: NewExecution[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly stats: StoreStats = newStats();
  readonly tokens: TokenStore;
  readonly schema: string;
  /** The pool; exposed for tests and diagnostics. */
  readonly pool: pg.Pool;
  private readonly s: string;
  private pending: PendingEnqueue[] = [];
  private scheduled = false;
  private inflight = new Set<Promise<void>>();
  private closed = false;
  /** NOTIFY channel of new work (table-queue.ts). */
  private readonly channel: string;
  /** Who holds the executions this process runs, and for how long (set by openQueue). */
  private owner = defaultReplicaId();
  private leaseSec = DEFAULT_LEASE_SEC;
  private readonly saves: GroupSaves;

  private constructor(pool: pg.Pool, schema: string, tokenKey: (() => Buffer) | undefined) {
    this.pool = pool;
    this.schema = schema;
    this.s = quoteIdent(schema);
    this.channel = channelFor(schema);
    this.saves = new GroupSaves({
      pool,
      table: `${this.s}.executions`,
      lease: () => ({ owner: this.owner, seconds: this.leaseSec }),
      mapError: storageError,
      committed: () => this.stats.commits++,
    });
    this.tokens = new PostgresTokenStore(this, tokenKey);
  }

  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = opts.schema ?? 'public';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, ...opts.pool });
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
      const secret = opts.secret ?? process.env[SECRET_ENV];
      if (!secret) throw new Error(`${SECRET_ENV} is not set: replicas sharing a PostgreSQL database need the same ${SECRET_ENV} to encrypt stored tokens`);
      key = deriveKey(secret);
      return key;
    };
    return new PostgresStore(pool, schema, keyFn);
  }

  /** A transaction-scoped advisory lock on (purpose, integration) in this schema. */
  private async lockIntegration(c: PoolClient, purpose: string, integration: string): Promise<void> {
    await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`hcm-runner:${purpose}:${this.schema}:${integration}`]);
  }

  private t(table: string): string {
    return `${this.s}.${table}`;
  }

  private q<R extends Row = Row>(sql: string, params: unknown[] = [], on: Queryable = this.pool): Promise<pg.QueryResult<R>> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return on.query<R>(sql, params).catch((err: unknown) => Promise.reject(storageError(err)));
  }

  /** Runs `fn` in a transaction on a dedicated client. */
  async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the store is closed');
    const c = await this.pool.connect().catch((err: unknown) => Promise.reject(storageError(err)));
    try {
      await c.query('BEGIN');
      const result = await fn(c);
      await c.query('COMMIT');
      this.stats.commits++;
      return result;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw storageError(err);
    } finally {
      c.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flushEnqueue();
    await Promise.allSettled([...this.inflight]);
    await this.saves.drain();
    this.closed = true;
    await this.pool.end();
  }

  /** The `executions` table as a queue shared by every replica (table-queue.ts). */
  openQueue(opts: QueueOptions = {}): ExecutionQueue {
    this.owner = opts.replicaId ? `${opts.replicaId}:${process.pid}` : this.owner;
    this.leaseSec = opts.leaseSec ?? this.leaseSec;
    return new TableQueue(this, { ...opts, owner: this.owner, leaseSec: this.leaseSec });
  }

  // Executions -------------------------------------------------------------------------------

  /**
   * One statement: the rows, and a NOTIFY (delivered at commit) naming the integrations that got
   * work, which wakes every replica's queue. Too many names for a payload: an empty one (= look).
   */
  private async insertExecutions(executions: NewExecution[], on: Queryable = this.pool): Promise<void> {
    const now = new Date().toISOString();
    const cols = executions.map((e) => columnsOf(queuedRecord(e, now), now));
    await this.q(
      `WITH ins AS (
         INSERT INTO ${this.t('executions')} (id, integration, status, test, attempt, trigger, record, queued_at)
         SELECT id, integration, 'queued', test, attempt, trigger::json, record::json, queued_at
         FROM unnest($1::text[], $2::text[], $3::boolean[], $4::int[], $5::text[], $6::text[], $7::timestamptz[])
           AS t(id, integration, test, attempt, trigger, record, queued_at)
         RETURNING integration),
       names AS (SELECT string_agg(DISTINCT integration, E'\n') AS list FROM ins)
       SELECT pg_notify($8, CASE WHEN octet_length(list) < 7900 THEN list ELSE '' END) FROM names`,
      [
        cols.map((c) => c.id),
        cols.map((c) => c.integration),
        cols.map((c) => c.test),
        cols.map((c) => c.attempt),
        cols.map((c) => c.trigger),
        cols.map((c) => c.record),
        cols.map((c) => c.queuedAt),
        this.channel,
      ],
      on,
    );
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

  async markRunning(id: string, attempt: number): Promise<ExecutionRecord | undefined> {
    return this.tx(async (c) => {
      const { rows } = await c.query(`SELECT ${EXEC_COLS} FROM ${this.t('executions')} WHERE id = $1 FOR UPDATE`, [id]);
      const row = rows[0] as Row | undefined;
      if (!row || isFinished(String(row.status))) return undefined;
      const now = new Date().toISOString();
      const record = runningRecord(recordFromRow(row as never), attempt, now);
      await c.query(
        `UPDATE ${this.t('executions')} SET status = 'running', attempt = $2, record = $3::json, started_at = $4,
           finished_at = NULL, duration_ms = NULL, error = NULL, claimed_by = $5, lease_until = now() + $6 * interval '1 second' WHERE id = $1`,
        [id, attempt, recordJson(record), now, this.owner, this.leaseSec],
      );
      return record;
    });
  }

  saveExecution(record: ExecutionRecord, opts: SaveOptions = {}): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.saves.save(record, !!opts.stored);
  }

  async getExecution(id: string): Promise<ExecutionRecord | undefined> {
    const { rows } = await this.q(`SELECT ${EXEC_COLS} FROM ${this.t('executions')} WHERE id = $1`, [id]);
    return rows[0] ? recordFromRow(rows[0] as never) : undefined;
  }

  async listExecutions(filter: ExecutionFilter = {}): Promise<ExecutionSummary[]> {
    checkFilter(filter);
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.integration !== undefined) (params.push(filter.integration), where.push(`integration = $${params.length}`));
    if (filter.status !== undefined) (params.push(filter.status), where.push(`status = $${params.length}`));
    if (filter.before !== undefined) (params.push(iso(filter.before)), where.push(`queued_at < $${params.length}`));
    params.push(clampLimit(filter.limit));
    const { rows } = await this.q(
      `SELECT ${SUMMARY_COLS} FROM ${this.t('executions')} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY queued_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map((r) => summaryFromRow(r as never));
  }

  async unfinishedExecutions(): Promise<ExecutionRecord[]> {
    const { rows } = await this.q(
      `SELECT ${EXEC_COLS} FROM ${this.t('executions')} WHERE status IN ('queued', 'running') ORDER BY queued_at ASC, id ASC`,
    );
    return rows.map((r) => recordFromRow(r as never));
  }

  async countByStatus(): Promise<Record<ExecutionStatus, number>> {
    const counts = emptyCounts();
    const { rows } = await this.q<{ status: ExecutionStatus; n: string }>(`SELECT status, COUNT(*) AS n FROM ${this.t('executions')} GROUP BY status`);
    for (const r of rows) if (r.status in counts) counts[r.status] = Number(r.n);
    return counts;
  }

  /** Also forgets claimed schedule/poll ticks older than `before`. */
  async pruneExecutions(before: Date): Promise<number> {
    return this.tx(async (c) => {
      const r = await c.query(
        `DELETE FROM ${this.t('executions')} WHERE status IN ('succeeded', 'failed') AND finished_at IS NOT NULL AND finished_at < $1`,
        [before.toISOString()],
      );
      await c.query(`DELETE FROM ${this.t('ticks')} WHERE claimed_at < $1`, [before.toISOString()]);
      return r.rowCount ?? 0;
    });
  }

  // Webhook tokens ---------------------------------------------------------------------------

  async webhookToken(integration: string): Promise<string> {
    const existing = await this.q<{ token: string }>(`SELECT token FROM ${this.t('webhook_tokens')} WHERE integration = $1`, [integration]);
    if (existing.rows[0]) return existing.rows[0].token;
    await this.q(`INSERT INTO ${this.t('webhook_tokens')} (integration, token) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [integration, newWebhookToken()]);
    const { rows } = await this.q<{ token: string }>(`SELECT token FROM ${this.t('webhook_tokens')} WHERE integration = $1`, [integration]);
    return rows[0]!.token;
  }

  async rotateWebhookToken(integration: string): Promise<string> {
    const { rows } = await this.q<{ token: string }>(
      `INSERT INTO ${this.t('webhook_tokens')} (integration, token) VALUES ($1, $2)
       ON CONFLICT (integration) DO UPDATE SET token = excluded.token, created_at = now() RETURNING token`,
      [integration, newWebhookToken()],
    );
    return rows[0]!.token;
  }

  async integrationForToken(token: string): Promise<string | undefined> {
    const { rows } = await this.q<{ integration: string }>(`SELECT integration FROM ${this.t('webhook_tokens')} WHERE token = $1`, [token]);
    return rows[0]?.integration;
  }

  // Listening, captures, payloads ------------------------------------------------------------

  async setListening(integration: string, on: boolean): Promise<void> {
    if (on) await this.q(`INSERT INTO ${this.t('listening')} (integration) VALUES ($1) ON CONFLICT DO NOTHING`, [integration]);
    else await this.q(`DELETE FROM ${this.t('listening')} WHERE integration = $1`, [integration]);
  }

  async isListening(integration: string): Promise<boolean> {
    return (await this.q(`SELECT 1 FROM ${this.t('listening')} WHERE integration = $1`, [integration])).rows.length > 0;
  }

  async listeningIntegrations(): Promise<string[]> {
    const { rows } = await this.q<{ integration: string }>(`SELECT integration FROM ${this.t('listening')} ORDER BY integration`);
    return rows.map((r) => r.integration);
  }

  async addCapture(capture: Capture, keep = DEFAULT_CAPTURE_KEEP): Promise<void> {
    await this.tx(async (c) => {
      // Trimming must see concurrent captures of the same integration: one at a time.
      await this.lockIntegration(c, 'captures', capture.integration);
      await c.query(
        `INSERT INTO ${this.t('captures')} (integration, id, received_at, trigger) VALUES ($1, $2, $3, $4::json)
         ON CONFLICT (integration, id) DO UPDATE SET received_at = excluded.received_at, trigger = excluded.trigger`,
        [capture.integration, capture.id, iso(capture.receivedAt) ?? new Date().toISOString(), JSON.stringify(capture.trigger ?? null)],
      );
      await c.query(
        `DELETE FROM ${this.t('captures')} WHERE integration = $1 AND seq NOT IN
           (SELECT seq FROM ${this.t('captures')} WHERE integration = $1 ORDER BY seq DESC LIMIT $2)`,
        [capture.integration, Math.max(0, Math.floor(keep))],
      );
    });
  }

  async listCaptures(integration: string, limit = DEFAULT_CAPTURE_KEEP): Promise<Capture[]> {
    const { rows } = await this.q(
      `SELECT integration, id, received_at, trigger FROM ${this.t('captures')} WHERE integration = $1 ORDER BY seq DESC LIMIT $2`,
      [integration, clampLimit(limit, DEFAULT_CAPTURE_KEEP)],
    );
    return rows.map(captureFromRow);
  }

  async getCapture(integration: string, id: string): Promise<Capture | undefined> {
    const { rows } = await this.q(`SELECT integration, id, received_at, trigger FROM ${this.t('captures')} WHERE integration = $1 AND id = $2`, [
      integration,
      id,
    ]);
    return rows[0] ? captureFromRow(rows[0]) : undefined;
  }

  async savePayload(integration: string, name: string, trigger: unknown): Promise<SavedPayload> {
    const now = new Date().toISOString();
    const { rows } = await this.q(
      `INSERT INTO ${this.t('payloads')} (integration, name, trigger, created_at, updated_at) VALUES ($1, $2, $3::json, $4, $4)
       ON CONFLICT (integration, name) DO UPDATE SET trigger = excluded.trigger, updated_at = excluded.updated_at
       RETURNING *`,
      [integration, name, JSON.stringify(trigger ?? null), now],
    );
    return payloadFromRow(rows[0]!);
  }

  async getPayload(integration: string, name: string): Promise<SavedPayload | undefined> {
    const { rows } = await this.q(`SELECT * FROM ${this.t('payloads')} WHERE integration = $1 AND name = $2`, [integration, name]);
    return rows[0] ? payloadFromRow(rows[0]) : undefined;
  }

  async listPayloads(integration: string): Promise<SavedPayload[]> {
    const { rows } = await this.q(`SELECT * FROM ${this.t('payloads')} WHERE integration = $1 ORDER BY name`, [integration]);
    return rows.map(payloadFromRow);
  }

  async deletePayload(integration: string, name: string): Promise<boolean> {
    const r = await this.q(`DELETE FROM ${this.t('payloads')} WHERE integration = $1 AND name = $2`, [integration, name]);
    return (r.rowCount ?? 0) > 0;
  }

  // Trigger state ----------------------------------------------------------------------------

  async getState(integration: string, key: string): Promise<unknown> {
    const { rows } = await this.q<{ value: unknown }>(`SELECT value FROM ${this.t('trigger_state')} WHERE integration = $1 AND key = $2`, [integration, key]);
    return rows[0] ? rows[0].value : undefined;
  }

  async setState(integration: string, key: string, value: unknown): Promise<void> {
    if (value === undefined) return this.deleteState(integration, key);
    await this.q(
      `INSERT INTO ${this.t('trigger_state')} (integration, key, value) VALUES ($1, $2, $3::json)
       ON CONFLICT (integration, key) DO UPDATE SET value = excluded.value, updated_at = now()`,
      [integration, key, JSON.stringify(value)],
    );
  }

  /** Without `key`: all of the integration's trigger state (not its poll seen-set). */
  async deleteState(integration: string, key?: string): Promise<void> {
    if (key === undefined) await this.q(`DELETE FROM ${this.t('trigger_state')} WHERE integration = $1`, [integration]);
    else await this.q(`DELETE FROM ${this.t('trigger_state')} WHERE integration = $1 AND key = $2`, [integration, key]);
  }

  async takeState(integration: string, key: string): Promise<unknown> {
    const { rows } = await this.q<{ value: unknown }>(`DELETE FROM ${this.t('trigger_state')} WHERE integration = $1 AND key = $2 RETURNING value`, [
      integration,
      key,
    ]);
    return rows[0] ? rows[0].value : undefined;
  }

  async seenKeys(integration: string): Promise<Set<string>> {
    const { rows } = await this.q<{ key: string }>(`SELECT key FROM ${this.t('poll_seen')} WHERE integration = $1`, [integration]);
    return new Set(rows.map((r) => r.key));
  }

  /** Later keys in `keys` count as newer; keys seen again become the newest. */
  async commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void> {
    const unique = dedupeKeepLast(keys);
    await this.tx(async (c) => {
      await this.lockIntegration(c, 'poll', integration);
      if (unique.length) {
        await c.query(
          `INSERT INTO ${this.t('poll_seen')} (integration, key, seq)
           SELECT $1, k, nextval('${this.s}.poll_seen_seq') FROM unnest($2::text[]) WITH ORDINALITY AS t(k, i) ORDER BY i
           ON CONFLICT (integration, key) DO UPDATE SET seq = excluded.seq`,
          [integration, unique],
        );
      }
      await c.query(
        `DELETE FROM ${this.t('poll_seen')} WHERE integration = $1 AND seq NOT IN
           (SELECT seq FROM ${this.t('poll_seen')} WHERE integration = $1 ORDER BY seq DESC LIMIT $2)`,
        [integration, Math.max(0, Math.floor(maxSeen))],
      );
      if (executions.length) await this.insertExecutions(executions, c);
    });
  }

  async claimTick(integration: string, tick: string): Promise<boolean> {
    const r = await this.q(`INSERT INTO ${this.t('ticks')} (integration, tick) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [integration, tick]);
    return r.rowCount === 1;
  }

  private leaseLocks?: LeaseLocks;

  lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.leaseLocks ??= new LeaseLocks(this.pool, this.t('locks'));
    return this.leaseLocks.run(key, fn, signal);
  }

  // Tokens (used by PostgresTokenStore) -------------------------------------------------------

  /** @internal */
  async _getTokenBlob(key: string): Promise<string | undefined> {
    const { rows } = await this.q<{ blob: string }>(`SELECT blob FROM ${this.t('tokens')} WHERE key = $1`, [key]);
    return rows[0]?.blob;
  }

  /** @internal */
  async _setTokenBlob(key: string, blob: string | undefined): Promise<void> {
    if (blob === undefined) await this.q(`DELETE FROM ${this.t('tokens')} WHERE key = $1`, [key]);
    else
      await this.q(
        `INSERT INTO ${this.t('tokens')} (key, blob) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET blob = excluded.blob, updated_at = now()`,
        [key, blob],
      );
  }
}

/**
 * Tokens encrypted at rest; `withLock` holds `pg_advisory_xact_lock` in a transaction on a
 * dedicated client while `fn` runs, so one refresh per key is in flight across all replicas.
 * An in-process mutex in front keeps a process from tying up several pool clients on one key.
 */
class PostgresTokenStore implements TokenStore {
  private cipher?: TokenCipher;
  private readonly mutex = new KeyedMutex();

  constructor(
    private readonly store: PostgresStore,
    private readonly key: (() => Buffer) | undefined,
  ) {}

  private getCipher(): TokenCipher {
    if (!this.key) throw new Error(`${SECRET_ENV} is not set: it is needed to encrypt stored tokens`);
    this.cipher ??= new TokenCipher(this.key());
    return this.cipher;
  }

  async get(key: string): Promise<StoredTokens | undefined> {
    const blob = await this.store._getTokenBlob(key);
    return blob === undefined ? undefined : this.getCipher().decrypt<StoredTokens>(blob);
  }

  async set(key: string, tokens: StoredTokens): Promise<void> {
    await this.store._setTokenBlob(key, this.getCipher().encrypt(tokens));
  }

  async delete(key: string): Promise<void> {
    await this.store._setTokenBlob(key, undefined);
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(key, () =>
      this.store.tx(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`hcm-runner:token:${this.store.schema}:${key}`]);
        return fn();
      }),
    );
  }
}

function captureFromRow(row: Row): Capture {
  return { id: String(row.id), integration: String(row.integration), receivedAt: iso(row.received_at as Date)!, trigger: row.trigger };
}

function payloadFromRow(row: Row): SavedPayload {
  return {
    integration: String(row.integration),
    name: String(row.name),
    trigger: row.trigger,
    createdAt: iso(row.created_at as Date)!,
    updatedAt: iso(row.updated_at as Date)!,
  };
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
