/**
 * The execution queue of a PostgreSQL cluster (several `hcm-runner serve` replicas on one
 * database): pg-boss jobs, one pg-boss queue per integration (`hcm-exec.<integration>`) in the
 * schema `<store schema>_boss`.
 *
 * Durability: the store runs our enqueue hook inside the transaction that inserts execution rows
 * (webhooks, replays, polls' commitPoll …), so a row and its job commit together — a webhook is
 * answered only after that commit. A periodic sweep (and one at start) gives a job to any queued or
 * running execution that has no live job (e.g. its job ran out of retries), under an advisory lock.
 *
 * Taking work: each replica pulls (pg-boss fetch) only as many jobs as its free worker slots allow,
 * per integration, woken by LISTEN/NOTIFY on new jobs, by finished runs and by a slow poll. A job
 * fetched is `active` with a lease (`expire_in`); the replica holding it renews the lease by a
 * heartbeat. When a replica dies its heartbeats stop, pg-boss maintenance (any replica) moves the
 * job back to `retry` after the lease, and another replica takes it: an execution found `running`
 * is resumed as attempt + 1 (at-least-once), one still `queued` keeps its attempt.
 *
 * A synchronous webhook's execution is kept on the replica that holds the HTTP request: its job
 * is inserted with a short start delay (invisible to other replicas) and claimed here by id.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { quoteIdent } from '../store/postgres/migrations.js';
import type { PostgresStore } from '../store/postgres/postgres-store.js';
import type { NewExecution } from '../store/types.js';
import { DEFAULT_MAX_INTERRUPTIONS, interruptedTooOften, poisonRecord } from './poison.js';
import type { ExecutionQueue, QueueBinding, QueuedJob } from './queue.js';

export interface PgQueueOptions {
  store: PostgresStore;
  /** pg-boss schema (default `<store schema>_boss`). */
  bossSchema?: string;
  /** Seconds a replica may go silent before its running jobs are given to another (default 60). */
  leaseSec?: number;
  /** pg-boss maintenance (expiry of dead replicas' jobs) every … seconds (default lease / 4). */
  maintenanceSec?: number;
  /** Safety poll for work (default 1000 ms); new jobs wake replicas at once through NOTIFY. */
  pollMs?: number;
  /** The backlog count (cluster-wide queued executions) is refreshed every … ms (default 1000). */
  countMs?: number;
  /** Orphan sweep interval (default 60 s). */
  sweepMs?: number;
  /**
   * An execution whose replica stopped under it this many times is failed instead of run again
   * (default: the dispatcher's `maxInterruptions`, 3; see poison.ts).
   */
  maxAttempts?: number;
  /** How long a synchronous webhook's job stays reserved for its replica (default 60 s). */
  localHoldSec?: number;
  logger?: Logger;
}

interface JobData {
  executionId: string;
  integration: string;
}

interface Held extends QueuedJob {
  jobId: string;
  queue: string;
  seq: number;
  running: boolean;
}

const PREFIX = 'hcm-exec.';
export const queueName = (integration: string): string => `${PREFIX}${integration}`;

/** `<schema>_boss`, or a hashed name when that would be too long for pg-boss (50 characters). */
export function defaultBossSchema(storeSchema: string): string {
  const name = `${storeSchema}_boss`;
  return name.length <= 50 ? name : `hcm_boss_${createHash('sha1').update(storeSchema).digest('hex').slice(0, 32)}`;
}

function channelFor(schema: string): string {
  const name = `hcm_exec_${schema}`;
  return name.length <= 63 ? name : `hcm_exec_${createHash('sha1').update(schema).digest('hex')}`;
}

