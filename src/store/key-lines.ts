/**
 * Per-key concurrency in one process (the in-process queue of the SQLite store; docs/authoring.md
 * "Per-key concurrency"): executions with one `concurrency:` key hold at most `limit` slots of
 * its line — from the moment they are ready to be taken, through their run and any wait, until they
 * end — and the rest wait behind them in acceptance order. Only a line's head ever moves, so a
 * full line costs nothing per take: its later executions are not in the ready lanes at all.
 * (PostgreSQL does the same cluster-wide in its claim: sql/postgres-plans.ts.)
 */
/** What a line needs of a queued job (queue.ts QueuedJob). */
export interface LineJob {
  id: string;
  integration: string;
  concurrencyKey?: string;
}

export class KeyLines<QueuedJob extends LineJob> {
  /** Line (integration + key) → the executions holding its slots. */
  private readonly holders = new Map<string, Set<string>>();
  /** Execution → the line whose slot it holds (a job woken without its key still finds it). */
  private readonly lineOf = new Map<string, string>();
  /** Line → the jobs waiting for a slot, oldest first. */
  private readonly parked = new Map<string, QueuedJob[]>();
  private parkedCount = 0;

  /** `limitOf`: the integration's `concurrency.limit` now (undefined: no limit, keys ignored). */
  constructor(private readonly limitOf: (integration: string) => number | undefined) {}

  /** Jobs parked behind full lines. */
  get waiting(): number {
    return this.parkedCount;
  }

  /** Parked jobs per integration. */
  waitingBy(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [line, jobs] of this.parked) out[integrationOf(line)] = (out[integrationOf(line)] ?? 0) + jobs.length;
    return out;
  }

  /** Parked jobs of one integration. */
  waitingOf(integration: string): number {
    let n = 0;
    for (const [line, jobs] of this.parked) if (integrationOf(line) === integration) n += jobs.length;
    return n;
  }

  /**
   * Whether `job` may be made ready now: it has no key, or it already holds its slot (woken from
   * a wait, resumed), or its line has room and nobody ahead of it. Otherwise it is parked.
   */
  admit(job: QueuedJob): boolean {
    if (this.lineOf.has(job.id)) return true;
    const line = this.lineFor(job);
    if (line === undefined) return true;
    if ((this.parked.get(line)?.length ?? 0) > 0 || this.heldIn(line) >= this.limitOf(job.integration)!) {
      this.park(line, job);
      return false;
    }
    this.hold(line, job.id);
    return true;
  }

  /** Counts an execution as holding its line's slot (a waiting one found at start). */
  hold(line: string, id: string): void {
    let set = this.holders.get(line);
    if (!set) this.holders.set(line, (set = new Set()));
    set.add(id);
    this.lineOf.set(id, line);
  }

  /** Whether the execution holds a slot. */
  holds(id: string): boolean {
    return this.lineOf.has(id);
  }

  /** Ids holding slots of lines that have jobs parked behind them (those worth checking). */
  blockingHolders(): string[] {
    const out: string[] = [];
    for (const line of this.parked.keys()) for (const id of this.holders.get(line) ?? []) out.push(id);
    return out;
  }

  /** The execution ended: its slot is free. Returns the jobs that got a slot (now ready). */
  release(id: string): QueuedJob[] {
    const line = this.lineOf.get(id);
    if (line === undefined) return [];
    this.lineOf.delete(id);
    const set = this.holders.get(line);
    set?.delete(id);
    if (set?.size === 0) this.holders.delete(line);
    const queue = this.parked.get(line);
    const ready: QueuedJob[] = [];
    while (queue?.length && this.heldIn(line) < (this.limitOf(queue[0]!.integration) ?? Infinity)) {
      const job = queue.shift()!;
      this.parkedCount--;
      this.hold(line, job.id);
      ready.push(job);
    }
    if (queue?.length === 0) this.parked.delete(line);
    return ready;
  }

  /** How many jobs are ahead of a parked one in its line (holders included); undefined if not parked. */
  ahead(id: string): number | undefined {
    for (const [line, jobs] of this.parked) {
      const i = jobs.findIndex((j) => j.id === id);
      if (i >= 0) return i + this.heldIn(line);
    }
    return undefined;
  }

  /** The line a job belongs to (undefined: none — no key, or its integration has no limit now). */
  lineFor(job: Pick<QueuedJob, 'integration' | 'concurrencyKey'>): string | undefined {
    if (job.concurrencyKey === undefined || !this.limitOf(job.integration)) return undefined;
    return `${job.integration}\n${job.concurrencyKey}`;
  }

  private heldIn(line: string): number {
    return this.holders.get(line)?.size ?? 0;
  }

  private park(line: string, job: QueuedJob): void {
    let queue = this.parked.get(line);
    if (!queue) this.parked.set(line, (queue = []));
    queue.push(job);
    this.parkedCount++;
  }
}

function integrationOf(line: string): string {
  return line.slice(0, line.indexOf('\n'));
}
