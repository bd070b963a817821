/**
 * One execution's run, from the worker pool taking its job to its waiter being answered, in named
 * steps: fail it if it keeps taking processes down (`failIfPoisoned`), mark it running (`begin`),
 * save it `cancelled` when a cancel reached it while no process ran it (`cancelledBeforeRun`), run
 * the engine (`execute`: resuming from the stored steps, checkpointing after steps that change
 * something, cancellable), save the final record (`saveFinal`, with the unsavable fallback of
 * poison.ts) — `waiting` when a core.wait suspended it — and answer whoever waits for it
 * (`SyncWaiters.finish`).
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { StorageUnavailableError } from '../../common/errors.js';
import type { ExecutionTracer } from '../../common/tracing.js';
import type { RuntimeServices } from '../../connectors/types.js';
import type { CompiledIntegration } from '../../definition/types.js';
import { carryOrigin, type ExecutionRecord, type LogEntry } from '../../engine/record.js';
import type { CallHost } from '../../engine/call.js';
import type { DurableHost } from '../../engine/durable.js';
import { versionOf } from '../../engine/version.js';
import { runExecution } from '../../engine/run.js';
import { callHost } from '../../triggers/call/children.js';
import { queuedRecord, runningRecord } from '../../store/execution-states.js';
import type { QueuedJob } from '../../store/queue.js';
import type { NewExecution, Store } from '../../store/types.js';
import type { IntegrationRegistry } from '../registry.js';
import { type DispatcherLimits, maxInterruptions } from './limits.js';
import { keepIdempotencyKey, type LiveRuns } from './live-runs.js';
import { coalescedSave, savesSettled } from './checkpoints.js';
import { interruptedTooOften, poisonRecord, unsavableRecord } from './poison.js';
import type { SyncWaiter, SyncWaiters } from './sync-waiters.js';

export interface DispatcherEvents {
  /** Recorded `queued` (after the store's commit). */
  queued: [NewExecution[]];
  /** The second argument is the stored record as it was marked running. */
  started: [QueuedJob, ExecutionRecord];
  /** Ended for good (succeeded, failed, cancelled), after the store's commit. */
  finished: [ExecutionRecord];
  /** Suspended by core.wait: saved `waiting` (with its `wakeAt`, if it wakes at a time). */
  waiting: [ExecutionRecord];
  log: [LogEntry, ExecutionRecord];
}

export interface RunLifecycleOptions {
  store: Store;
  registry: IntegrationRegistry;
  services: RuntimeServices;
  env: NodeJS.ProcessEnv;
  logger?: Logger;
  live: LiveRuns;
  waiters: SyncWaiters;
  /** Where `started`, `log` and `finished` are emitted (the dispatcher). */
  events: EventEmitter<DispatcherEvents>;
  /** The dispatcher's limits (`maxInterruptions`: poison.ts). */
  limits: DispatcherLimits;
  /** True once shutdown gave up waiting: leftover runs must not write (WorkerPool.abandoned). */
  abandoned: () => boolean;
  /** `$state` for an execution (poll/appEvent triggers plug in here). */
  stateFor?: (integration: string) => Promise<Record<string, unknown> | undefined>;
  /** A span per run, a child span per step (common/tracing.ts); absent when tracing is off. */
  tracer?: ExecutionTracer;
  /** core.wait and core.callback (runtime/durable-host.ts); absent: both fail naming the host. */
  durable?: DurableHost;
}

export class RunLifecycle {
  private readonly store: Store;
  private readonly registry: IntegrationRegistry;
  private readonly services: RuntimeServices;
  private readonly env: NodeJS.ProcessEnv;
  private readonly logger?: Logger;
  private readonly live: LiveRuns;
  private readonly waiters: SyncWaiters;
  private readonly events: EventEmitter<DispatcherEvents>;
  private readonly limits: DispatcherLimits;
  private readonly abandoned: () => boolean;
  private readonly stateFor?: RunLifecycleOptions['stateFor'];
  private readonly tracer?: ExecutionTracer;
  private readonly durable?: DurableHost;
  /** core.call: children run inside their parent's run (no second worker: no deadlock), each saved as its own execution. */
  private readonly calls: CallHost;

  constructor(opts: RunLifecycleOptions) {
    this.store = opts.store;
    this.registry = opts.registry;
    this.services = opts.services;
    this.env = opts.env;
    this.logger = opts.logger;
    this.live = opts.live;
    this.waiters = opts.waiters;
    this.events = opts.events;
    this.limits = opts.limits;
    this.abandoned = opts.abandoned;
    this.stateFor = opts.stateFor;
    this.tracer = opts.tracer;
    this.durable = opts.durable;
    this.calls = callHost(
      (name) => this.registry.get(name),
      async (integration, child) => {
        const record = await runExecution({ integration, services: this.services, env: this.env, queuedAt: new Date().toISOString(), ...child });
        await this.store.saveExecution(record);
        this.events.emit('finished', record);
        return record;
      },
    );
  }