export class PgQueue implements ExecutionQueue {
  readonly boss: PgBoss;
  readonly bossSchema: string;
  private readonly store: PostgresStore;
  private readonly b: string;
  private readonly s: string;
  private readonly channel: string;
  private readonly logger?: Logger;
  private readonly leaseSec: number;
  private readonly opts: PgQueueOptions;
  private readonly maxAttempts?: number;
  private binding: QueueBinding = { free: () => 0, freeFor: () => 0, remote: () => undefined };
  private readonly listeners: Array<() => void> = [];
  /** Jobs this replica holds (fetched, waiting or running), by execution id. */
  private readonly held = new Map<string, Held>();
  private readonly lanes = new Map<string, Held[]>();
  private waiting = 0;
  private seq = 0;
  /** Queues known to exist (created outside a transaction). */
  private readonly queues = new Set<string>();
  private readonly creating = new Map<string, Promise<void>>();
  private readonly queueLockKey: string;
  /** Execution ids whose caller waits in this process → the job id the hook gave them. */
  private readonly localIds = new Map<string, number>();
  private readonly localJobs = new Map<string, string>();
  private queued = { total: 0, by: {} as Record<string, number> };
  private readonly pendingOps = new Set<Promise<unknown>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private listenClient?: PoolClient;
  private kickTimer?: NodeJS.Timeout;
  private cycling = false;
  private cycleAgain = false;
  private active = false;
  private stopped = false;

  private constructor(opts: PgQueueOptions) {
    this.opts = opts;
    this.store = opts.store;
    this.logger = opts.logger;
    this.leaseSec = Math.max(2, Math.round(opts.leaseSec ?? 60));
    this.maxAttempts = opts.maxAttempts;
    this.bossSchema = opts.bossSchema ?? defaultBossSchema(opts.store.schema);
    this.b = quoteIdent(this.bossSchema);
    this.s = quoteIdent(opts.store.schema);
    this.channel = channelFor(opts.store.schema);
    this.queueLockKey = `hcm-runner:boss-queues:${this.bossSchema}`;
    const pool = opts.store.pool;
    this.boss = new PgBoss({
      // One pool per replica: pg-boss shares the store's.
      db: { executeSql: (text: string, values: unknown[]) => pool.query(text, values) },
      schema: this.bossSchema,
      schedule: false,
      supervise: true,
      migrate: true,
      maintenanceIntervalSeconds: Math.max(1, Math.round(opts.maintenanceSec ?? this.leaseSec / 4)),
      archiveCompletedAfterSeconds: 3600,
    });
    this.boss.on('error', (err) => this.logger?.warn({ err: err.message }, 'job queue maintenance failed; retrying'));
  }

  /** Installs pg-boss (migrations in its own schema) and hooks into the store's enqueue. */
  static async start(opts: PgQueueOptions): Promise<PgQueue> {
    const q = new PgQueue(opts);
    // Replicas starting together would race creating the pg-boss schema: one at a time.
    const lock = await opts.store.pool.connect();
    const key = `hcm-runner:boss-install:${q.bossSchema}`;
    try {
      await lock.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
      await q.boss.start();
    } finally {
      await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
      lock.release();
    }
    opts.store.setEnqueueHook((executions, client) => q.insertJobs(executions, client));
    await q.refreshCounts();
    q.every(opts.countMs ?? 1000, () => q.refreshCounts());
    await q.listen();
    return q;
  }

  // ExecutionQueue -----------------------------------------------------------------------------

  /** Queued executions cluster-wide (from the database, at most ~1 s old): the backlog limit. */
  get size(): number {
    return this.queued.total;
  }

  depthByIntegration(): Record<string, number> {
    return { ...this.queued.by };
  }

  depthOf(integration: string): number {
    return this.queued.by[integration] ?? 0;
  }

  bind(binding: QueueBinding): void {
    this.binding = binding;
  }

  onAvailable(listener: () => void): void {
    this.listeners.push(listener);
  }

  async prepare(jobs: QueuedJob[]): Promise<void> {
    await this.ensureQueues([...new Set(jobs.map((j) => j.integration))]);
    const now = Date.now();
    for (const [id, at] of this.localIds) if (now - at > 300_000) this.localIds.delete(id);
    for (const j of jobs) if (j.local) this.localIds.set(j.id, now);
  }

