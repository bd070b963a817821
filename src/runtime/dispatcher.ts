/**
 * The dispatcher: accepts executions (durably, through the store), queues them and runs them on a
 * bounded worker pool — global concurrency and a per-integration limit — with backpressure past a
 * backlog limit, recovery of unfinished executions at start, and waiters for synchronous webhooks.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { HttpResponseSpec, RuntimeServices } from '../connectors/types.js';
import { runExecution } from '../engine/run.js';
import type { ExecutionRecord, LogEntry } from '../engine/record.js';
import type { ExecutionFilter, ExecutionSummary, NewExecution, Store } from '../store/types.js';
import { queuedRecord, runningRecord } from '../store/common.js';
import { HttpError, StorageUnavailableError } from '../common/errors.js';
import { DEFAULT_MAX_INTERRUPTIONS, interruptedTooOften, poisonRecord, unsavableRecord } from './poison.js';
import type { ExecutionQueue, QueuedJob } from './queue.js';
import type { IntegrationRegistry } from './registry.js';

export interface DispatcherLimits {
  /** Executions running at once in this process (default 16). */
  concurrency: number;
  /** Executions of one integration running at once (default 4). */
  perIntegration: number;
  /** Queued (not running) executions above which new work is refused with "busy" (default 1000). */
  backlog: number;
  /**
   * Queued executions of one integration above which its new work is refused (default half the
   * backlog, HCM_RUNNER_INTEGRATION_BACKLOG): one slow integration cannot fill the whole backlog
   * and starve the others.
   */
  backlogPerIntegration?: number;
  /**
   * An execution the process stopped under this many times is failed instead of resumed (default
   * 3, HCM_RUNNER_MAX_INTERRUPTIONS; see poison.ts).
   */
  maxInterruptions?: number;
  /** Retry-After seconds suggested to refused callers (default 5). */
  retryAfterSec: number;
}

export const DEFAULT_LIMITS: DispatcherLimits = { concurrency: 16, perIntegration: 4, backlog: 1000, retryAfterSec: 5 };

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
}

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

interface Watcher {
  resolveOutcome(o: RunOutcome): void;
  resolveDone(r: ExecutionRecord): void;
}

export interface DispatcherEvents {
  /** Recorded `queued` (after the store's commit). */
  queued: [NewExecution[]];
  /** The second argument is the stored record as it was marked running. */
  started: [QueuedJob, ExecutionRecord];
  finished: [ExecutionRecord];
  log: [LogEntry, ExecutionRecord];
}

export class Dispatcher extends EventEmitter<DispatcherEvents> {
  readonly limits: DispatcherLimits;
  readonly queue: ExecutionQueue;
  private readonly store: Store;
  private readonly registry: IntegrationRegistry;
  private readonly services: RuntimeServices;
  private readonly env: NodeJS.ProcessEnv;
  private readonly logger?: Logger;
  private readonly stateFor?: DispatcherOptions['stateFor'];
  private readonly concurrencyFor?: DispatcherOptions['concurrencyFor'];
  private readonly runningBy = new Map<string, number>();
  private readonly inflight = new Map<string, { controller: AbortController; promise: Promise<void> }>();
  private readonly watchers = new Map<string, Watcher>();
  /**
   * Records of the executions running in this process, as they progress: what the API shows for
   * them (a synchronous run is not in the store before it finishes; an async one's row has no
   * progress until it finishes).
   */
  private readonly live = new Map<string, { record: ExecutionRecord; stored: boolean }>();
  private running = 0;
  /** Enqueues sent to the store and not yet committed: they count against the backlog. */
  private pending = 0;
  private readonly pendingBy = new Map<string, number>();
  private accepting = true;
  private pumping = true;
  /** Set when shutdown gave up waiting: leftover runs must not write (their rows stay `running`). */
  private abandoned = false;

