/**
 * The execution dispatcher: accepts executions (durably, through the store), queues them and runs
 * them. It wires its parts together — admission (backlog, fair share: admission.ts), callers
 * waiting for a run (sync-waiters.ts), the worker pool (worker-pool.ts), one run from start to
 * saved record (run-lifecycle.ts, poison.ts) and the records of runs in progress (live-runs.ts) —
 * and is what the runtime, the triggers and the server call.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { ExecutionTracer } from '../../common/tracing.js';
import type { RuntimeServices } from '../../connectors/types.js';
import type { ExecutionRecord } from '../../engine/record.js';
import type { ExecutionQueue, QueuedJob } from '../../store/queue.js';
import type { CancelOutcome, ExecutionFilter, ExecutionSummary, IdempotencyClaim, NewExecution, Store } from '../../store/types.js';
import { createDurableHost } from '../durable-host.js';
import type { IntegrationRegistry } from '../registry.js';
import { Admission } from './admission.js';
import { Cancels } from './cancels.js';
import { type DispatcherLimits, maxInterruptions, resolveLimits } from './limits.js';
import { LiveRuns } from './live-runs.js';
import { type DispatcherEvents, RunLifecycle } from './run-lifecycle.js';
import { type ExecutionWatch, SyncWaiters } from './sync-waiters.js';
import { WorkerPool } from './worker-pool.js';

export type { DispatcherEvents } from './run-lifecycle.js';

export interface DispatcherOptions {
  store: Store;
  registry: IntegrationRegistry;
  services: RuntimeServices;
  limits?: Partial<DispatcherLimits>;
  /** Default: the store's own queue (`store.openQueue()`). */
  queue?: ExecutionQueue;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** `$state` for an execution (poll/appEvent triggers plug in here). */
  stateFor?: (integration: string) => Promise<Record<string, unknown> | undefined>;
  /** A per-integration running limit below `perIntegration` (schedule `overlap: queue|skip` → 1). */
  concurrencyFor?: (integration: string) => number | undefined;
  /** Traces runs when tracing is on (common/tracing.ts). */
  tracer?: ExecutionTracer;
  /**
   * core.wait and core.callback (runtime/durable-host.ts): the base of callback URLs and the cap on
   * waiting executions per integration. Absent: both actions fail naming what is missing.
   */
  durable?: { publicUrl: string; maxWaiting?: number };
}

export class ExecutionDispatcher extends EventEmitter<DispatcherEvents> {
  readonly limits: DispatcherLimits;
  readonly queue: ExecutionQueue;
  private readonly store: Store;
  private readonly logger?: Logger;
  private readonly admission: Admission;
  private readonly waiters: SyncWaiters;
  private readonly live: LiveRuns;
  private readonly pool: WorkerPool;
  private readonly cancels: Cancels;

  constructor(opts: DispatcherOptions) {
    super();
    this.store = opts.store;
    this.logger = opts.logger;
    const env = opts.env ?? process.env;
    this.limits = resolveLimits(opts.limits);
    this.queue = opts.queue ?? opts.store.openQueue();
    this.admission = new Admission(this.limits, this.queue);
    this.live = new LiveRuns(opts.store);
    this.waiters = new SyncWaiters((id) => this.live.makeDurable(id));
    this.cancels = new Cancels(opts.store, this.live, opts.logger);
    const durable = opts.durable
      ? createDurableHost({ store: opts.store, ...opts.durable, makeDurable: (id) => this.live.makeDurable(id) })
      : undefined;
    const lifecycle = new RunLifecycle({
      store: opts.store,
      registry: opts.registry,
      services: opts.services,
      env,
      logger: opts.logger,
      live: this.live,
      waiters: this.waiters,
      events: this,
      limits: this.limits,
      abandoned: () => this.pool.abandoned,
      stateFor: opts.stateFor,
      tracer: opts.tracer,
      durable,
    });
    this.pool = new WorkerPool({
      queue: this.queue,
      limits: this.limits,
      run: (job, signal) => lifecycle.run(job, signal),
      concurrencyFor: opts.concurrencyFor,
      logger: opts.logger,
    });
    this.queue.bind({
      free: () => this.pool.free(),
      freeFor: (integration) => this.pool.freeFor(integration),
      maxInterruptions: () => this.maxInterruptions,
      keyLimit: (integration) => opts.registry.get(integration)?.concurrency?.limit,
    });
  }

  /** Waiting executions (metrics: queue depth). */
  get depth(): number {
    return this.queue.size;
  }

  get runningCount(): number {
    return this.pool.runningCount;
  }

  /** Queued executions one integration may have (its share of the backlog). */
  get integrationBacklog(): number {
    return this.admission.integrationBacklog;
  }

  /** The most times the process may stop under an execution before it is failed (poison.ts). */
  get maxInterruptions(): number {
    return maxInterruptions(this.limits);
  }

  /**
   * Throws BusyError when a new execution would be refused now (cheap pre-check before parsing):
   * past the global backlog, or past the integration's share of it (admission.ts).
   */
  checkCapacity(count = 1, integration?: string): void {
    this.admission.check(count, integration);
  }