  /** After the commit: jobs exist in pg-boss already; claim the local ones, wake the fetch loop. */
  push(jobs: QueuedJob[]): void {
    let others = 0;
    for (const job of jobs) {
      this.queued.total++;
      this.queued.by[job.integration] = (this.queued.by[job.integration] ?? 0) + 1;
      if (!job.local) {
        others++;
        continue;
      }
      const jobId = this.localJobs.get(job.id);
      this.localJobs.delete(job.id);
      this.localIds.delete(job.id);
      if (!jobId) this.binding.remote(job.id);
      else this.track(this.claimLocal(job, jobId));
    }
    if (others) this.kick();
  }

  take(canRun: (integration: string) => boolean): QueuedJob | undefined {
    let best: Held[] | undefined;
    for (const [integration, lane] of this.lanes) {
      if (lane.length === 0 || !canRun(integration)) continue;
      if (!best || lane[0]!.seq < best[0]!.seq) best = lane;
    }
    if (!best) return undefined;
    const job = best.shift()!;
    if (best.length === 0) this.lanes.delete(job.integration);
    this.waiting--;
    job.running = true;
    if (this.queued.by[job.integration]) {
      this.queued.total = Math.max(0, this.queued.total - 1);
      this.queued.by[job.integration]!--;
    }
    return job;
  }

  settle(job: QueuedJob, outcome: 'done' | 'abandoned'): void {
    const held = this.held.get(job.id);
    if (!held || this.stopped) return;
    this.held.delete(job.id);
    const op =
      outcome === 'done'
        ? this.boss.complete(held.queue, held.jobId)
        : this.boss.fail(held.queue, held.jobId, { message: 'the run was interrupted; another attempt follows' });
    this.track(op.catch((err: Error) => this.logger?.warn({ executionId: job.id, err: err.message }, 'could not settle the queue job (it will expire and run again)')));
    this.kick();
  }

  async recover(): Promise<number> {
    this.active = true;
    const n = await this.sweep();
    this.every(this.opts.pollMs ?? 1000, () => Promise.resolve(this.kick()));
    this.every((this.leaseSec * 1000) / 3, () => this.heartbeat());
    this.every(this.opts.sweepMs ?? 60_000, () => this.sweep().then(() => undefined));
    this.kick();
    return n;
  }

  /**
   * Stops fetching, hands back every job still held (waiting, or running past the shutdown
   * grace: other replicas run them again), waits for pending queue writes. Before store.close().
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.kickTimer);
    const c = this.listenClient;
    this.listenClient = undefined;
    if (c) {
      await c.query(`UNLISTEN ${quoteIdent(this.channel)}`).catch(() => undefined);
      c.release();
    }
    await Promise.allSettled([...this.pendingOps]);
    const byQueue = new Map<string, string[]>();
    for (const h of this.held.values()) byQueue.set(h.queue, [...(byQueue.get(h.queue) ?? []), h.jobId]);
    this.held.clear();
    this.lanes.clear();
    this.waiting = 0;
    for (const [queue, ids] of byQueue) {
      await this.boss.fail(queue, ids).catch(() => undefined);
    }
    if (byQueue.size) this.logger?.info({ count: [...byQueue.values()].flat().length }, 'handed unfinished queue jobs back to the cluster');
    this.opts.store.setEnqueueHook(undefined);
    await this.boss.stop({ graceful: false, close: false, wait: true }).catch(() => undefined);
  }

  // Enqueue (inside the store's transaction) ----------------------------------------------------

  /** Creates the pg-boss queues of these integrations (idempotent; outside any transaction). */
  private async ensureQueues(integrations: string[]): Promise<void> {
    const missing = integrations.map(queueName).filter((n) => !this.queues.has(n));
    if (missing.length === 0) return;
    let p = this.creating.get(missing.join('\n'));
    if (!p) {
      p = (async () => {
        const c = await this.store.pool.connect();
        try {
          await c.query('SELECT pg_advisory_lock(hashtext($1))', [this.queueLockKey]);
          try {
            await this.createMissing(c, missing);
          } finally {
            await c.query('SELECT pg_advisory_unlock(hashtext($1))', [this.queueLockKey]).catch(() => undefined);
          }
        } finally {
          c.release();
        }
        for (const n of missing) this.queues.add(n);
      })().finally(() => this.creating.delete(missing.join('\n')));
      this.creating.set(missing.join('\n'), p);
    }
    await p;
  }