  constructor(opts: DispatcherOptions) {
    super();
    this.store = opts.store;
    this.registry = opts.registry;
    this.services = opts.services;
    this.env = opts.env ?? process.env;
    this.logger = opts.logger;
    this.stateFor = opts.stateFor;
    this.concurrencyFor = opts.concurrencyFor;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.queue = opts.queue ?? opts.store.openQueue();
    this.queue.onAvailable(() => this.pump());
    this.queue.bind({
      free: () => (this.pumping ? this.limits.concurrency - this.running : 0),
      freeFor: (integration) =>
        Math.min(this.limits.perIntegration, this.concurrencyFor?.(integration) ?? Infinity) - (this.runningBy.get(integration) ?? 0),
      maxInterruptions: () => this.maxInterruptions,
    });
  }

  /** Waiting executions (metrics: queue depth). */
  get depth(): number {
    return this.queue.size;
  }

  get runningCount(): number {
    return this.running;
  }

  /** Queued executions one integration may have (its share of the backlog). */
  get integrationBacklog(): number {
    return this.limits.backlogPerIntegration ?? Math.max(1, Math.ceil(this.limits.backlog / 2));
  }

  /** The most times the process may stop under an execution before it is failed (poison.ts). */
  get maxInterruptions(): number {
    return this.limits.maxInterruptions ?? DEFAULT_MAX_INTERRUPTIONS;
  }

  /**
   * Throws BusyError when a new execution would be refused now (cheap pre-check before parsing):
   * past the global backlog, or past the integration's share of it (only that integration is
   * refused then; the others keep being accepted).
   */
  checkCapacity(count = 1, integration?: string): void {
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
   * Records the executions durably (resolves after the store's commit) and queues them.
   * Throws BusyError past the backlog limit, without recording anything.
   *
   * An execution someone in this process waits for (`watch` first: a synchronous webhook) is not
   * written now: nobody has been told anything about it, so there is nothing to lose. It runs here
   * from memory (visible through `liveRecord`) and is committed once, when it finishes — or
   * earlier, when its caller is answered before the end (`makeDurable`).
   */
  async submit(executions: NewExecution[]): Promise<void> {
    const byIntegration = new Map<string, number>();
    for (const e of executions) byIntegration.set(e.integration, (byIntegration.get(e.integration) ?? 0) + 1);
    this.checkCapacity(executions.length);
    for (const [integration, n] of byIntegration) this.checkCapacity(n, integration);
    const jobs: QueuedJob[] = executions.map((e) => ({
      id: e.id,
      integration: e.integration,
      attempt: e.attempt ?? 1,
      ...(this.watchers.has(e.id) ? { local: e } : {}),
    }));
    const durable = executions.filter((e) => !this.watchers.has(e.id));
    this.pending += executions.length;
    for (const [integration, n] of byIntegration) this.pendingBy.set(integration, (this.pendingBy.get(integration) ?? 0) + n);
    try {
      if (durable.length) await this.store.enqueue(durable);
    } finally {
      this.pending -= executions.length;
      for (const [integration, n] of byIntegration) {
        const left = (this.pendingBy.get(integration) ?? n) - n;
        if (left > 0) this.pendingBy.set(integration, left);
        else this.pendingBy.delete(integration);
      }
    }
    this.queue.push(jobs);
    this.emit('queued', executions);
  }

  /**
   * Queues executions another transaction already recorded (a poll's `store.commitPoll` holds its
   * seen keys and its executions in one commit): no second insert, no backlog check.
   */
  adopt(executions: NewExecution[]): void {
    if (executions.length === 0) return;
    this.queue.push(executions.map((e) => ({ id: e.id, integration: e.integration, attempt: e.attempt ?? 1 })));
    this.emit('queued', executions);
  }

  /** Register before `submit` so an early core.respond is never missed. */
  watch(id: string): ExecutionWatch {
    let resolveOutcome!: (o: RunOutcome) => void;
    let resolveDone!: (r: ExecutionRecord) => void;
    const outcome = new Promise<RunOutcome>((r) => (resolveOutcome = r));
    const done = new Promise<ExecutionRecord>((r) => (resolveDone = r));
    let settled = false;
    this.watchers.set(id, {
      resolveOutcome: (o) => {
        if (!settled) {
          settled = true;
          resolveOutcome(o);
        }
      },
      resolveDone: (r) => {
        this.watchers.delete(id);
        resolveDone(r);
      },
    });
    return { outcome, done, cancel: () => this.watchers.delete(id), continueInBackground: () => this.makeDurable(id) };
  }

  /**
   * Starts the queue: what a previous process left queued or running resumes as attempt + 1
   * (`$execution.attempt > 1` tells a step it may be running after a crash; at-least-once). On a
   * shared queue only what no live replica holds. An execution the process stopped under
   * `maxInterruptions` times is failed when it comes up instead of run (poison.ts, see run()).
   */
  async recover(): Promise<number> {
    const n = await this.queue.recover();
    if (n) this.logger?.info({ count: n }, 'resuming executions left unfinished by the previous process');
    return n;
  }

  /** The record of an execution running in this process, as it stands now. */
  liveRecord(id: string): ExecutionRecord | undefined {
    return this.live.get(id)?.record;
  }

  /** Summaries of the runs of this process not in the store yet (synchronous webhooks), for lists. */
  liveSummaries(filter: ExecutionFilter): ExecutionSummary[] {
    const out: ExecutionSummary[] = [];
    for (const { record: r, stored } of this.live.values()) {
      if (
        stored ||
        (filter.integration !== undefined && r.integration !== filter.integration) ||
        (filter.status !== undefined && r.status !== filter.status)
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
      });
    }
    return out;
  }

  /**
   * Commits a synchronous run that is still going (its caller is being answered before the end:
   * an early `core.respond`, or the sync timeout), so a crash from now on resumes it like any
   * accepted execution. No-op for executions already in the store.
   */
  private async makeDurable(id: string): Promise<void> {
    const entry = this.live.get(id);
    if (!entry || entry.stored) return;
    entry.stored = true;
    await this.store.saveExecution(entry.record, { stored: false });
  }

  /**
   * Stops taking work, waits up to `graceMs` for running executions, then abandons the rest:
   * they stay `running` in the store and the next start resumes them. Queued ones stay queued.
   */
  async stop(graceMs: number): Promise<{ finished: number; abandoned: number }> {
    this.accepting = false;
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
      this.abandoned = true;
      for (const r of this.inflight.values()) r.controller.abort(new Error('shutdown'));
      this.logger?.warn({ count: left }, 'shutdown grace period over: unfinished executions stay recorded and resume on the next start');
    }
    // A shared queue hands back what this process still holds (and releases its connections).
    await this.queue.stop();
    return { finished: runs.length - left, abandoned: timedOut ? left : 0 };
  }

