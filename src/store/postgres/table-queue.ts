/**
 * The execution queue of a PostgreSQL cluster (several `hcm-runner serve` replicas on one
 * database) is the `executions` table itself: one source of truth, no second job store.
 *
 * - **Enqueue** is the row insert; the same statement NOTIFYs the integrations that got work
 *   (postgres-store.ts), delivered at commit.
 * - **Claim**: a replica with free worker slots claims rows in one statement, per integration at
 *   most what its per-integration limit allows (`FOR UPDATE SKIP LOCKED`, so replicas never wait
 *   on each other). The claim marks them running with a lease (`claimed_by`, `lease_until`): it is
 *   the markRunning of those executions, folded into one commit for the whole batch.
 * - **Leases** are renewed every lease/3 while the replica holds the executions. A replica that is
 *   killed stops renewing; once its leases have run out, the rows are claimable again and another
 *   replica takes them over as attempt + 1 (at-least-once). One that was interrupted too often is
 *   handed to the dispatcher as poison (failed, not run: runtime/dispatch/poison.ts).
 * - **Wake-ups**: LISTEN on the schema's channel; a slow poll (default 1 s) is the fallback, and it
 *   also refreshes the cluster-wide backlog counts and finds leases that ran out.
 *
 * Synchronous webhooks' runs never reach the table before they finish (dispatcher.submit): they
 * wait in a local lane here, so they always run on the replica holding the HTTP request.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { PoolClient } from 'pg';
import type { ExecutionRecord } from '../../engine/record.js';
import { runningRecord } from '../execution-states.js';
import { recordFromRow } from '../execution-rows.js';
import { Lanes, WAKE_BATCH, type ExecutionQueue, type QueueBinding, type QueuedJob, type QueueOptions } from '../queue.js';
import { iso } from '../timestamps.js';
import { listen, queuePlans, unlisten } from '../sql/postgres-plans.js';
import { quoteIdent } from './migrations.js';
import { prepared } from './prepared.js';

/** What the queue needs of the PostgreSQL store. */
export interface TableQueueHost {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** Store.wakeDue: due waiting rows made queued, once cluster-wide, with the channel's NOTIFY. */
  wakeDue(now: Date, limit: number): Promise<ExecutionRecord[]>;
}

export const DEFAULT_LEASE_SEC = 60;

/** The LISTEN/NOTIFY channel of a schema (identifiers are at most 63 bytes). */
export function channelFor(schema: string): string {
  const name = `hcm_exec_${schema}`;
  return name.length <= 63 ? name : `hcm_exec_${createHash('sha1').update(schema).digest('hex')}`;
}

export function defaultReplicaId(): string {
  return `${hostname()}:${process.pid}`;
}

interface ClaimRow {
  id: string;
  integration: string;
  status: string;
  test: boolean;
  attempt: number;
  trigger: unknown;
  record: unknown;
  queued_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  was: 'queued' | 'running';
  was_attempt: number;
  concurrency_key: string | null;
}

export class TableQueue implements ExecutionQueue {
  private readonly pool: pg.Pool;
  private readonly host: TableQueueHost;
  /** The queue's statements on this schema's executions table. */
  private readonly sql: ReturnType<typeof queuePlans>;
  private readonly channel: string;
  private readonly leaseSec: number;
  private readonly pollMs: number;
  private readonly owner: string;
  private readonly logger?: QueueOptions['logger'];
  private binding: QueueBinding = { free: () => 0, freeFor: () => 0, maxInterruptions: () => 3 };
  private readonly listeners: Array<() => void> = [];
  /** Jobs ready to be taken: claimed here, or local (synchronous) ones. */
  private readonly lanes = new Lanes();
  private localWaiting = 0;
  /** Jobs taken and running here, by execution id (their leases are renewed). */
  private readonly held = new Map<string, QueuedJob>();
  /**
   * Integrations that may have claimable rows (NOTIFY payloads, the poll, partial claims), each
   * with a count of the hints received: a claim that comes back short forgets an integration only
   * if no new hint arrived while its statement ran (else the row announced meanwhile, committed
   * after the claim's snapshot, would wait for the next poll).
   */
  private readonly hinted = new Map<string, number>();
  /** Cluster-wide queued counts (from the poll, adjusted locally in between). */
  private queued = { total: 0, by: {} as Record<string, number> };
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly pendingOps = new Set<Promise<unknown>>();
  private listenClient?: PoolClient;
  private kickScheduled = false;
  private cycling = false;
  private cycleAgain = false;
  private active = false;
  private stopped = false;

