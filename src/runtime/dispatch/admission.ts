/**
 * Admission: whether new executions are accepted now. Past the backlog limit, or past one
 * integration's share of it (fair share: one slow integration cannot fill the whole backlog and
 * starve the others), new work is refused with BusyError (429 + Retry-After; 503 while shutting
 * down) before anything is recorded. Executions being written to the store count against the
 * backlog from the check until the queue has them (`reserve` … `release`).
 */
import { HttpError } from '../../common/errors.js';
import type { ExecutionQueue } from '../../store/queue.js';
import { type DispatcherLimits, integrationBacklog } from './limits.js';

/** The backlog is full, or the process is shutting down: answered 429/503 with Retry-After. */
export class BusyError extends HttpError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
    readonly shuttingDown = false,
  ) {
    super(shuttingDown ? 503 : 429, message, { 'retry-after': String(retryAfterSec) });
    this.name = 'BusyError';
  }
}

export class Admission {
  /** False once shutdown began: everything is refused with 503. */
  accepting = true;
  /** Executions admitted and being recorded, not yet in the queue: they count against the backlog. */
  private pending = 0;
  private readonly pendingBy = new Map<string, number>();

  constructor(
    private readonly limits: DispatcherLimits,
    /** What waits already (the queue's `size`, and `depthOf` per integration). */
    private readonly queue: Pick<ExecutionQueue, 'size' | 'depthOf'>,
  ) {}

  /** Queued executions one integration may have (its share of the backlog). */
  get integrationBacklog(): number {
    return integrationBacklog(this.limits);
  }

  /** Executions admitted but not yet queued (their store commit is under way). */
  get pendingCount(): number {
    return this.pending;
  }

  /**
   * Throws BusyError when `count` new executions would be refused now (cheap pre-check before
   * parsing): past the global backlog, or past the integration's share of it (only that
   * integration is refused then; the others keep being accepted).
   */
  check(count = 1, integration?: string): void {
    if (!this.accepting) throw new BusyError('the runner is shutting down; retry shortly', this.limits.retryAfterSec, true);
    if (integration !== undefined) {
      const share = this.integrationBacklog;
      if (this.queue.depthOf(integration) + (this.pendingBy.get(integration) ?? 0) + count > share) {
        throw new BusyError(
          `too many queued executions of integration ${integration} (its backlog limit is ${share}, HCM_RUNNER_INTEGRATION_BACKLOG); retry later`,
          this.limits.retryAfterSec,
        );
      }
    }
    if (this.queue.size + this.pending + count > this.limits.backlog) {
      throw new BusyError(`too many queued executions (backlog limit ${this.limits.backlog}); retry later`, this.limits.retryAfterSec);
    }
  }

  /**
   * Checks a batch (as a whole and per integration) and holds its places in the backlog until
   * `release`: call `release` with what this returns once the store's commit ended, either way.
   * Throws BusyError, holding nothing, when the batch is refused.
   */
  reserve(executions: readonly { integration: string }[]): Map<string, number> {
    const byIntegration = new Map<string, number>();
    for (const e of executions) byIntegration.set(e.integration, (byIntegration.get(e.integration) ?? 0) + 1);
    this.check(executions.length);
    for (const [integration, n] of byIntegration) this.check(n, integration);
    this.pending += executions.length;
    for (const [integration, n] of byIntegration) this.pendingBy.set(integration, (this.pendingBy.get(integration) ?? 0) + n);
    return byIntegration;
  }

  /** Gives back the places `reserve` held: the store's commit ended (the queue counts them next, or they were never recorded). */
  release(byIntegration: Map<string, number>, count: number): void {
    this.pending -= count;
    for (const [integration, n] of byIntegration) {
      const left = (this.pendingBy.get(integration) ?? n) - n;
      if (left > 0) this.pendingBy.set(integration, left);
      else this.pendingBy.delete(integration);
    }
  }
}