  /** Resolves true when the run's final state was saved (or there was nothing to run). */
  async run(job: QueuedJob, signal: AbortSignal): Promise<boolean> {
    const log = this.logger?.child({ executionId: job.id, integration: job.integration });
    let record: ExecutionRecord | undefined;
    try {
      if (await this.failIfPoisoned(job, log)) return true;
      const stored = await this.begin(job);
      if (!stored) {
        log?.warn('queued execution vanished from the store (pruned?) or already finished; skipping');
        return true;
      }
      // The version loaded now runs; a reload while the execution runs does not affect it.
      const integration = this.registry.get(job.integration);
      if (integration) stored.version = versionOf(integration);
      const live = this.live.start(job.id, stored, !job.local);
      this.events.emit('started', job, stored);
      record = stored.cancelRequested
        ? cancelledBeforeRun(job, stored)
        : integration
          ? await this.execute(
              job,
              integration,
              stored,
              this.waiters.get(job.id),
              (await this.stateFor?.(job.integration)) ?? undefined,
              signal,
              live.cancel.signal,
              log,
            )
          : notLoadedRecord(job, stored);
      carryOrigin(stored, record);
      if (this.abandoned()) return false;
      keepIdempotencyKey(record, stored);
      this.showRunningUntilSaved(record);
      record = await this.saveFinal(record, log);
      if (record.status === 'waiting') {
        log?.info({ attempt: record.attempt, wakeAt: record.wakeAt, step: record.waitingFor?.step }, 'execution waiting');
        this.events.emit('waiting', record);
      } else {
        log?.info({ status: record.status, attempt: record.attempt, durationMs: record.durationMs }, `execution ${record.status}`);
        this.events.emit('finished', record);
      }
      return true;
    } catch (err) {
      if (this.abandoned()) return false;
      log?.error({ err: (err as Error).message }, 'execution could not be run or saved');
      record ??= unrunnableRecord(job, err as Error);
      return false;
    } finally {
      this.live.end(job.id);
      if (record && !this.abandoned()) this.waiters.finish(job.id, record);
    }
  }

  /** A resumed execution that keeps taking processes down is failed instead of run (poison.ts). */
  private async failIfPoisoned(job: QueuedJob, log: Logger | undefined): Promise<boolean> {
    const prev = job.previous;
    const limit = maxInterruptions(this.limits);
    if (!prev || !interruptedTooOften(prev.status, prev.attempt, limit)) return false;
    const stored = job.record ?? (await this.store.getExecution(job.id));
    if (stored) await this.store.saveExecution(poisonRecord({ ...stored, attempt: prev.attempt }, limit), { stored: true });
    log?.error({ attempt: prev.attempt }, 'the process stopped too often while this execution ran; marked failed, not resumed');
    return true;
  }

  /**
   * The record as the run starts: a synchronous run's from memory (no commit), one the queue's
   * claim already marked running as claimed, else marked running in the store now.
   */
  private async begin(job: QueuedJob): Promise<ExecutionRecord | undefined> {
    if (job.local) {
      const now = new Date().toISOString();
      return runningRecord(queuedRecord(job.local, now), job.attempt, now);
    }
    if (job.record) return job.record;
    return this.store.markRunning(job.id, job.attempt);
  }

  /**
   * Runs the engine. Not `async`: it hands back the engine's own promise (no second promise per
   * execution on this hot path — with tracing off); `$state` is read by the caller.
   */
  private execute(
    job: QueuedJob,
    integration: CompiledIntegration,
    stored: ExecutionRecord,
    watcher: SyncWaiter | undefined,
    state: Record<string, unknown> | undefined,
    signal: AbortSignal,
    cancel: AbortSignal,
    log: Logger | undefined,
  ): Promise<ExecutionRecord> {
    const trace = this.tracer?.startExecution({
      id: job.id,
      integration: integration.name,
      attempt: job.attempt,
      test: stored.test,
      trigger: stored.trigger,
    });
    const run = runExecution({
      integration,
      trigger: stored.trigger,
      services: this.services,
      executionId: job.id,
      attempt: job.attempt,
      test: stored.test,
      state,
      env: this.env,
      signal,
      call: this.calls,
      queuedAt: stored.queuedAt,
      // A crash, a wake-up after core.wait: the steps finished before are not run again. Crash
      // resumes come as attempt + 1, wake-ups as the same attempt (the queue decides `job.attempt`).
      ...(stored.steps.length > 0 ? { resume: stored.steps } : {}),
      checkpoint: (r) => this.checkpoint(job.id, r, log),
      durable: this.durable,
      cancel,
      // Progress is shown from memory (liveRecord); the store gets it at checkpoints and at the end.
      onProgress: (r) => this.live.update(job.id, r),
      onLog: (entry, r) => {
        this.live.update(job.id, r);
        this.events.emit('log', entry, r);
        if (log && entry.level !== 'debug') log[entry.level]({ step: entry.step }, entry.message);
      },
      // The caller is told something before the end: the run must survive a crash from now on.
      onResponse: watcher
        ? (response) =>
            void this.live
              .makeDurable(job.id)
              .catch((err: Error) => log?.warn({ err: err.message }, 'could not record the synchronous run before its early response'))
              .then(() => watcher.resolveOutcome({ kind: 'response', response, executionId: job.id }))
        : undefined,
      trace,
    });
    if (!trace) return run;
    return run.then(
      (record) => {
        trace.end(record);
        return record;
      },
      (err: Error) => {
        trace.end({ status: 'failed', error: { message: err.message } });
        throw err;
      },
    );
  }