  constructor(host: TableQueueHost, opts: QueueOptions & { owner: string }) {
    this.pool = host.pool;
    this.host = host;
    this.sql = queuePlans(`${quoteIdent(host.schema)}.executions`);
    this.channel = channelFor(host.schema);
    this.leaseSec = Math.max(1, opts.leaseSec ?? DEFAULT_LEASE_SEC);
    this.pollMs = Math.max(10, opts.pollMs ?? 1000);
    this.owner = opts.owner;
    this.logger = opts.logger;
  }

  // ExecutionQueue -----------------------------------------------------------------------------

  /** Queued executions cluster-wide (at most a poll interval old) plus local synchronous ones. */
  get size(): number {
    return this.queued.total + this.localWaiting;
  }

  depthByIntegration(): Record<string, number> {
    const out = { ...this.queued.by };
    for (const [integration, lane] of this.lanes.entries()) for (const j of lane) if (j.local) out[integration] = (out[integration] ?? 0) + 1;
    return out;
  }

  depthOf(integration: string): number {
    let local = 0;
    for (const j of this.lanes.of(integration)) if (j.local) local++;
    return (this.queued.by[integration] ?? 0) + local;
  }

  bind(binding: QueueBinding): void {
    this.binding = binding;
  }

  onAvailable(listener: () => void): void {
    this.listeners.push(listener);
  }

  push(jobs: QueuedJob[]): void {
    let local = false;
    for (const job of jobs) {
      if (job.local) {
        this.lanes.push(job);
        this.localWaiting++;
        local = true;
        continue;
      }
      // Committed rows: count them until the next poll, and claim them (here or anywhere).
      this.queued.total++;
      this.queued.by[job.integration] = (this.queued.by[job.integration] ?? 0) + 1;
      this.hint(job.integration);
    }
    if (local) this.notify();
    if (jobs.some((j) => !j.local)) this.kick();
  }

  take(canRun: (integration: string) => boolean): QueuedJob | undefined {
    const job = this.lanes.take(canRun);
    if (!job) return undefined;
    if (job.local) this.localWaiting--;
    this.held.set(job.id, job);
    return job;
  }

  settle(job: QueuedJob, outcome: 'done' | 'abandoned'): void {
    if (!this.held.delete(job.id)) return;
    // Its key's next execution may be claimable now: no notification says so, so look at once.
    if (job.concurrencyKey !== undefined) this.hint(job.integration);
    // Handed back: its lease ends now, so another replica (or this one) takes it over at once.
    if (outcome === 'abandoned' && !this.stopped) this.track(this.expire([job.id]));
    this.kick();
  }

