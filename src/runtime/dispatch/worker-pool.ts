/**
 * The worker pool: takes jobs from the queue while there is room — at most `concurrency` running
 * in this process, at most `perIntegration` (or the integration's own lower limit) of one
 * integration — and runs each through `run`. Fairness comes from the queue: `take` hands out the
 * oldest job among the integrations that may run now, so one busy integration at its limit never
 * blocks the others. `stop` lets running jobs finish for a grace period, then abandons the rest.
 */
import type { Logger } from 'pino';
import type { ExecutionQueue, QueuedJob } from '../../store/queue.js';
import type { DispatcherLimits } from './limits.js';

/** Runs one job; resolves true when its final state was saved (or there was nothing to run). */
export type RunJob = (job: QueuedJob, signal: AbortSignal) => Promise<boolean>;

export interface WorkerPoolOptions {
  queue: ExecutionQueue;
  limits: DispatcherLimits;
  run: RunJob;
  /** A per-integration running limit below `perIntegration` (schedule `overlap: queue|skip` → 1). */
  concurrencyFor?: (integration: string) => number | undefined;
  logger?: Logger;
}

export class WorkerPool {
  private readonly queue: ExecutionQueue;
  private readonly limits: DispatcherLimits;
  private readonly runJob: RunJob;
  private readonly concurrencyFor?: WorkerPoolOptions['concurrencyFor'];
  private readonly logger?: Logger;
  private readonly runningBy = new Map<string, number>();
  private readonly inflight = new Map<string, { controller: AbortController; promise: Promise<void> }>();
  private running = 0;
  private pumping = true;
  private gaveUp = false;

  constructor(opts: WorkerPoolOptions) {
    this.queue = opts.queue;
    this.limits = opts.limits;
    this.runJob = opts.run;
    this.concurrencyFor = opts.concurrencyFor;
    this.logger = opts.logger;
    this.queue.onAvailable(() => this.pump());
  }

  /** Jobs running now. */
  get runningCount(): number {
    return this.running;
  }

  /** Jobs of one integration running now. */
  runningOf(integration: string): number {
    return this.runningBy.get(integration) ?? 0;
  }

  /** Set when `stop` gave up waiting: leftover runs must not write (their rows stay `running`). */
  get abandoned(): boolean {
    return this.gaveUp;
  }

  /** Free worker slots (0 once stopping): what a shared queue may claim. */
  free(): number {
    return this.pumping ? this.limits.concurrency - this.running : 0;
  }

  /** Free slots of one integration. */
  freeFor(integration: string): number {
    return this.limitOf(integration) - (this.runningBy.get(integration) ?? 0);
  }

  private limitOf(integration: string): number {
    return Math.min(this.limits.perIntegration, this.concurrencyFor?.(integration) ?? Infinity);
  }

  private canRun = (integration: string): boolean => (this.runningBy.get(integration) ?? 0) < this.limitOf(integration);

  /** Starts jobs while there is room and the queue has one that may run. */
  pump(): void {
    while (this.pumping && this.running < this.limits.concurrency) {
      const job = this.queue.take(this.canRun);
      if (!job) return;
      this.running++;
      this.runningBy.set(job.integration, (this.runningBy.get(job.integration) ?? 0) + 1);
      const controller = new AbortController();
      const promise = this.runJob(job, controller.signal)
        .then((saved) => this.queue.settle(job, saved && !this.gaveUp ? 'done' : 'abandoned'))
        .finally(() => {
          this.running--;
          const n = (this.runningBy.get(job.integration) ?? 1) - 1;
          if (n <= 0) this.runningBy.delete(job.integration);
          else this.runningBy.set(job.integration, n);
          this.inflight.delete(job.id);
          this.pump();
        });
      this.inflight.set(job.id, { controller, promise });
    }
  }

  /**
   * Stops taking jobs, waits up to `graceMs` for running ones, then abandons the rest (aborted;
   * they stay `running` in the store and the next start resumes them). Queued ones stay queued.
   */
  async stop(graceMs: number): Promise<{ finished: number; abandoned: number }> {
    this.pumping = false;
    const runs = [...this.inflight.values()];
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      Promise.allSettled(runs.map((r) => r.promise)).then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
    ]);
    clearTimeout(timer);
    const left = this.inflight.size;
    if (timedOut && left > 0) {
      this.gaveUp = true;
      for (const r of this.inflight.values()) r.controller.abort(new Error('shutdown'));
      this.logger?.warn({ count: left }, 'shutdown grace period over: unfinished executions stay recorded and resume on the next start');
    }
    return { finished: runs.length - left, abandoned: timedOut ? left : 0 };
  }
}