  /**
   * pg-boss queues (table partitions) created concurrently deadlock: callers hold the cluster-wide
   * queue-creation lock (session or transaction advisory lock).
   */
  private async createMissing(c: Pick<PoolClient, 'query'>, names: string[]): Promise<void> {
    const { rows } = await c.query<{ name: string }>(`SELECT name FROM ${this.b}.queue WHERE name = ANY($1)`, [names]);
    const have = new Set(rows.map((r) => r.name));
    for (const name of names) if (!have.has(name)) await c.query(`SELECT ${this.b}.create_queue($1, $2::json)`, [name, JSON.stringify({ policy: 'standard' })]);
  }

  private async insertJobs(executions: Array<Pick<NewExecution, 'id' | 'integration'>>, c: PoolClient): Promise<void> {
    if (executions.length === 0) return;
    const names = [...new Set(executions.map((e) => queueName(e.integration)))];
    const unknown = names.filter((n) => !this.queues.has(n));
    if (unknown.length) {
      // Executions recorded outside submit() (e.g. a poll's commitPoll) for a queue this process has
      // not created: make sure it exists, in this transaction (pg-boss silently drops jobs of a
      // missing queue).
      const { rows } = await c.query<{ name: string }>(`SELECT name FROM ${this.b}.queue WHERE name = ANY($1)`, [unknown]);
      if (rows.length < unknown.length) {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.queueLockKey]);
        await this.createMissing(c, unknown);
      }
    }
    const jobs: PgBoss.JobInsert<JobData>[] = executions.map((e) => {
      const id = randomUUID();
      const local = this.localIds.has(e.id);
      if (local) this.localJobs.set(e.id, id);
      return {
        id,
        name: queueName(e.integration),
        data: { executionId: e.id, integration: e.integration },
        expireInSeconds: this.leaseSec,
        // Attempts are bounded by maxAttempts (the execution's own count), not by pg-boss.
        retryLimit: 1_000_000,
        retryDelay: 0,
        ...(local ? { startAfter: `${this.opts.localHoldSec ?? 60} seconds` } : {}),
      };
    });
    await this.boss.insert(jobs, { db: { executeSql: (text, values) => c.query(text, values) } });
    const { rows } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.b}.job WHERE name = ANY($1) AND id = ANY($2::uuid[])`, [
      names,
      jobs.map((j) => j.id),
    ]);
    if (rows[0]!.n !== jobs.length) throw new Error(`the job queue recorded ${rows[0]!.n} of ${jobs.length} jobs; nothing was accepted`);
    if (jobs.some((j) => !j.startAfter)) await c.query('SELECT pg_notify($1, $2)', [this.channel, '']);
  }

  // Taking work --------------------------------------------------------------------------------

  private room(): number {
    return this.binding.free() - this.waiting;
  }

  private waitingFor(integration: string): number {
    return this.lanes.get(integration)?.length ?? 0;
  }

  /** Schedules a fetch cycle soon (coalesced). */
  private kick(): void {
    if (!this.active || this.stopped || this.kickTimer) return;
    this.kickTimer = setTimeout(() => {
      this.kickTimer = undefined;
      void this.cycle();
    }, 2);
  }

  private async cycle(): Promise<void> {
    if (this.cycling) {
      this.cycleAgain = true;
      return;
    }
    this.cycling = true;
    try {
      do {
        this.cycleAgain = false;
        if (this.stopped || this.room() <= 0) break;
        const { rows } = await this.store.pool.query<{ name: string; n: number }>(
          `SELECT name, count(*)::int AS n FROM ${this.b}.job
           WHERE name LIKE '${PREFIX}%' AND state < 'active' AND start_after < now() GROUP BY name`,
        );
        // Random order: with few free slots, no integration always comes first.
        for (let i = rows.length - 1; i > 0; i--) {
          const j = Math.floor(Math.random() * (i + 1));
          [rows[i], rows[j]] = [rows[j]!, rows[i]!];
        }
        for (const r of rows) {
          if (this.stopped) break;
          const room = this.room();
          if (room <= 0) break;
          const integration = r.name.slice(PREFIX.length);
          const n = Math.min(room, this.binding.freeFor(integration) - this.waitingFor(integration), r.n);
          if (n <= 0) continue;
          const jobs = await this.boss.fetch<JobData>(r.name, { batchSize: n });
          if (jobs.length) await this.accept(integration, r.name, jobs);
        }
      } while (this.cycleAgain && !this.stopped);
    } catch (err) {
      if (!this.stopped) this.logger?.warn({ err: (err as Error).message }, 'fetching queued executions failed; retrying');
    } finally {
      this.cycling = false;
    }
  }

  /** Jobs just fetched: check their executions (finished? resumed?) and hold the runnable ones. */
  private async accept(integration: string, queue: string, jobs: PgBoss.Job<JobData>[]): Promise<void> {
    const { rows } = await this.store.pool.query<{ id: string; status: string; attempt: number }>(
      `SELECT id, status, attempt FROM ${this.s}.executions WHERE id = ANY($1)`,
      [jobs.map((j) => j.data.executionId)],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const finished: string[] = [];
    let added = 0;
    for (const job of jobs) {
      const id = job.data.executionId;
      const row = byId.get(id);
      if (this.stopped) {
        finished.push(job.id);
        continue;
      }
      if (!row || (row.status !== 'queued' && row.status !== 'running') || this.held.has(id)) {
        finished.push(job.id); // ran already (its job outlived it), pruned, or a duplicate
        continue;
      }
      const resumed = row.status === 'running';
      const attempt = resumed ? row.attempt + 1 : row.attempt;
      const limit = this.maxAttempts ?? this.binding.maxInterruptions?.() ?? DEFAULT_MAX_INTERRUPTIONS;
      if (interruptedTooOften(row.status, row.attempt, limit)) {
        await this.giveUp(id, limit);
        finished.push(job.id);
        continue;
      }
      if (resumed) this.logger?.warn({ executionId: id, integration, attempt }, 'resuming an execution whose replica stopped while running it');
      this.hold({ id, integration, attempt, recovered: resumed, jobId: job.id, queue, seq: this.seq++, running: false });
      added++;
    }
    if (finished.length) await this.boss.complete(queue, finished);
    if (added) for (const l of this.listeners) l();
  }

  private hold(h: Held): void {
    this.held.set(h.id, h);
    let lane = this.lanes.get(h.integration);
    if (!lane) this.lanes.set(h.integration, (lane = []));
    lane.push(h);
    this.waiting++;
  }

  /** A synchronous webhook's job: take it here, by id, right after the commit. */
  private async claimLocal(job: QueuedJob, jobId: string): Promise<void> {
    const queue = queueName(job.integration);
    let claimed = false;
    try {
      const { rows } = await this.store.pool.query(
        `UPDATE ${this.b}.job SET state = 'active', started_on = now() WHERE name = $1 AND id = $2 AND state < 'active' RETURNING id`,
        [queue, jobId],
      );
      claimed = rows.length === 1;
    } catch (err) {
      this.logger?.warn({ executionId: job.id, err: (err as Error).message }, 'could not reserve a synchronous run for this replica');
    }
    if (!claimed || this.stopped) {
      this.binding.remote(job.id);
      return;
    }
    this.hold({ ...job, jobId, queue, seq: this.seq++, running: false });
    for (const l of this.listeners) l();
  }

  private async giveUp(id: string, limit: number): Promise<void> {
    const record = await this.store.getExecution(id);
    if (!record) return;
    await this.store.saveExecution(poisonRecord(record, limit));
    this.logger?.error({ executionId: id, attempts: record.attempt }, 'the replica stopped too often while this execution ran; marked failed, not resumed');
  }

  // Leases, counts, sweep, notifications ---------------------------------------------------------

  /** Renews the lease of every job this replica holds. */
  private async heartbeat(): Promise<void> {
    const held = [...this.held.values()];
    if (held.length === 0) return;
    const { rows } = await this.store.pool.query<{ id: string }>(
      `UPDATE ${this.b}.job SET started_on = now() WHERE name = ANY($1) AND id = ANY($2::uuid[]) AND state = 'active' RETURNING id`,
      [[...new Set(held.map((h) => h.queue))], held.map((h) => h.jobId)],
    );
    const alive = new Set(rows.map((r) => r.id));
    for (const h of held) {
      if (!alive.has(h.jobId) && this.held.get(h.id) === h) {
        this.logger?.warn({ executionId: h.id }, 'lost the lease of a queued execution (this replica was unresponsive); another replica may run it too');
        if (!h.running) {
          const lane = this.lanes.get(h.integration);
          const i = lane?.indexOf(h) ?? -1;
          if (i >= 0) (lane!.splice(i, 1), this.waiting--);
          this.held.delete(h.id);
        }
      }
    }
  }

  private async refreshCounts(): Promise<void> {
    const { rows } = await this.store.pool.query<{ integration: string; n: number }>(
      `SELECT integration, count(*)::int AS n FROM ${this.s}.executions WHERE status = 'queued' GROUP BY integration`,
    );
    const by: Record<string, number> = {};
    let total = 0;
    for (const r of rows) (by[r.integration] = r.n), (total += r.n);
    this.queued = { total, by };
  }

  /**
   * Gives a job to every queued/running execution without a live one (created, retry or active):
   * never touches executions a live replica holds. One replica at a time.
   */
  private async sweep(): Promise<number> {
    return this.store.tx(async (c) => {
      const { rows: lock } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok', [`hcm-runner:sweep:${this.store.schema}`]);
      if (!lock[0]!.ok) return 0;
      const { rows } = await c.query<{ id: string; integration: string }>(
        `SELECT e.id, e.integration FROM ${this.s}.executions e
         WHERE e.status IN ('queued', 'running')
           AND NOT EXISTS (SELECT 1 FROM ${this.b}.job j
                           WHERE j.name = $1 || e.integration AND j.data->>'executionId' = e.id AND j.state < 'completed')
         ORDER BY e.queued_at`,
        [PREFIX],
      );
      if (rows.length === 0) return 0;
      await this.insertJobs(rows, c);
      this.logger?.info({ count: rows.length }, 'queued executions without a queue job were queued again');
      return rows.length;
    });
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    let c: PoolClient | undefined;
    try {
      c = await this.store.pool.connect();
      const client = c;
      client.on('notification', () => this.kick());
      client.on('error', () => {
        if (this.listenClient !== client) return;
        this.listenClient = undefined;
        client.release(true);
        if (!this.stopped) setTimeout(() => void this.listen(), 1000).unref();
      });
      await client.query(`LISTEN ${quoteIdent(this.channel)}`);
      this.listenClient = client;
    } catch (err) {
      if (c && this.listenClient !== c) c.release(true);
      this.logger?.warn({ err: (err as Error).message }, 'cannot listen for new jobs; polling only, retrying');
      if (!this.stopped) setTimeout(() => void this.listen(), 1000).unref();
    }
  }

  private every(ms: number, fn: () => Promise<void>): void {
    let busy = false;
    const t = setInterval(() => {
      if (busy || this.stopped) return;
      busy = true;
      fn()
        .catch((err: Error) => {
          if (!this.stopped) this.logger?.warn({ err: err.message }, 'job queue housekeeping failed; retrying');
        })
        .finally(() => (busy = false));
    }, ms);
    t.unref();
    this.timers.push(t);
  }

  private track(p: Promise<unknown>): void {
    this.pendingOps.add(p);
    void p.finally(() => this.pendingOps.delete(p));
  }
}