  /**
   * Due waiting rows become queued rows (once, whichever replica's waker gets them); every
   * replica's claim then takes them like any queued row, at the same attempt (the claim adds one
   * only to rows it takes over from a running holder). Counted and hinted here at once; the
   * statement's NOTIFY tells the other replicas.
   */
  async wake(now: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const woke = await this.host.wakeDue(now, WAKE_BATCH);
      if (woke.length) this.push(woke.map((r) => ({ id: r.id, integration: r.integration, attempt: r.attempt })));
      total += woke.length;
      if (woke.length < WAKE_BATCH) return total;
    }
  }

  ended(record: ExecutionRecord): void {
    // Its key's next row may be claimable now: look at once rather than at the next poll.
    if (record.concurrencyKey === undefined || this.stopped) return;
    this.hint(record.integration);
    this.kick();
  }

  async recover(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(this.sql.countExpired);
    this.active = true;
    await this.listen();
    await this.poll();
    this.every(this.pollMs, () => this.poll());
    this.every((this.leaseSec * 1000) / 3, () => this.renew());
    this.kick();
    return rows[0]!.n;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    const c = this.listenClient;
    this.listenClient = undefined;
    if (c) {
      await c.query(unlisten(quoteIdent(this.channel))).catch(() => undefined);
      c.release();
    }
    await Promise.allSettled([...this.pendingOps]);
    // Claimed but never started: back to how they were. Still running (past the shutdown grace):
    // their leases end now and another replica takes them over.
    const unstarted = this.lanes.drain().filter((j) => !j.local);
    const running = [...this.held.values()].map((j) => j.id);
    this.held.clear();
    try {
      if (unstarted.length) {
        await this.pool.query(this.sql.handBack, [
          unstarted.map((j) => j.id),
          unstarted.map((j) => j.previous?.status ?? 'queued'),
          unstarted.map((j) => j.previous?.attempt ?? j.attempt),
          this.owner,
        ]);
      }
      if (running.length) await this.expire(running);
      if (unstarted.length + running.length)
        this.logger?.info({ count: unstarted.length + running.length }, 'handed unfinished executions back to the cluster');
    } catch (err) {
      this.logger?.warn({ err: (err as Error).message }, 'could not hand executions back; they are taken over when their leases run out');
    }
  }

  // Claiming -----------------------------------------------------------------------------------

  private hint(integration: string): void {
    this.hinted.set(integration, (this.hinted.get(integration) ?? 0) + 1);
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }

  private readyFor(integration: string): number {
    let n = 0;
    for (const j of this.lanes.of(integration)) if (!j.local) n++;
    return n;
  }

  /** Schedules a claim cycle (coalesced within the tick). */
  private kick(): void {
    if (!this.active || this.stopped || this.kickScheduled) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      // stop() waits for a claim in flight, so what it claims is handed back, not left to its lease.
      const cycle = this.cycle();
      this.pendingOps.add(cycle);
      void cycle.finally(() => this.pendingOps.delete(cycle));
    });
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
        let room = this.binding.free() - this.lanes.size;
        if (this.stopped || room <= 0 || this.hinted.size === 0) break;
        // Random order: with few free slots, no integration always comes first.
        const names = [...this.hinted.keys()];
        for (let i = names.length - 1; i > 0; i--) {
          const j = Math.floor(Math.random() * (i + 1));
          [names[i], names[j]] = [names[j]!, names[i]!];
        }
        const caps: Array<[string, number]> = [];
        for (const name of names) {
          if (room <= 0) break;
          const n = Math.min(room, this.binding.freeFor(name) - this.readyFor(name));
          if (n <= 0) continue;
          caps.push([name, n]);
          room -= n;
        }
        if (caps.length === 0) break;
        const hintsBefore = caps.map(([name]) => this.hinted.get(name));
        const rows = await this.claim(caps);
        const got = new Map<string, number>();
        for (const r of rows) got.set(r.integration, (got.get(r.integration) ?? 0) + 1);
        // An integration that gave less than asked has nothing more to claim until told otherwise —
        // unless it was told otherwise while the claim ran: then it is claimed again in this cycle.
        caps.forEach(([name, n], i) => {
          if ((got.get(name) ?? 0) >= n) return;
          if (this.hinted.get(name) === hintsBefore[i]) this.hinted.delete(name);
          else this.cycleAgain = true;
        });
        // Accepted even when stopping: stop() drains them and hands them back.
        for (const r of rows) this.accept(r);
        if (this.stopped) break;
        if (rows.length) {
          this.notify();
          this.cycleAgain = true;
        }
      } while (this.cycleAgain && !this.stopped);
    } catch (err) {
      if (!this.stopped) this.logger?.warn({ err: (err as Error).message }, 'claiming queued executions failed; retrying');
    } finally {
      this.cycling = false;
    }
  }

  /** One statement claims up to `n` rows of each integration, oldest first, skipping rows others lock. */
  private async claim(caps: Array<[string, number]>): Promise<ClaimRow[]> {
    const { rows } = await this.pool.query<ClaimRow>(
      prepared(this.sql.claim, [
        caps.map((c) => c[0]),
        caps.map((c) => c[1]),
        this.binding.maxInterruptions(),
        this.owner,
        this.leaseSec,
        caps.map((c) => this.binding.keyLimit?.(c[0]) ?? 0),
      ]),
    );
    return rows;
  }

  private accept(row: ClaimRow): void {
    const resumed = row.was === 'running';
    if (!resumed && this.queued.by[row.integration]) {
      this.queued.total = Math.max(0, this.queued.total - 1);
      this.queued.by[row.integration]!--;
    }
    const stored = recordFromRow(row, (v) => v);
    const job: QueuedJob = {
      id: row.id,
      integration: row.integration,
      attempt: row.attempt,
      ...(row.concurrency_key != null ? { concurrencyKey: row.concurrency_key } : {}),
      // Poison (resumed too often) is recognised by the dispatcher from `previous`; its record is left as it was.
      record:
        resumed && row.attempt === row.was_attempt ? stored : runningRecord(stored, row.attempt, iso(row.started_at) ?? new Date().toISOString()),
      ...(resumed ? { recovered: true, previous: { status: 'running' as const, attempt: row.was_attempt } } : {}),
    };
    if (resumed)
      this.logger?.warn(
        { executionId: row.id, integration: row.integration, attempt: row.attempt },
        'taking over an execution whose replica stopped while running it',
      );
    this.lanes.push(job);
  }

  // Leases, polling, notifications --------------------------------------------------------------

  /**
   * Renews the lease of every execution this replica runs, and of those it claimed that still wait
   * for a slot (a synchronous run can take the slot a claim counted on): a lease running out under
   * a waiting job would let another replica run it too.
   */
  private async renew(): Promise<void> {
    const held = [...this.held.values()];
    const ids = held.map((j) => j.id);
    for (const [, lane] of this.lanes.entries()) for (const j of lane) if (!j.local) ids.push(j.id);
    if (ids.length === 0) return;
    const { rows } = await this.pool.query<{ id: string }>(this.sql.renew, [ids, this.owner, this.leaseSec]);
    const alive = new Set(rows.map((r) => r.id));
    for (const j of held) {
      // A synchronous run is in the table only once it was made durable.
      if (!alive.has(j.id) && !j.local && this.held.has(j.id)) {
        this.logger?.warn(
          { executionId: j.id },
          'lost the lease of a running execution (this replica was unresponsive); another replica may run it too',
        );
      }
    }
  }

  private async expire(ids: string[]): Promise<void> {
    await this.pool.query(this.sql.expire, [ids, this.owner]);
  }

  /**
   * The fallback poll: the cluster-wide backlog per integration, and which integrations have
   * claimable rows (queued, or running under a lease that ran out).
   */
  private async poll(): Promise<void> {
    const { rows } = await this.pool.query<{ integration: string; queued: number; claimable: number }>(this.sql.poll);
    const by: Record<string, number> = {};
    let total = 0;
    for (const r of rows) {
      if (r.queued) {
        by[r.integration] = r.queued;
        total += r.queued;
      }
      if (r.claimable) this.hint(r.integration);
    }
    this.queued = { total, by };
    if (this.hinted.size) this.kick();
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    let c: PoolClient | undefined;
    try {
      c = await this.pool.connect();
      const client = c;
      client.on('notification', (msg) => {
        for (const name of (msg.payload ?? '').split('\n')) if (name) this.hint(name);
        if (!msg.payload) void this.poll().catch(() => undefined);
        this.kick();
      });
      client.on('error', () => {
        if (this.listenClient !== client) return;
        this.listenClient = undefined;
        client.release(true);
        if (!this.stopped) setTimeout(() => void this.listen(), 1000).unref();
      });
      await client.query(listen(quoteIdent(this.channel)));
      this.listenClient = client;
    } catch (err) {
      if (c && this.listenClient !== c) c.release(true);
      this.logger?.warn({ err: (err as Error).message }, 'cannot listen for new executions; polling only, retrying');
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
          if (!this.stopped) this.logger?.warn({ err: err.message }, 'execution queue housekeeping failed; retrying');
        })
        .finally(() => (busy = false));
    }, ms);
    t.unref();
    this.timers.push(t);
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: Error) =>
      this.logger?.warn({ err: err.message }, 'could not hand an execution back; it is taken over when its lease runs out'),
    );
    this.pendingOps.add(q);
    void q.finally(() => this.pendingOps.delete(q));
  }
}
