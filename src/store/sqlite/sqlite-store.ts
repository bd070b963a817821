/**
 * The embedded store: one SQLite file `<dataDir>/hcm-runner.db` (better-sqlite3), owned by a
 * single process.
 *
 * Durability: WAL with `synchronous=FULL`. In WAL mode, NORMAL only fsyncs at checkpoints, so a
 * power loss can drop the last commits — which would break "an accepted webhook is never lost".
 * FULL fsyncs the WAL on every commit; group commit (see write-queue.ts) amortises that fsync
 * over every write queued in the same tick, so the cost is one fsync per batch, not per webhook.
 *
 * All writes go through the write queue (one transaction per tick, in call order); reads run
 * directly against the committed state.
 */
import Database from 'better-sqlite3';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { StoredTokens, TokenStore } from '../../connectors/types.js';
import type { ExecutionRecord, ExecutionStatus } from '../../engine/record.js';
import { loadTokenKey, TokenCipher } from '../token-crypto.js';
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
  stateColumnsOf,
  summaryFromRow,
  type StoreStats,
} from '../common.js';
import { InProcessQueue, type ExecutionQueue } from '../queue.js';
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

type Row = Record<string, unknown>;
const EXEC_COLS = 'id, integration, status, test, attempt, trigger, record, queued_at, started_at, finished_at';
const SUMMARY_COLS = 'id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error';

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly stats: StoreStats = newStats();
  readonly tokens: TokenStore;
  readonly file: string;
  private readonly queue: WriteQueue;
  private closed = false;
  /** Prepared statements of the hot paths, by SQL text (preparing costs more than running). */
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(
    readonly dataDir: string,
    /** The connection; exposed for tests and diagnostics only. */
    readonly db: Database.Database,
    tokenKey: Buffer | undefined,
    opts: SqliteStoreOptions,
  ) {
    this.file = join(dataDir, SQLITE_FILE);
    this.queue = new WriteQueue(
      db,
      {
        committed: (kinds) => {
          this.stats.commits++;
          if (kinds.has('enqueue')) this.stats.enqueueCommits++;
        },
        mapError: (err) => writeError(dataDir, err),
      },
      opts.maxBatch,
    );
    this.tokens = new SqliteTokenStore(this, tokenKey);
  }

  /** Opens (creating if needed) the store in `dataDir`, applying pending migrations. */
  static async open(dataDir: string, opts: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const dir = resolve(dataDir);
    let db: Database.Database | undefined;
    try {
      mkdirSync(dir, { recursive: true });
      if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
      db = new Database(join(dir, SQLITE_FILE));
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal') throw Object.assign(new Error(`journal_mode is ${mode}, not wal`), { code: 'SQLITE_READONLY' });
      db.pragma('synchronous = FULL');
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
      db.pragma('foreign_keys = ON');
      migrate(db);
    } catch (err) {
      try {
        db?.close();
      } catch {
        /* ignore */
      }
      throw openError(dir, err);
    }
    return new SqliteStore(dir, db, opts.tokenKey, opts);
  }

  private prepare(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) this.statements.set(sql, (stmt = this.db.prepare(sql)));
    return stmt;
  }

  private write<T>(kind: string, fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.queue.run(kind, fn);
  }

  private read<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(readError(this.dataDir, err));
    }
  }

  /** One process owns the file: the queue is an in-memory work list over these rows. */
  openQueue(): ExecutionQueue {
    return new InProcessQueue(this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.queue.close();
    this.closed = true;
    this.db.close();
  }

  // Executions -------------------------------------------------------------------------------

  private insertExecutions(executions: NewExecution[]): void {
    const now = new Date().toISOString();
    const stmt = this.prepare(
      `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at)
       VALUES (@id, @integration, 'queued', @test, @attempt, @trigger, @record, @queuedAt)`,
    );
    for (const e of executions) {
      const c = columnsOf(queuedRecord(e, now), now);
      stmt.run({ id: c.id, integration: c.integration, test: c.test ? 1 : 0, attempt: c.attempt, trigger: c.trigger, record: c.record, queuedAt: c.queuedAt });
    }
  }

  enqueue(executions: NewExecution[]): Promise<void> {
    if (executions.length === 0) return Promise.resolve();
    this.stats.enqueueCalls++;
    return this.write('enqueue', () => this.insertExecutions(executions));
  }

  markRunning(id: string, attempt: number): Promise<ExecutionRecord | undefined> {
    return this.write('markRunning', () => {
      const row = this.prepare(`SELECT ${EXEC_COLS} FROM executions WHERE id = ?`).get(id) as Row | undefined;
      if (!row || isFinished(String(row.status))) return undefined;
      const now = new Date().toISOString();
      const record = runningRecord(recordFromRow(row as never), attempt, now);
      this
        .prepare(
          `UPDATE executions SET status = 'running', attempt = ?, record = ?, started_at = ?,
             finished_at = NULL, duration_ms = NULL, error = NULL WHERE id = ?`,
        )
        .run(attempt, recordJson(record), now, id);
      return record;
    });
  }

  saveExecution(record: ExecutionRecord, opts: SaveOptions = {}): Promise<void> {
    return this.write('saveExecution', () => {
      if (opts.stored) {
        // The row exists: what a run changes, without the trigger (and queued_at) again.
        const s = stateColumnsOf(record);
        const changed = this.prepare(
          `UPDATE executions SET status = @status, attempt = @attempt, record = @record, started_at = @startedAt,
             finished_at = @finishedAt, duration_ms = @durationMs, error = @error WHERE id = @id`,
        ).run(s).changes;
        if (changed) return;
      }
      const c = columnsOf(record, new Date().toISOString());
      this
        .prepare(
          `INSERT INTO executions (id, integration, status, test, attempt, trigger, record, queued_at, started_at, finished_at, duration_ms, error)
           VALUES (@id, @integration, @status, @test, @attempt, @trigger, @record, @queuedAt, @startedAt, @finishedAt, @durationMs, @error)
           ON CONFLICT (id) DO UPDATE SET integration = excluded.integration, status = excluded.status, test = excluded.test,
             attempt = excluded.attempt, record = excluded.record,
             queued_at = CASE WHEN @queuedAtGiven THEN excluded.queued_at ELSE executions.queued_at END,
             started_at = excluded.started_at, finished_at = excluded.finished_at,
             duration_ms = excluded.duration_ms, error = excluded.error`,
        )
        .run({ ...c, test: c.test ? 1 : 0, queuedAtGiven: record.queuedAt ? 1 : 0 });
    });
  }

  getExecution(id: string): Promise<ExecutionRecord | undefined> {
    return this.read(() => {
      const row = this.prepare(`SELECT ${EXEC_COLS} FROM executions WHERE id = ?`).get(id) as Row | undefined;
      return row ? recordFromRow(row as never) : undefined;
    });
  }

  listExecutions(filter: ExecutionFilter = {}): Promise<ExecutionSummary[]> {
    return this.read(() => {
      checkFilter(filter);
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.integration !== undefined) (where.push('integration = ?'), params.push(filter.integration));
      if (filter.status !== undefined) (where.push('status = ?'), params.push(filter.status));
      if (filter.before !== undefined) (where.push('queued_at < ?'), params.push(iso(filter.before)));
      params.push(clampLimit(filter.limit));
      const rows = this.db
        .prepare(
          `SELECT ${SUMMARY_COLS} FROM executions ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
           ORDER BY queued_at DESC, id DESC LIMIT ?`,
        )
        .all(...params) as Row[];
      return rows.map((r) => summaryFromRow(r as never));
    });
  }

  unfinishedExecutions(): Promise<ExecutionRecord[]> {
    return this.read(() =>
      (
        this.db
          .prepare(`SELECT ${EXEC_COLS} FROM executions WHERE status IN ('queued', 'running') ORDER BY queued_at ASC, id ASC`)
          .all() as Row[]
      ).map((r) => recordFromRow(r as never)),
    );
  }

  countByStatus(): Promise<Record<ExecutionStatus, number>> {
    return this.read(() => {
      const counts = emptyCounts();
      for (const r of this.db.prepare('SELECT status, COUNT(*) AS n FROM executions GROUP BY status').all() as Array<{ status: ExecutionStatus; n: number }>) {
        if (r.status in counts) counts[r.status] = r.n;
      }
      return counts;
    });
  }

  /** Also forgets claimed schedule/poll ticks older than `before`. */
  pruneExecutions(before: Date): Promise<number> {
    const cutoff = before.toISOString();
    return this.write('prune', () => {
      const n = this.db
        .prepare(`DELETE FROM executions WHERE status IN ('succeeded', 'failed') AND finished_at IS NOT NULL AND finished_at < ?`)
        .run(cutoff).changes;
      this.db.prepare('DELETE FROM ticks WHERE claimed_at < ?').run(cutoff);
      return n;
    });
  }

  // Webhook tokens ---------------------------------------------------------------------------

  async webhookToken(integration: string): Promise<string> {
    const existing = await this.read(() => this.tokenOf(integration));
    if (existing) return existing;
    return this.write('webhookToken', () => {
      this.db
        .prepare('INSERT OR IGNORE INTO webhook_tokens (integration, token, created_at) VALUES (?, ?, ?)')
        .run(integration, newWebhookToken(), new Date().toISOString());
      return this.tokenOf(integration)!;
    });
  }

  private tokenOf(integration: string): string | undefined {
    const row = this.db.prepare('SELECT token FROM webhook_tokens WHERE integration = ?').get(integration) as { token: string } | undefined;
    return row?.token;
  }

  rotateWebhookToken(integration: string): Promise<string> {
    return this.write('webhookToken', () => {
      const token = newWebhookToken();
      this.db
        .prepare(
          `INSERT INTO webhook_tokens (integration, token, created_at) VALUES (?, ?, ?)
           ON CONFLICT (integration) DO UPDATE SET token = excluded.token, created_at = excluded.created_at`,
        )
        .run(integration, token, new Date().toISOString());
      return token;
    });
  }

  integrationForToken(token: string): Promise<string | undefined> {
    return this.read(() => {
      const row = this.prepare('SELECT integration FROM webhook_tokens WHERE token = ?').get(token) as { integration: string } | undefined;
      return row?.integration;
    });
  }

  // Listening, captures, payloads ------------------------------------------------------------

  setListening(integration: string, on: boolean): Promise<void> {
    return this.write('listening', () => {
      if (on) this.db.prepare('INSERT OR IGNORE INTO listening (integration, since) VALUES (?, ?)').run(integration, new Date().toISOString());
      else this.db.prepare('DELETE FROM listening WHERE integration = ?').run(integration);
    });
  }

  isListening(integration: string): Promise<boolean> {
    return this.read(() => !!this.db.prepare('SELECT 1 FROM listening WHERE integration = ?').get(integration));
  }

  listeningIntegrations(): Promise<string[]> {
    return this.read(() =>
      (this.db.prepare('SELECT integration FROM listening ORDER BY integration').all() as Array<{ integration: string }>).map((r) => r.integration),
    );
  }

  addCapture(capture: Capture, keep = DEFAULT_CAPTURE_KEEP): Promise<void> {
    return this.write('capture', () => {
      this.db
        .prepare(
          `INSERT INTO captures (integration, id, received_at, trigger) VALUES (?, ?, ?, ?)
           ON CONFLICT (integration, id) DO UPDATE SET received_at = excluded.received_at, trigger = excluded.trigger`,
        )
        .run(capture.integration, capture.id, iso(capture.receivedAt) ?? new Date().toISOString(), JSON.stringify(capture.trigger ?? null));
      this.db
        .prepare(
          `DELETE FROM captures WHERE integration = ? AND seq NOT IN
             (SELECT seq FROM captures WHERE integration = ? ORDER BY seq DESC LIMIT ?)`,
        )
        .run(capture.integration, capture.integration, Math.max(0, Math.floor(keep)));
    });
  }

  listCaptures(integration: string, limit = DEFAULT_CAPTURE_KEEP): Promise<Capture[]> {
    return this.read(() =>
      (
        this.db
          .prepare('SELECT integration, id, received_at, trigger FROM captures WHERE integration = ? ORDER BY seq DESC LIMIT ?')
          .all(integration, clampLimit(limit, DEFAULT_CAPTURE_KEEP)) as Row[]
      ).map(captureFromRow),
    );
  }

  getCapture(integration: string, id: string): Promise<Capture | undefined> {
    return this.read(() => {
      const row = this.db.prepare('SELECT integration, id, received_at, trigger FROM captures WHERE integration = ? AND id = ?').get(integration, id) as
        | Row
        | undefined;
      return row ? captureFromRow(row) : undefined;
    });
  }

  savePayload(integration: string, name: string, trigger: unknown): Promise<SavedPayload> {
    return this.write('payload', () => {
      const now = new Date().toISOString();
      this.db
        .prepare(
          `INSERT INTO payloads (integration, name, trigger, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (integration, name) DO UPDATE SET trigger = excluded.trigger, updated_at = excluded.updated_at`,
        )
        .run(integration, name, JSON.stringify(trigger ?? null), now, now);
      return this.payloadOf(integration, name)!;
    });
  }

  private payloadOf(integration: string, name: string): SavedPayload | undefined {
    const row = this.db.prepare('SELECT * FROM payloads WHERE integration = ? AND name = ?').get(integration, name) as Row | undefined;
    return row ? payloadFromRow(row) : undefined;
  }

  getPayload(integration: string, name: string): Promise<SavedPayload | undefined> {
    return this.read(() => this.payloadOf(integration, name));
  }

  listPayloads(integration: string): Promise<SavedPayload[]> {
    return this.read(() => (this.db.prepare('SELECT * FROM payloads WHERE integration = ? ORDER BY name').all(integration) as Row[]).map(payloadFromRow));
  }

  deletePayload(integration: string, name: string): Promise<boolean> {
    return this.write('payload', () => this.db.prepare('DELETE FROM payloads WHERE integration = ? AND name = ?').run(integration, name).changes > 0);
  }

  // Trigger state ----------------------------------------------------------------------------

  getState(integration: string, key: string): Promise<unknown> {
    return this.read(() => {
      const row = this.db.prepare('SELECT value FROM trigger_state WHERE integration = ? AND key = ?').get(integration, key) as { value: string } | undefined;
      return row ? JSON.parse(row.value) : undefined;
    });
  }

  setState(integration: string, key: string, value: unknown): Promise<void> {
    if (value === undefined) return this.deleteState(integration, key);
    const json = JSON.stringify(value);
    return this.write('state', () => {
      this.db
        .prepare(
          `INSERT INTO trigger_state (integration, key, value, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (integration, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        )
        .run(integration, key, json, new Date().toISOString());
    });
  }

  /** Without `key`: all of the integration's trigger state (not its poll seen-set). */
  deleteState(integration: string, key?: string): Promise<void> {
    return this.write('state', () => {
      if (key === undefined) this.db.prepare('DELETE FROM trigger_state WHERE integration = ?').run(integration);
      else this.db.prepare('DELETE FROM trigger_state WHERE integration = ? AND key = ?').run(integration, key);
    });
  }

  takeState(integration: string, key: string): Promise<unknown> {
    return this.write('state', () => {
      const row = this.db.prepare('DELETE FROM trigger_state WHERE integration = ? AND key = ? RETURNING value').get(integration, key) as { value: string } | undefined;
      return row ? JSON.parse(row.value) : undefined;
    });
  }

  seenKeys(integration: string): Promise<Set<string>> {
    return this.read(
      () => new Set((this.db.prepare('SELECT key FROM poll_seen WHERE integration = ?').all(integration) as Array<{ key: string }>).map((r) => r.key)),
    );
  }

  /** Later keys in `keys` count as newer; keys seen again become the newest. */
  commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void> {
    const unique = dedupeKeepLast(keys);
    return this.write(executions.length ? 'enqueue' : 'poll', () => {
      if (unique.length) {
        const top = this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM poll_seen WHERE integration = ?').get(integration) as { s: number };
        const upsert = this.db.prepare(
          `INSERT INTO poll_seen (integration, key, seq) VALUES (?, ?, ?)
           ON CONFLICT (integration, key) DO UPDATE SET seq = excluded.seq`,
        );
        unique.forEach((k, i) => upsert.run(integration, k, top.s + 1 + i));
      }
      this.db
        .prepare(
          `DELETE FROM poll_seen WHERE integration = ? AND seq NOT IN
             (SELECT seq FROM poll_seen WHERE integration = ? ORDER BY seq DESC LIMIT ?)`,
        )
        .run(integration, integration, Math.max(0, Math.floor(maxSeen)));
      if (executions.length) this.insertExecutions(executions);
    });
  }

  claimTick(integration: string, tick: string): Promise<boolean> {
    return this.write(
      'tick',
      () =>
        this.db.prepare('INSERT OR IGNORE INTO ticks (integration, tick, claimed_at) VALUES (?, ?, ?)').run(integration, tick, new Date().toISOString())
          .changes === 1,
    );
  }

  /** One process owns the file, so a lock within the process is cluster-wide. */
  private readonly locks = new KeyedMutex();

  lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.locks.run(key, fn, signal);
  }

  // Tokens (used by SqliteTokenStore) ---------------------------------------------------------

  /** @internal */
  _getTokenBlob(key: string): Promise<string | undefined> {
    return this.read(() => (this.prepare('SELECT blob FROM tokens WHERE key = ?').get(key) as { blob: string } | undefined)?.blob);
  }

  /** @internal */
  _setTokenBlob(key: string, blob: string | undefined): Promise<void> {
    return this.write('tokens', () => {
      if (blob === undefined) this.db.prepare('DELETE FROM tokens WHERE key = ?').run(key);
      else
        this.db
          .prepare('INSERT INTO tokens (key, blob, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET blob = excluded.blob, updated_at = excluded.updated_at')
          .run(key, blob, new Date().toISOString());
    });
  }
}

/** Tokens encrypted at rest in the `tokens` table; the lock is in-process (one process owns the file). */
class SqliteTokenStore implements TokenStore {
  private cipher?: Promise<TokenCipher>;
  private readonly mutex = new KeyedMutex();

  constructor(
    private readonly store: SqliteStore,
    private readonly key: Buffer | undefined,
  ) {}

  private getCipher(): Promise<TokenCipher> {
    this.cipher ??= (this.key ? Promise.resolve(this.key) : loadTokenKey(this.store.dataDir)).then((k) => new TokenCipher(k));
    return this.cipher;
  }

  async get(key: string): Promise<StoredTokens | undefined> {
    const blob = await this.store._getTokenBlob(key);
    return blob === undefined ? undefined : (await this.getCipher()).decrypt<StoredTokens>(blob);
  }

  async set(key: string, tokens: StoredTokens): Promise<void> {
    await this.store._setTokenBlob(key, (await this.getCipher()).encrypt(tokens));
  }

  async delete(key: string): Promise<void> {
    await this.store._setTokenBlob(key, undefined);
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(key, fn);
  }
}

function captureFromRow(row: Row): Capture {
  return {
    id: String(row.id),
    integration: String(row.integration),
    receivedAt: iso(row.received_at as string)!,
    trigger: typeof row.trigger === 'string' ? JSON.parse(row.trigger) : row.trigger,
  };
}

function payloadFromRow(row: Row): SavedPayload {
  return {
    integration: String(row.integration),
    name: String(row.name),
    trigger: typeof row.trigger === 'string' ? JSON.parse(row.trigger) : row.trigger,
    createdAt: iso(row.created_at as string | Date)!,
    updatedAt: iso(row.updated_at as string | Date)!,
  };
}
