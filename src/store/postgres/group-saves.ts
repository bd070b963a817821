/**
 * Group commit of execution saves on PostgreSQL: the saves of one tick become one statement (one
 * commit, one WAL flush) instead of one each. While a batch is being written the next one gathers,
 * so batches grow with the load. Batches are written one after the other, so two saves of the same
 * execution land in call order.
 *
 * A save of an existing row (`stored`) writes only what a run changes; a row that is missing after
 * all, and every save without `stored`, goes through the upsert, which writes the trigger only when
 * it inserts. When a batch fails as a whole, each save is retried alone so only a bad one fails.
 * A batch of one save (the usual case at low load, e.g. a synchronous webhook's only write) uses
 * single-row statements with plain parameters; larger batches pass their rows as one JSON array. All
 * are named statements (prepared.ts).
 */
import type pg from 'pg';
import type { ExecutionRecord } from '../../engine/record.js';
import { columnsOf, stateColumnsOf, type ExecutionColumns } from '../execution-rows.js';
import { executionPlans } from '../sql/postgres-plans.js';
import { prepared } from './prepared.js';

/**
 * A batch's rows as one JSON array for `json_to_recordset` (snake_case keys): the record and
 * trigger columns, already JSON text, are embedded as they are. Passing each column as a
 * PostgreSQL array instead escaped every quote of every record (pg's array encoding) on the
 * event loop. Written out key by key (not looped over sql/execution-columns.ts): this runs for
 * every save, and the unrolled form costs less; test/architecture/store-sql.test.ts checks that
 * its keys are the declared columns.
 */
export function rowsJson(rows: Array<Partial<ExecutionColumns> & { queuedGiven?: boolean }>): string {
  const j = JSON.stringify;
  const out: string[] = [];
  for (const c of rows) {
    let o = `{"id":${j(c.id)}`;
    if (c.integration !== undefined) o += `,"integration":${j(c.integration)}`;
    if (c.status !== undefined) o += `,"status":${j(c.status)}`;
    if (c.test !== undefined) o += `,"test":${c.test ? 'true' : 'false'}`;
    if (c.attempt !== undefined) o += `,"attempt":${j(c.attempt)}`;
    if (c.trigger !== undefined) o += `,"trigger":${c.trigger}`;
    if (c.record !== undefined) o += `,"record":${c.record}`;
    if (c.queuedAt !== undefined) o += `,"queued_at":${j(c.queuedAt)}`;
    if (c.startedAt !== undefined) o += `,"started_at":${j(c.startedAt)}`;
    if (c.finishedAt !== undefined) o += `,"finished_at":${j(c.finishedAt)}`;
    if (c.durationMs !== undefined) o += `,"duration_ms":${j(c.durationMs)}`;
    if (c.error !== undefined) o += `,"error":${j(c.error)}`;
    if (c.correlationKey !== undefined) o += `,"correlation_key":${j(c.correlationKey)}`;
    if (c.versionSha256 !== undefined) o += `,"version_sha256":${j(c.versionSha256)}`;
    if (c.versionCommit !== undefined) o += `,"version_commit":${j(c.versionCommit)}`;
    if (c.wakeAt !== undefined) o += `,"wake_at":${j(c.wakeAt)}`;
    if (c.retryOf !== undefined) o += `,"retry_of":${j(c.retryOf)}`;
    if (c.cancelRequested !== undefined) o += `,"cancel_requested":${c.cancelRequested ? 'true' : 'false'}`;
    if (c.concurrencyKey !== undefined) o += `,"concurrency_key":${j(c.concurrencyKey)}`;
    if (c.queuedGiven !== undefined) o += `,"queued_given":${c.queuedGiven ? 'true' : 'false'}`;
    out.push(`${o}}`);
  }
  return `[${out.join(',')}]`;
}

interface PendingSave {
  record: ExecutionRecord;
  stored: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface GroupSavesHost {
  readonly pool: pg.Pool;
  /** The quoted, schema-qualified executions table. */
  readonly table: string;
  /** The holder and lease written on rows saved as running (table-queue.ts). */
  lease(): { owner: string; seconds: number };
  /** Maps a database error to the error callers see. */
  mapError(err: unknown): unknown;
  /** Called once per committed statement. */
  committed(): void;
}

export class GroupSaves {
  private pending: PendingSave[] = [];
  private scheduled = false;
  private writing?: Promise<void>;

  /** The statements, built once for the host's table (so each is prepared once per connection). */
  private readonly sql: ReturnType<typeof executionPlans>;

  constructor(private readonly host: GroupSavesHost) {
    this.sql = executionPlans(host.table);
  }

