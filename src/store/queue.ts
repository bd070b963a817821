/**
 * Where accepted executions wait for a worker. The store that holds the executions decides how
 * they are queued (`Store.openQueue`): the embedded SQLite store keeps an in-memory work list next
 * to its rows (one process owns the file); the PostgreSQL store's queue is the `executions` table
 * itself, claimed with leases by every replica (postgres/table-queue.ts). Either way the
 * `executions` row is the one source of truth for an execution's state.
 */
import type { ExecutionRecord, ExecutionStatus } from '../engine/record.js';

/** What is needed to (re)start an execution later: the record is created `queued`. */
export interface NewExecution {
  id: string;
  integration: string;
  trigger: unknown;
  test: boolean;
  /** 1 for a new execution; recovery and replays set their own. */
  attempt?: number;
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
 * FIFO per integration; `take` picks the oldest head among integrations with a free slot, so one
 * busy integration at its limit never blocks the others (O(integrations) per take). The store's
 * rows are the durable copy; `recover` re-reads them after a restart.
 */
export class InProcessQueue implements ExecutionQueue {
  private readonly lanes = new Lanes();
  private readonly listeners: Array<() => void> = [];

  /** `store`: where recover() finds what a previous process left unfinished (none: nothing). */
  constructor(private readonly store?: { unfinishedExecutions(): Promise<ExecutionRecord[]> }) {}

  get size(): number {
    return this.lanes.size;
  }

  bind(): void {
    // Push-based: the dispatcher pulls with take() when it has room.
  }

  push(jobs: QueuedJob[]): void {
    for (const job of jobs) this.lanes.push(job);
    for (const l of this.listeners) l();
  }

  take(canRun: (integration: string) => boolean): QueuedJob | undefined {
    return this.lanes.take(canRun);
  }

  onAvailable(listener: () => void): void {
    this.listeners.push(listener);
  }

  depthByIntegration(): Record<string, number> {
    return Object.fromEntries([...this.lanes.entries()].map(([k, v]) => [k, v.length]));
  }

  depthOf(integration: string): number {
    return this.lanes.of(integration).length;
  }

  /**
   * Every execution a previous process left queued or running resumes as attempt + 1:
   * `$execution.attempt > 1` tells a step it may be running after a crash, whether the previous
   * process had started it or not (at-least-once).
   */
  async recover(): Promise<number> {
    const unfinished = (await this.store?.unfinishedExecutions()) ?? [];
    if (unfinished.length === 0) return 0;
    this.push(
      unfinished.map((r) => ({
        id: r.id,
        integration: r.integration,
        attempt: r.attempt + 1,
        recovered: true,
        previous: { status: r.status, attempt: r.attempt },
      })),
    );
    return unfinished.length;
  }

  settle(): void {
    // The row is the durable state; nothing is held here.
  }

  async stop(): Promise<void> {
    // Waiting jobs stay recorded in the store; the next start resumes them.
  }
}
