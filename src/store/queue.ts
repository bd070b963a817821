/**
 * Where accepted executions wait for a worker. The store that holds the executions decides how
 * they are queued (`Store.openQueue`): the embedded SQLite store keeps an in-memory work list next
 * to its rows (one process owns the file); the PostgreSQL store's queue is the `executions` table
 * itself, claimed with leases by every replica (postgres/table-queue.ts). Either way the
 * `executions` row is the one source of truth for an execution's state.
 */
import type { ExecutionRecord, ExecutionStatus } from '../engine/record.js';
import { KeyLines } from './key-lines.js';

/** What is needed to (re)start an execution later: the record is created `queued`. */
export interface NewExecution {
  id: string;
  integration: string;
  trigger: unknown;
  test: boolean;
  /** 1 for a new execution; recovery and replays set their own. */
  attempt?: number;
  /** A retry (`POST …/retry`): the execution it retries; `steps` are the records it resumes from. */
  retryOf?: string;
  /** Step records to resume from (a retry from the failed step: those before it). */
  steps?: ExecutionRecord['steps'];
  queuedAt?: string;
  /** The request's idempotency key (webhook and appEvent triggers), recorded on the execution. */
  idempotencyKey?: string;
  /** The `correlationKey:` value (engine/correlation-key.ts), when it gave one. */
  correlationKey?: string;
  /** The `concurrency:` key (engine/concurrency-key.ts), when it gave one: the queue lines these up. */
  concurrencyKey?: string;
}

export interface QueuedJob {
  id: string;
  integration: string;
  /** The attempt this run will be (1 for new executions, +1 when resumed after a crash). */
  attempt: number;
  /** Resumed after a process or replica stopped under it (not counted against the backlog). */
  recovered?: boolean;
  /**
   * For a resumed execution: its status and attempt as the stopped process left them (the
   * dispatcher fails it instead of running it again when it keeps taking processes down).
   */
  previous?: { status: ExecutionStatus; attempt: number };
  /**
   * A synchronous webhook's run, waited for in this process: it is not in the store yet (nothing
   * was acknowledged); it runs here from memory and is committed once, when it finishes.
   */
  local?: NewExecution;
  /** The execution's `concurrency:` key: at most the integration's limit of one key run or wait at once. */
  concurrencyKey?: string;
  /** Already marked running by the queue's claim (the record as stored): no separate markRunning. */
  record?: ExecutionRecord;
}

/** What the dispatcher tells the queue about its free capacity. */
export interface QueueBinding {
  /** Free worker slots in this process. */
  free(): number;
  /** Free slots of one integration (per-integration limit) in this process. */
  freeFor(integration: string): number;
  /** The most times a process may stop under an execution before it is failed (runtime/dispatch/poison.ts). */
  maxInterruptions(): number;
  /** The integration's `concurrency.limit` (undefined: it has no `concurrency:`, keys are ignored). */
  keyLimit?(integration: string): number | undefined;
}

export interface ExecutionQueue {
  /** Executions waiting (cluster-wide on a shared queue): the backlog limit counts these. */
  readonly size: number;
  /** Waiting executions per integration (metrics, admin). */
  depthByIntegration(): Record<string, number>;
  /** Waiting executions of one integration (its share of the backlog; called on every intake). */
  depthOf(integration: string): number;
  /** Receives the dispatcher's capacity view (a shared queue claims only what fits). */
  bind(binding: QueueBinding): void;
  /** Called whenever jobs became available to `take`. */
  onAvailable(listener: () => void): void;
  /** Makes jobs available; durable ones only after the store committed them. */
  push(jobs: QueuedJob[]): void;
  /** The oldest job whose integration may run now (`canRun`), removed from the queue. */
  take(canRun: (integration: string) => boolean): QueuedJob | undefined;
  /**
   * Starts taking work once the runtime is ready, resuming what a stopped process left queued or
   * running (as attempt + 1; on a shared queue only what no live replica holds). Returns how many.
   */
  recover(): Promise<number>;
  /**
   * A job taken from the queue has ended: `done` (its final state is saved) or `abandoned`
   * (shutdown gave up on it, or its final state could not be saved: it must run again).
   */
  settle(job: QueuedJob, outcome: 'done' | 'abandoned'): void;
  /** Stops taking work and hands back what this process holds. Before `store.close()`. */
  stop(): Promise<void>;
  /**
   * Wakes what is due (`Store.wakeDue`) and makes it available to `take` (this process's lanes, or
   * the shared table with its notification). Returns how many woke. The runtime's waker calls it.
   */
  wake(now: Date): Promise<number>;
  /**
   * An execution ended without a run here (cancelled while queued or waiting): a `concurrency:`
   * slot it held is free now, not at the next check (in-process), and its key's next execution is
   * worth a claim at once (PostgreSQL).
   */
  ended?(record: ExecutionRecord): void;
}