  /**
   * The engine's checkpoint hook: the record saved over the execution's row, at most one save in
   * flight (checkpoints.ts). Not for a synchronous run nobody was told about yet (not in the store:
   * it commits once at its end, unless it answers early or waits — then it is made durable first),
   * nor after shutdown gave up on the run. A failed checkpoint is logged and the run goes on: a
   * crash then resumes from the checkpoint before (at-least-once, as without checkpoints).
   */
  private checkpoint(id: string, record: ExecutionRecord, log: Logger | undefined): Promise<void> {
    const entry = this.live.get(id);
    if (!entry?.stored || this.abandoned()) return Promise.resolve();
    this.live.update(id, record);
    return coalescedSave(entry, (r) => this.store.saveExecution(r, { stored: true })).catch((err: Error) =>
      log?.warn({ err: err.message }, 'checkpoint could not be saved; a crash now would resume from the one before'),
    );
  }

  /**
   * The live entry holds the engine's record object, which now says how the run ended; until that
   * is saved (and 'finished' emitted), readers see it still running, as the store has it.
   */
  private showRunningUntilSaved(record: ExecutionRecord): void {
    const entry = this.live.get(record.id);
    if (entry) entry.record = { ...record, status: 'running', finishedAt: undefined, durationMs: undefined };
  }

  /**
   * Saves the finished record; when the record itself cannot be saved (too large to serialise,
   * refused by the database), saves it as failed without its results instead, so it never stays
   * `running` (and is not run again at every start). A store that is unavailable still throws.
   * Resolves to the record as saved.
   */
  private async saveFinal(record: ExecutionRecord, log: Logger | undefined): Promise<ExecutionRecord> {
    const entry = this.live.get(record.id);
    // A checkpoint (or the insert making a synchronous run durable) still in flight must land first.
    await savesSettled(entry);
    const stored = entry?.stored ?? true;
    try {
      await this.store.saveExecution(record, { stored });
      return record;
    } catch (err) {
      if (err instanceof StorageUnavailableError) throw err;
      const slim = unsavableRecord(record, err as Error);
      log?.error({ err: (err as Error).message }, 'the execution record could not be saved; saving it as failed without its step results');
      await this.store.saveExecution(slim, { stored });
      return slim;
    }
  }
}

/** A resumed or woken execution whose cancel was requested while no process ran it: saved `cancelled`, not run. */
function cancelledBeforeRun(job: QueuedJob, stored: ExecutionRecord): ExecutionRecord {
  const { wakeAt: _w, waitingFor: _f, ...rest } = stored;
  const now = new Date().toISOString();
  return { ...rest, status: 'cancelled', attempt: job.attempt, startedAt: stored.startedAt ?? now, finishedAt: now };
}

/** The record of an execution whose integration is not loaded (any more) when its turn comes. */
function notLoadedRecord(job: QueuedJob, stored: ExecutionRecord): ExecutionRecord {
  return {
    ...stored,
    status: 'failed',
    attempt: job.attempt,
    error: { message: `integration ${job.integration} is not loaded (removed, renamed or never valid); the execution cannot run` },
    startedAt: stored.startedAt ?? new Date().toISOString(),
    finishedAt: new Date().toISOString(),
  };
}

/** What a waiting caller is told when the run failed before it had a record (the store refused it). */
function unrunnableRecord(job: QueuedJob, err: Error): ExecutionRecord {
  return {
    id: job.id,
    integration: job.integration,
    status: 'failed',
    test: false,
    attempt: job.attempt,
    trigger: undefined,
    steps: [],
    log: [],
    error: { message: `execution could not be run: ${err.message}` },
  };
}
