/**
 * Records of the executions running in this process, as they progress: what the API shows for
 * them (a synchronous run is not in the store before it finishes; an async one's row has no
 * progress until it finishes).
 */
import { carryOrigin, type ExecutionRecord } from '../../engine/record.js';
import type { ExecutionFilter, ExecutionSummary, Store } from '../../store/types.js';

export interface LiveRun {
  record: ExecutionRecord;
  /** Whether the store has a row for it (false for a synchronous run until it is made durable). */
  stored: boolean;
  /** Aborted by a cancel (`cancel`): the engine's RunOptions.cancel. */
  readonly cancel: AbortController;
  /** The save of this run in flight (making it durable, a checkpoint): the next save waits for it (checkpoints.ts). */
  inFlight?: Promise<void>;
  /** The one save queued behind `inFlight`; later checkpoints join it. */
  next?: Promise<void>;
}

/**
 * The engine builds its own record from the run's inputs; the idempotency key intake recorded
 * on the execution is carried over to it (the record is the run's own object).
 */
export function keepIdempotencyKey(record: ExecutionRecord, from: ExecutionRecord): void {
  if (from.idempotencyKey !== undefined && record.idempotencyKey === undefined) record.idempotencyKey = from.idempotencyKey;
}

export class LiveRuns {
  private readonly byId = new Map<string, LiveRun>();

  constructor(private readonly store: Pick<Store, 'saveExecution'>) {}

  get(id: string): LiveRun | undefined {
    return this.byId.get(id);
  }

  /** The run started with `record` as stored (or built in memory, `stored` false). */
  start(id: string, record: ExecutionRecord, stored: boolean): LiveRun {
    const entry: LiveRun = { record, stored, cancel: new AbortController() };
    this.byId.set(id, entry);
    return entry;
  }

  /** Aborts the run's cancel signal (the engine stops at its next step boundary); false when it does not run here. */
  abort(id: string): boolean {
    const entry = this.byId.get(id);
    if (!entry) return false;
    entry.cancel.abort();
    return true;
  }

  /** Ids of the runs of this process that the store has a row for (whose cancel another replica may request). */
  storedIds(): string[] {
    const out: string[] = [];
    for (const [id, entry] of this.byId) if (entry.stored && !entry.cancel.signal.aborted) out.push(id);
    return out;
  }

  /** The run's record as it stands now (progress, log lines). */
  update(id: string, record: ExecutionRecord): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    keepIdempotencyKey(record, entry.record);
    // The engine's record starts without the correlation key and version the run started with.
    if (entry.record !== record) carryOrigin(entry.record, record);
    entry.record = record;
  }

  /** The run ended (saved, abandoned or failed to run). */
  end(id: string): void {
    this.byId.delete(id);
  }

  /** The record of an execution running in this process, as it stands now. */
  record(id: string): ExecutionRecord | undefined {
    return this.byId.get(id)?.record;
  }

  /** Summaries of the runs of this process not in the store yet (synchronous webhooks), for lists. */
  summaries(filter: ExecutionFilter): ExecutionSummary[] {
    const out: ExecutionSummary[] = [];
    for (const { record: r, stored } of this.byId.values()) {
      if (
        stored ||
        (filter.integration !== undefined && r.integration !== filter.integration) ||
        (filter.status !== undefined && r.status !== filter.status) ||
        (filter.correlation !== undefined && r.correlationKey !== filter.correlation)
      )
        continue;
      out.push({
        id: r.id,
        integration: r.integration,
        status: r.status,
        test: r.test,
        attempt: r.attempt,
        queuedAt: r.queuedAt,
        startedAt: r.startedAt,
        ...(r.correlationKey !== undefined ? { correlationKey: r.correlationKey } : {}),
        ...(r.version ? { version: r.version } : {}),
      });
    }
    return out;
  }

  /**
   * Commits a synchronous run that is still going (its caller is being answered before the end:
   * an early `core.respond`, or the sync timeout), so a crash from now on resumes it like any
   * accepted execution. No-op for executions already in the store.
   */
  async makeDurable(id: string): Promise<void> {
    const entry = this.byId.get(id);
    if (!entry) return;
    if (entry.stored) {
      // Made durable a moment ago: its insert may still be in flight (what follows relies on the row).
      await entry.inFlight?.catch(() => undefined);
      return;
    }
    entry.stored = true;
    // Checkpoints that come now (updates of this row) wait for the insert (checkpoints.ts).
    const insert = this.store.saveExecution(entry.record, { stored: false });
    entry.inFlight = insert;
    try {
      await insert;
    } finally {
      if (entry.inFlight === insert) entry.inFlight = undefined;
    }
  }
}