/** Settings of `Store.openQueue` (used by the shared PostgreSQL queue; the in-process one ignores them). */
export interface QueueOptions {
  /** Seconds a replica may go silent before its running executions are taken over (default 60). */
  leaseSec?: number;
  /** Safety poll for work in ms (default 1000), which also refreshes the cluster-wide backlog count; new work wakes replicas at once (NOTIFY). */
  pollMs?: number;
  /** Named as the holder of claimed executions (default host:pid). */
  replicaId?: string;
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/**
 * Jobs waiting in FIFO lanes, one per integration. `take` picks the oldest head among the lanes
 * `canRun` allows, so one busy integration at its limit never blocks the others
 * (O(integrations) per take). Both queues keep their ready jobs in one of these.
 */
export class Lanes {
  private readonly lanes = new Map<string, Array<QueuedJob & { seq: number }>>();
  private seq = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(job: QueuedJob): void {
    let lane = this.lanes.get(job.integration);
    if (!lane) this.lanes.set(job.integration, (lane = []));
    lane.push({ ...job, seq: this.seq++ });
    this.count++;
  }

  take(canRun: (integration: string) => boolean): QueuedJob | undefined {
    let best: Array<QueuedJob & { seq: number }> | undefined;
    for (const [integration, lane] of this.lanes) {
      if (lane.length === 0 || !canRun(integration)) continue;
      if (!best || lane[0]!.seq < best[0]!.seq) best = lane;
    }
    if (!best) return undefined;
    const { seq: _seq, ...job } = best.shift()!;
    if (best.length === 0) this.lanes.delete(job.integration);
    this.count--;
    return job;
  }

  /** The jobs waiting for one integration, oldest first. */
  of(integration: string): readonly QueuedJob[] {
    return this.lanes.get(integration) ?? [];
  }

  entries(): IterableIterator<[string, readonly QueuedJob[]]> {
    return this.lanes.entries();
  }

  /** Empties every lane and returns what was waiting. */
  drain(): QueuedJob[] {
    const all = [...this.lanes.values()].flat().map(({ seq: _seq, ...job }) => job);
    this.lanes.clear();
    this.count = 0;
    return all;
  }
}

/**
 * What the in-process queue reads from its store (`Store`'s methods of the same names): what a
 * previous process left unfinished, what is due to wake, and what per-key concurrency needs.
 */
export interface WakeSource {
  unfinishedExecutions(): Promise<ExecutionRecord[]>;
  wakeDue?(now: Date, limit: number): Promise<ExecutionRecord[]>;
  /** The status an execution's slot depends on (a waiting one keeps its key's slot). */
  getExecution?(id: string): Promise<ExecutionRecord | undefined>;
  /** Waiting executions with a concurrency key: they hold their key's slot across a restart. */
  waitingKeyHolders?(): Promise<Array<{ id: string; integration: string; concurrencyKey: string }>>;
}

/** Rows one wake() makes queued per store call; it calls again while a call comes back full. */
export const WAKE_BATCH = 500;

/** How often slots held by executions not running here are checked (a waiting one cancelled frees its slot). */
const KEY_CHECK_MS = 1000;

/**
 * FIFO per integration; `take` picks the oldest head among integrations with a free slot, so one
 * busy integration at its limit never blocks the others (O(integrations) per take). Executions
 * behind a full `concurrency:` key wait in their key's line (key-lines.ts), not in the lanes. The
 * store's rows are the durable copy; `recover` re-reads them after a restart.
 */
export class InProcessQueue implements ExecutionQueue {
  private readonly lanes = new Lanes();
  private readonly listeners: Array<() => void> = [];
  private binding?: QueueBinding;
  private readonly lines = new KeyLines<QueuedJob>((integration) => this.binding?.keyLimit?.(integration));
  /** Taken and not settled yet (running here). */
  private readonly taken = new Set<string>();
  private timer?: NodeJS.Timeout;
  private checking = false;

  /**
   * `store`: where recover() finds what a previous process left unfinished, and wake() what is due
   * (none: nothing).
   */
  constructor(private readonly store?: WakeSource) {}

  get size(): number {
    return this.lanes.size + this.lines.waiting;
  }

  bind(binding: QueueBinding): void {
    // Push-based: the dispatcher pulls with take() when it has room; keys need its limits.
    this.binding = binding;
  }

  push(jobs: QueuedJob[]): void {
    for (const job of jobs) if (this.lines.admit(job)) this.lanes.push(job);
    for (const l of this.listeners) l();
  }

  take(canRun: (integration: string) => boolean): QueuedJob | undefined {
    const job = this.lanes.take(canRun);
    if (job && this.lines.holds(job.id)) this.taken.add(job.id);
    return job;
  }

  onAvailable(listener: () => void): void {
    this.listeners.push(listener);
  }

