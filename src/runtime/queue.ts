/**
 * Where accepted executions wait for a worker. The in-process queue below serves the embedded
 * (SQLite) setup: the store row is the durable copy, this is only the in-memory work list.
 * A PostgreSQL/pg-boss queue can implement the same interface (push = publish, take = claim).
 */
export interface QueuedJob {
  id: string;
  integration: string;
  /** The attempt this run will be (1 for new executions, +1 when resumed after a crash). */
  attempt: number;
  /** Resumed after a restart (not counted against the backlog limit). */
  recovered?: boolean;
  /**
   * Someone in this process waits for it (a synchronous webhook): a shared queue should run it
   * here rather than on another replica.
   */
  local?: boolean;
}

/** What the dispatcher tells a pull-based queue about its free capacity. */
export interface QueueBinding {
  /** Free worker slots in this process. */
  free(): number;
  /** Free slots of one integration (per-integration limit) in this process. */
  freeFor(integration: string): number;
  /** A `local` job is running on another replica after all: watch the store for its end. */
  remote(id: string): void;
  /** The most times a replica may stop under an execution before it is failed (poison.ts). */
  maxInterruptions?(): number;
}

export interface ExecutionQueue {
  /** Jobs waiting, not running. */
  readonly size: number;
  /** Makes jobs available; called only after the store committed them. */
  push(jobs: QueuedJob[]): void;
  /** The oldest job whose integration may run now (`canRun`), removed from the queue. */
  take(canRun: (integration: string) => boolean): QueuedJob | undefined;
  /** Called whenever jobs were pushed. */
  onAvailable(listener: () => void): void;
  /** Waiting jobs per integration (metrics, admin). */
  depthByIntegration(): Record<string, number>;
  /** Waiting jobs of one integration (its share of the backlog; called on every intake). */
  depthOf(integration: string): number;

  // Optional: shared (durable, multi-replica) queues such as the PostgreSQL/pg-boss one ---------
  /** Receives the dispatcher's capacity view (a pull-based queue fetches only what fits). */
  bind?(binding: QueueBinding): void;
  /** Called before the store records new executions (e.g. to create per-integration queues). */
  prepare?(jobs: QueuedJob[]): Promise<void>;
  /**
   * Present on queues that survive the process: the dispatcher's recover() calls this instead of
   * re-queuing every unfinished row (which could be running on another replica). Called once the
   * runtime is ready; the queue then starts taking work. Returns how many were resumed.
   */
  recover?(): Promise<number>;
  /**
   * A job taken from the queue has ended: `done` (its final state is saved) or `abandoned`
   * (shutdown gave up on it, or the final state could not be saved: it must run again).
   */
  settle?(job: QueuedJob, outcome: 'done' | 'abandoned'): void;
}

/**
 * FIFO per integration; `take` picks the oldest head among integrations with a free slot, so one
 * busy integration at its limit never blocks the others (O(integrations) per take).
 */
export class InProcessQueue implements ExecutionQueue {
  private readonly lanes = new Map<string, Array<QueuedJob & { seq: number }>>();
  private seq = 0;
  private count = 0;
  private readonly listeners: Array<() => void> = [];

  get size(): number {
    return this.count;
  }

  push(jobs: QueuedJob[]): void {
    for (const job of jobs) {
      let lane = this.lanes.get(job.integration);
      if (!lane) this.lanes.set(job.integration, (lane = []));
      lane.push({ ...job, seq: this.seq++ });
      this.count++;
    }
    for (const l of this.listeners) l();
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

  onAvailable(listener: () => void): void {
    this.listeners.push(listener);
  }

  depthByIntegration(): Record<string, number> {
    return Object.fromEntries([...this.lanes].map(([k, v]) => [k, v.length]));
  }

  depthOf(integration: string): number {
    return this.lanes.get(integration)?.length ?? 0;
  }
}