  /**
   * Records the executions durably (resolves after the store's commit) and queues them.
   * Throws BusyError past the backlog limit, without recording anything.
   *
   * An execution someone in this process waits for (`watch` first: a synchronous webhook) is not
   * written now: nobody has been told anything about it, so there is nothing to lose. It runs here
   * from memory (visible through `liveRecord`) and is committed once, when it finishes — or
   * earlier, when its caller is answered before the end (`continueInBackground`, an early response).
   */
  async submit(executions: NewExecution[]): Promise<void> {
    const held = this.admission.reserve(executions);
    const jobs: QueuedJob[] = executions.map((e) => ({
      id: e.id,
      integration: e.integration,
      attempt: e.attempt ?? 1,
      ...keyOf(e),
      ...(this.waiters.has(e.id) ? { local: e } : {}),
    }));
    const durable = executions.filter((e) => !this.waiters.has(e.id));
    try {
      if (durable.length) await this.store.enqueue(durable);
    } finally {
      this.admission.release(held, executions.length);
    }
    this.queue.push(jobs);
    this.emit('queued', executions);
  }

  /**
   * Records one execution unless an earlier one holds its idempotency key (`store.enqueueOnce`:
   * the key's claim and the row are one commit), and queues it. Always written at once, even when
   * a caller in this process waits for it: its key points at it, and a duplicate on any replica
   * must find it. Backpressure as `submit`; a refused request claims no key.
   */
  async submitOnce(execution: NewExecution, claim: IdempotencyClaim): Promise<{ executionId: string; duplicate: boolean }> {
    const held = this.admission.reserve([execution]);
    let outcome: { executionId: string; duplicate: boolean };
    try {
      outcome = await this.store.enqueueOnce(execution, claim);
    } finally {
      this.admission.release(held, 1);
    }
    if (outcome.duplicate) return outcome;
    this.queue.push([{ id: execution.id, integration: execution.integration, attempt: execution.attempt ?? 1, ...keyOf(execution) }]);
    this.emit('queued', [execution]);
    return outcome;
  }

  /**
   * Queues executions another transaction already recorded (a poll's `store.commitPoll` holds its
   * seen keys and its executions in one commit): no second insert, no backlog check.
   */
  adopt(executions: NewExecution[]): void {
    if (executions.length === 0) return;
    this.queue.push(executions.map((e) => ({ id: e.id, integration: e.integration, attempt: e.attempt ?? 1, ...keyOf(e) })));
    this.emit('queued', executions);
  }

  /** Register before `submit` so an early core.respond is never missed. */
  watch(id: string): ExecutionWatch {
    return this.waiters.watch(id);
  }

  /**
   * Starts the queue: what a previous process left queued or running resumes as attempt + 1
   * (`$execution.attempt > 1` tells a step it may be running after a crash; at-least-once). On a
   * shared queue only what no live replica holds. An execution the process stopped under
   * `maxInterruptions` times is failed when it comes up instead of run (poison.ts, run-lifecycle.ts).
   */
  async recover(): Promise<number> {
    const n = await this.queue.recover();
    if (n) this.logger?.info({ count: n }, 'resuming executions left unfinished by the previous process');
    // From now on runs are taken here: cancels recorded by other replicas must reach them.
    this.cancels.start();
    return n;
  }

  /**
   * Cancels an execution (cancels.ts): queued or waiting → `cancelled` at once; running → flagged,
   * and stopped at its next step boundary (here at once, on another replica within a second).
   */
  async cancel(id: string): Promise<CancelOutcome> {
    const outcome = await this.cancels.cancel(id);
    // Cancelled without a run: a `concurrency:` slot it held (waiting) is free at once.
    if (outcome.outcome === 'cancelled') this.queue.ended?.(outcome.record);
    return outcome;
  }

  /** The record of an execution running in this process, as it stands now. */
  liveRecord(id: string): ExecutionRecord | undefined {
    return this.live.record(id);
  }

  /** Summaries of the runs of this process not in the store yet (synchronous webhooks), for lists. */
  liveSummaries(filter: ExecutionFilter): ExecutionSummary[] {
    return this.live.summaries(filter);
  }

  /**
   * Stops taking work, waits up to `graceMs` for running executions, then abandons the rest:
   * they stay `running` in the store and the next start resumes them. Queued ones stay queued.
   */
  async stop(graceMs: number): Promise<{ finished: number; abandoned: number }> {
    this.admission.accepting = false;
    this.cancels.stop();
    const result = await this.pool.stop(graceMs);
    // A shared queue hands back what this process still holds (and releases its connections).
    await this.queue.stop();
    return result;
  }
}

/** The job's `concurrency:` key, when its execution has one. */
function keyOf(e: NewExecution): Pick<QueuedJob, 'concurrencyKey'> {
  return e.concurrencyKey !== undefined ? { concurrencyKey: e.concurrencyKey } : {};
}