  save(record: ExecutionRecord, stored: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ record, stored, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything saved so far is written. */
  async drain(): Promise<void> {
    while (this.pending.length || this.writing) {
      if (!this.writing) this.flush();
      await this.writing?.catch(() => undefined);
    }
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
      if (this.pending.length) this.schedule();
    });
  }

  private async write(batch: PendingSave[]): Promise<void> {
    // Rounds of distinct executions: a statement must not touch one row twice.
    const rounds: PendingSave[][] = [];
    const seen = new Map<string, number>();
    for (const p of batch) {
      const n = seen.get(p.record.id) ?? 0;
      seen.set(p.record.id, n + 1);
      (rounds[n] ??= []).push(p);
    }
    for (const round of rounds) await this.writeRound(round);
  }

  private async writeRound(round: PendingSave[]): Promise<void> {
    try {
      await this.statements(round);
      for (const p of round) p.resolve();
      return;
    } catch (err) {
      if (round.length === 1) {
        round[0]!.reject(this.host.mapError(err));
        return;
      }
    }
    for (const p of round) {
      try {
        await this.statements([p]);
        p.resolve();
      } catch (err) {
        p.reject(this.host.mapError(err));
      }
    }
  }

  private async statements(round: PendingSave[]): Promise<void> {
    if (round.length === 1) {
      const p = round[0]!;
      if (!(p.stored && (await this.updateOne(p)))) await this.upsertOne(p);
      return;
    }
    const updates = round.filter((p) => p.stored);
    const upserts = round.filter((p) => !p.stored);
    const [missing] = await Promise.all([this.update(updates), this.upsert(upserts)]);
    if (missing.length) await this.upsert(missing);
  }

  /** Updates existing rows; returns the saves whose row was not there. */
  private async update(saves: PendingSave[]): Promise<PendingSave[]> {
    if (saves.length === 0) return [];
    const { owner, seconds } = this.host.lease();
    const { rows } = await this.host.pool.query<{ id: string }>(
      prepared(this.sql.updateStates, [rowsJson(saves.map((p) => stateColumnsOf(p.record))), owner, seconds]),
    );
    this.host.committed();
    const found = new Set(rows.map((r) => r.id));
    return saves.filter((p) => !found.has(p.record.id));
  }

  /** Inserts or updates rows; the trigger is written only on insert (it never changes). */
  private async upsert(saves: PendingSave[]): Promise<void> {
    if (saves.length === 0) return;
    const now = new Date().toISOString();
    const { owner, seconds } = this.host.lease();
    await this.host.pool.query(
      prepared(this.sql.upsertRows, [
        rowsJson(saves.map((p) => ({ ...columnsOf(p.record, now), queuedGiven: !!p.record.queuedAt }))),
        owner,
        seconds,
      ]),
    );
    this.host.committed();
  }

  /** `update` for one save: whether its row was there. */
  private async updateOne(p: PendingSave): Promise<boolean> {
    const c = stateColumnsOf(p.record);
    const { owner, seconds } = this.host.lease();
    const { rowCount } = await this.host.pool.query(
      // In the order of STATE_COLUMNS (sql/execution-columns.ts), which numbers the statement's
      // parameters; written out because this runs for every save at low load.
      prepared(this.sql.updateState, [
        c.id,
        c.status,
        c.attempt,
        c.record,
        c.startedAt,
        c.finishedAt,
        c.durationMs,
        c.error,
        c.correlationKey,
        c.versionSha256,
        c.versionCommit,
        c.wakeAt,
        owner,
        seconds,
      ]),
    );
    this.host.committed();
    return (rowCount ?? 0) > 0;
  }

  /** `upsert` for one save: the trigger and (unless the record names one) queued_at only on insert. */
  private async upsertOne(p: PendingSave): Promise<void> {
    const c = columnsOf(p.record, new Date().toISOString());
    const { owner, seconds } = this.host.lease();
    await this.host.pool.query(
      prepared(this.sql.upsertExecution, [
        // In the order of ALL_COLUMNS (sql/execution-columns.ts), then the statement's own three.
        c.id,
        c.integration,
        c.status,
        c.test,
        c.attempt,
        c.trigger,
        c.record,
        c.queuedAt,
        c.startedAt,
        c.finishedAt,
        c.durationMs,
        c.error,
        c.correlationKey,
        c.versionSha256,
        c.versionCommit,
        c.wakeAt,
        c.retryOf,
        c.cancelRequested,
        c.concurrencyKey,
        !!p.record.queuedAt,
        owner,
        seconds,
      ]),
    );
    this.host.committed();
  }
}