  depthByIntegration(): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries([...this.lanes.entries()].map(([k, v]) => [k, v.length]));
    if (this.lines.waiting) for (const [name, n] of Object.entries(this.lines.waitingBy())) out[name] = (out[name] ?? 0) + n;
    return out;
  }

  depthOf(integration: string): number {
    return this.lanes.of(integration).length + (this.lines.waiting ? this.lines.waitingOf(integration) : 0);
  }

  /** How many executions are ahead of a queued one in its key's line (undefined: it is not held back). */
  aheadInLine(id: string): number | undefined {
    return this.lines.ahead(id);
  }

  /**
   * Every execution a previous process left queued or running resumes as attempt + 1:
   * `$execution.attempt > 1` tells a step it may be running after a crash, whether the previous
   * process had started it or not (at-least-once). Waiting ones with a key hold their slots first.
   */
  async recover(): Promise<number> {
    for (const w of (await this.store?.waitingKeyHolders?.()) ?? []) {
      const line = this.lines.lineFor(w);
      if (line !== undefined) this.lines.hold(line, w.id);
    }
    this.timer = setInterval(() => void this.checkHolders(), KEY_CHECK_MS);
    this.timer.unref();
    const unfinished = (await this.store?.unfinishedExecutions()) ?? [];
    if (unfinished.length === 0) return 0;
    this.push(
      unfinished.map((r) => ({
        id: r.id,
        integration: r.integration,
        attempt: r.attempt + 1,
        recovered: true,
        previous: { status: r.status, attempt: r.attempt },
        ...(r.concurrencyKey !== undefined ? { concurrencyKey: r.concurrencyKey } : {}),
      })),
    );
    return unfinished.length;
  }

  /**
   * The run ended. A key's slot is freed unless the execution still holds it: it now waits
   * (core.wait, a callback) and keeps its place in the line until it ends — when it wakes it
   * re-enters as the holder it still is (KeyLines recognises it by id), never behind itself — or
   * the waker already woke it before this read (queued or running again: that run settles it). A
   * run given up at shutdown keeps it too.
   */
  settle(job: QueuedJob, outcome: 'done' | 'abandoned'): void {
    this.taken.delete(job.id);
    if (outcome === 'abandoned' || !this.lines.holds(job.id)) return;
    if (!this.store?.getExecution) {
      this.release(job.id);
      return;
    }
    void this.store.getExecution(job.id).then(
      (r) => {
        if (!holdsSlot(r?.status)) this.release(job.id);
      },
      () => this.release(job.id),
    );
  }

  /**
   * What is due wakes in the store (committed `queued`), then joins the lanes as the same attempt:
   * a wake-up is not a crash. A process stopping between the two leaves them queued in the store,
   * and the next start's recover() resumes them.
   */
  async wake(now: Date): Promise<number> {
    if (!this.store?.wakeDue) return 0;
    let total = 0;
    for (;;) {
      const woke = await this.store.wakeDue(now, WAKE_BATCH);
      if (woke.length)
        this.push(
          woke.map((r) => ({
            id: r.id,
            integration: r.integration,
            attempt: r.attempt,
            // A holder re-enters by its id; one that waited without a slot (no limit then) lines up by its key.
            ...(r.concurrencyKey !== undefined ? { concurrencyKey: r.concurrencyKey } : {}),
          })),
        );
      total += woke.length;
      if (woke.length < WAKE_BATCH) return total;
    }
  }

  ended(record: ExecutionRecord): void {
    if (!this.taken.has(record.id)) this.release(record.id);
  }

  async stop(): Promise<void> {
    // Waiting jobs stay recorded in the store; the next start resumes them.
    clearInterval(this.timer);
  }

  private release(id: string): void {
    const ready = this.lines.release(id);
    if (ready.length === 0) return;
    for (const job of ready) this.lanes.push(job);
    for (const l of this.listeners) l();
  }

  /**
   * Slots held by executions not running here (waiting ones) in front of parked jobs: one cancelled
   * or failed while waiting ended without a run here, so its slot is freed by this check.
   */
  private async checkHolders(): Promise<void> {
    if (this.checking || !this.store?.getExecution) return;
    this.checking = true;
    try {
      const ids = this.lines
        .blockingHolders()
        .filter((id) => !this.taken.has(id))
        .slice(0, 200);
      for (const id of ids) {
        const r = await this.store.getExecution(id);
        if (!holdsSlot(r?.status) && !this.taken.has(id)) this.release(id);
      }
    } catch {
      // The next check tries again.
    } finally {
      this.checking = false;
    }
  }
}

/** Whether an execution in this status still holds its key's slot: it has not ended. */
function holdsSlot(status: ExecutionStatus | undefined): boolean {
  return status === 'queued' || status === 'running' || status === 'waiting';
}
