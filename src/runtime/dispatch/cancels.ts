/**
 * Cancel (`POST /api/executions/{id}/cancel`, docs/server.md): the store cancels a queued or
 * waiting execution at once and flags a running one (`cancelRequested`). A run flagged while this
 * process runs it has its cancel signal aborted here at once — the engine aborts the running step's
 * request and ends the run `cancelled` at the step boundary. Runs of other replicas are reached by
 * each replica asking the store, every `everyMs`, which of the runs it holds were flagged.
 */
import type { Logger } from 'pino';
import type { CancelOutcome, Store } from '../../store/types.js';
import type { LiveRuns } from './live-runs.js';

export class Cancels {
  private timer?: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly store: Pick<Store, 'cancelExecution' | 'cancelRequested'>,
    private readonly live: LiveRuns,
    private readonly logger?: Logger,
    private readonly everyMs = 1000,
  ) {}

  /** Cancels one execution (see above); a synchronous run not in the store yet is stopped here too. */
  async cancel(id: string, now = new Date()): Promise<CancelOutcome> {
    const outcome = await this.store.cancelExecution(id, now);
    if (outcome.outcome === 'requested') this.live.abort(id);
    if (outcome.outcome === 'unknown') {
      // A synchronous webhook's run nobody was answered about yet is only in this process's memory.
      const entry = this.live.get(id);
      if (entry && !entry.stored) {
        entry.cancel.abort();
        return { outcome: 'requested', record: entry.record };
      }
    }
    return outcome;
  }

  /** Starts the check for cancels other replicas recorded (no query while nothing runs here). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Aborts the runs of this process whose cancel the store has recorded. */
  async check(): Promise<void> {
    if (this.checking) return;
    const ids = this.live.storedIds();
    if (ids.length === 0) return;
    this.checking = true;
    try {
      for (const id of await this.store.cancelRequested(ids)) this.live.abort(id);
    } catch (err) {
      this.logger?.warn({ err: (err as Error).message }, 'could not check for cancelled executions; will retry');
    } finally {
      this.checking = false;
    }
  }
}
