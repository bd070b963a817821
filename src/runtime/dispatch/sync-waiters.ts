/**
 * Callers in this process waiting for an execution (a synchronous webhook): each is answered by
 * the run's early response (`core.respond`) or by its end, whichever comes first, and learns the
 * final record either way. Register (`watch`) before submitting, so an early response is never
 * missed; a registered execution is also what `submit` keeps out of the store until it ends.
 */
import type { HttpResponseSpec } from '../../connectors/types.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { cancelledResponse, waitingResponse } from '../../triggers/webhook/response.js';

/** What a synchronous caller waits for: an early response (core.respond) or the finished run. */
export type RunOutcome = { kind: 'response'; response: HttpResponseSpec; executionId: string } | { kind: 'done'; record: ExecutionRecord };

export interface ExecutionWatch {
  outcome: Promise<RunOutcome>;
  /** The final record, whatever answered first. */
  done: Promise<ExecutionRecord>;
  cancel(): void;
  /** The caller stops waiting but the run goes on: record it now, so it survives a crash (makeDurable). */
  continueInBackground(): Promise<void>;
}

/** The run's side of one waiting caller. */
export interface SyncWaiter {
  /** The first outcome wins; later ones are ignored. */
  resolveOutcome(o: RunOutcome): void;
  resolveDone(r: ExecutionRecord): void;
}

export class SyncWaiters {
  private readonly byId = new Map<string, SyncWaiter>();

  /** `makeDurable`: commits a run still in progress whose caller stops waiting (LiveRuns.makeDurable). */
  constructor(private readonly makeDurable: (id: string) => Promise<void>) {}

  /** Whether someone in this process waits for the execution. */
  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): SyncWaiter | undefined {
    return this.byId.get(id);
  }

  /** Register before `submit` so an early core.respond is never missed. */
  watch(id: string): ExecutionWatch {
    let resolveOutcome!: (o: RunOutcome) => void;
    let resolveDone!: (r: ExecutionRecord) => void;
    const outcome = new Promise<RunOutcome>((r) => (resolveOutcome = r));
    const done = new Promise<ExecutionRecord>((r) => (resolveDone = r));
    let settled = false;
    this.byId.set(id, {
      resolveOutcome: (o) => {
        if (!settled) {
          settled = true;
          resolveOutcome(o);
        }
      },
      resolveDone: (r) => {
        this.byId.delete(id);
        resolveDone(r);
      },
    });
    return { outcome, done, cancel: () => this.byId.delete(id), continueInBackground: () => this.makeDurable(id) };
  }

  /**
   * The run ended with `record`: its waiter (if any) gets it as outcome, unless answered earlier, and
   * as the final record. A run that ended `waiting` (core.wait) answers its caller at once with
   * `waitingResponse` — it may wait for days — and goes on in the background as a durable execution.
   */
  finish(id: string, record: ExecutionRecord): void {
    const waiter = this.byId.get(id);
    if (!waiter) return;
    const response = record.status === 'waiting' ? waitingResponse(record) : record.status === 'cancelled' ? cancelledResponse(record) : undefined;
    waiter.resolveOutcome(response ? { kind: 'response', response, executionId: id } : { kind: 'done', record });
    waiter.resolveDone(record);
  }
}