  private canRun = (integration: string): boolean =>
    (this.runningBy.get(integration) ?? 0) < Math.min(this.limits.perIntegration, this.concurrencyFor?.(integration) ?? Infinity);

  private pump(): void {
    while (this.pumping && this.running < this.limits.concurrency) {
      const job = this.queue.take(this.canRun);
      if (!job) return;
      this.running++;
      this.runningBy.set(job.integration, (this.runningBy.get(job.integration) ?? 0) + 1);
      const controller = new AbortController();
      const promise = this.run(job, controller.signal)
        .then((saved) => this.queue.settle(job, saved && !this.abandoned ? 'done' : 'abandoned'))
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

  /** A resumed execution that keeps taking processes down is failed instead of run (poison.ts). */
  private async poisoned(job: QueuedJob, log: Logger | undefined): Promise<boolean> {
    const prev = job.previous;
    if (!prev || !interruptedTooOften(prev.status, prev.attempt, this.maxInterruptions)) return false;
    const stored = job.record ?? (await this.store.getExecution(job.id));
    if (stored) await this.store.saveExecution(poisonRecord({ ...stored, attempt: prev.attempt }, this.maxInterruptions), { stored: true });
    log?.error({ attempt: prev.attempt }, 'the process stopped too often while this execution ran; marked failed, not resumed');
    return true;
  }

  /**
   * Saves the finished record; when the record itself cannot be saved (too large to serialise,
   * refused by the database), saves it as failed without its results instead, so it never stays
   * `running` (and is not run again at every start). A store that is unavailable still throws.
   * Resolves to the record as saved.
   */
  private async saveFinal(record: ExecutionRecord, log: Logger | undefined): Promise<ExecutionRecord> {
    const stored = this.live.get(record.id)?.stored ?? true;
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

  /** Resolves true when the run's final state was saved (or there was nothing to run). */
  private async run(job: QueuedJob, signal: AbortSignal): Promise<boolean> {
    const log = this.logger?.child({ executionId: job.id, integration: job.integration });
    let record: ExecutionRecord | undefined;
    try {
      if (await this.poisoned(job, log)) return true;
      const stored = await this.begin(job);
      if (!stored) {
        log?.warn('queued execution vanished from the store (pruned?) or already finished; skipping');
        return true;
      }
      this.live.set(job.id, { record: stored, stored: !job.local });
      this.emit('started', job, stored);
      // The version running now; a reload while the execution runs does not affect it.
      const integration = this.registry.get(job.integration);
      if (!integration) {
        record = {
          ...stored,
          status: 'failed',
          attempt: job.attempt,
          error: { message: `integration ${job.integration} is not loaded (removed, renamed or never valid); the execution cannot run` },
          startedAt: stored.startedAt ?? new Date().toISOString(),
          finishedAt: new Date().toISOString(),
        };
      } else {
        const watcher = this.watchers.get(job.id);
        record = await runExecution({
          integration,
          trigger: stored.trigger,
          services: this.services,
          executionId: job.id,
          attempt: job.attempt,
          test: stored.test,
          state: (await this.stateFor?.(job.integration)) ?? undefined,
          env: this.env,
          signal,
          queuedAt: stored.queuedAt,
          // Progress is shown from memory (liveRecord); the store gets the record when it ends:
          // a crash resumes the execution from its start anyway (at-least-once).
          onProgress: (r) => {
            const entry = this.live.get(job.id);
            if (entry) entry.record = r;
          },
          onLog: (entry, r) => {
            const current = this.live.get(job.id);
            if (current) current.record = r;
            this.emit('log', entry, r);
            if (log && entry.level !== 'debug') log[entry.level]({ step: entry.step }, entry.message);
          },
          // The caller is told something before the end: the run must survive a crash from now on.
          onResponse: watcher
            ? (response) =>
                void this.makeDurable(job.id)
                  .catch((err: Error) => log?.warn({ err: err.message }, 'could not record the synchronous run before its early response'))
                  .then(() => watcher.resolveOutcome({ kind: 'response', response, executionId: job.id }))
            : undefined,
        });
      }
      if (this.abandoned) return false;
      // The live entry holds the engine's record object, which now says how the run ended; until
      // that is saved (and 'finished' emitted), readers see it still running, as the store has it.
      const entry = this.live.get(job.id);
      if (entry) entry.record = { ...record, status: 'running', finishedAt: undefined, durationMs: undefined };
      record = await this.saveFinal(record, log);
      log?.info({ status: record.status, attempt: record.attempt, durationMs: record.durationMs }, `execution ${record.status}`);
      this.emit('finished', record);
      return true;
    } catch (err) {
      if (this.abandoned) return false;
      log?.error({ err: (err as Error).message }, 'execution could not be run or saved');
      if (!record) {
        record = {
          id: job.id,
          integration: job.integration,
          status: 'failed',
          test: false,
          attempt: job.attempt,
          trigger: undefined,
          steps: [],
          log: [],
          error: { message: `execution could not be run: ${(err as Error).message}` },
        };
      }
      return false;
    } finally {
      this.live.delete(job.id);
      const watcher = this.watchers.get(job.id);
      if (watcher && record && !this.abandoned) {
        watcher.resolveOutcome({ kind: 'done', record });
        watcher.resolveDone(record);
      }
    }
  }
}
