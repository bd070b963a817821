/**
 * The process runtime behind `hcm-runner serve`: the integration registry, webhook tokens,
 * listening state, the dispatcher (queue + workers) and retention. The HTTP server is a thin layer
 * over it; the hot-reload watcher and the schedule/poll loops plug into the same object.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { ExecutionTracer } from '../common/tracing.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../connectors/result-limit.js';
import type { FileLimits } from '../definition/limits.js';
import type { RuntimeServices } from '../connectors/types.js';
import type { ExecutionStatus } from '../engine/record.js';
import type { CancelOutcome, CaptureBounds } from '../store/types.js';
import type { Capture, CaptureSummary, Store } from '../store/types.js';
import { ExecutionDispatcher } from './dispatch/dispatcher.js';
import type { DispatcherLimits } from './dispatch/limits.js';
import type { ExecutionQueue } from '../store/queue.js';
import { logRegistryChange } from './change-log.js';
import { IntegrationRegistry, type RegistryEntry } from './registry.js';
import { startRetention } from './retention.js';
import { TriggerLifecycle } from './trigger-lifecycle.js';
import { type TriggerHealth, TriggerHealthTracker } from './trigger-health.js';
import { FolderWatcher, type WatcherOptions } from './watcher.js';
import { acceptsWebhooks } from '../triggers/registry.js';
import { systemClock, type Clock } from '../triggers/schedule/clock.js';
import { DEFAULT_INTAKE_LIMITS, type IntakeLimits } from '../triggers/webhook/limits.js';
import { Waker } from './waker.js';
import { WebhookTokens } from './webhook-tokens.js';

export interface RuntimeOptions {
  /** The integrations folder. */
  dir: string;
  store: Store;
  /** Base of webhook URLs and the OAuth redirect URL, without a trailing slash. */
  publicUrl: string;
  limits?: Partial<DispatcherLimits>;
  /** Days finished executions are kept (default 14; 0 keeps them forever). */
  retentionDays?: number;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  queue?: ExecutionQueue;
  /** How often the listening set is re-read from the store (other replicas may change it). */
  listeningRefreshMs?: number;
  /** Hot reload: watch the folder (default on; `false` = only POST /api/reload and SIGHUP reload). */
  watch?: boolean | WatcherOptions;
  /** Time source of schedules and polls (default the system clock; tests pass a ManualClock). */
  clock?: Clock;
  /** Wait before a failed appEvent subscribe is tried again (default 60 s; 0 = never). */
  subscribeRetryMs?: number;
  /** Webhook parsing limits and redacted headers (default: the built-in ones). */
  intake?: IntakeLimits;
  /** How much of listening-mode captures is kept (default: src/store/captures.ts). */
  captures?: CaptureBounds;
  /** Whether core.http may call private and loopback addresses (docs/server.md "Outbound policy"). */
  allowPrivateNetwork?: boolean;
  /** Largest HTTP response body a step reads (the HCM_RUNNER_MAX_RESULT_BYTES setting; default 16 MiB). */
  maxResultBytes?: number;
  /** Waiting executions (core.wait) one integration may have (HCM_RUNNER_MAX_WAITING; default 10,000). */
  maxWaiting?: number;
  /** Bounds on one integration file (HCM_RUNNER_MAX_FILE_BYTES, HCM_RUNNER_MAX_STEPS; default the built-in ones). */
  fileLimits?: FileLimits;
  /** Traces executions when tracing is on (docs/operations.md "Tracing"); absent when off. */
  tracer?: ExecutionTracer;
}

/** An execution changed state in this process (queued here, started or finished here). */
export interface ExecutionEvent {
  id: string;
  integration: string;
  status: ExecutionStatus;
  test: boolean;
  attempt: number;
  /** ISO time of the change. */
  at: string;
}

export interface RuntimeEvents {
  /** Listening mode switched (appEvent triggers subscribe/unsubscribe on it). */
  listening: [name: string, on: boolean];
  /** Live feed of the console and of GET /api/events. */
  execution: [ExecutionEvent];
  /** A request to a test URL was captured (listening mode), after the store saved it: its summary, never its body. */
  capture: [CaptureSummary];
  /** Shutdown began: live streams end so the HTTP server can close. */
  stopping: [];
}

export class Runtime extends EventEmitter<RuntimeEvents> {
  readonly registry: IntegrationRegistry;
  readonly dispatcher: ExecutionDispatcher;
  readonly tokens: WebhookTokens;
  readonly store: Store;
  readonly services: RuntimeServices;
  readonly publicUrl: string;
  readonly logger?: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly intake: IntakeLimits;
  readonly captureBounds: CaptureBounds;
  /**
   * Extra fields for GET /api/integrations/{name}: the schedule/poll loops register a provider
   * returning e.g. `{nextRunAt}` for the integrations they drive.
   */
  readonly detailProviders: Array<(name: string) => Record<string, unknown> | undefined> = [];
  /** The triggers' run-time parts: schedules, polls, appEvent subscriptions (src/runtime/trigger-lifecycle.ts). */
  readonly triggers: TriggerLifecycle;
  /** Health of schedules and polls: last run, last success, failures in a row (src/runtime/trigger-health.ts). */
  readonly health: TriggerHealthTracker;
  /** Resumes `waiting` executions when they are due (src/runtime/waker.ts). */
  readonly waker: Waker;
  private readonly clock: Clock;
  private watcher?: FolderWatcher;
  private loaded = false;
  private listening = new Set<string>();
  private timers: Array<{ stop(): void }> = [];
  private readonly opts: RuntimeOptions;

  constructor(opts: RuntimeOptions) {
    super();
    this.opts = opts;
    this.store = opts.store;
    this.publicUrl = opts.publicUrl.replace(/\/+$/, '');
    this.logger = opts.logger;
    this.env = opts.env ?? process.env;
    this.registry = new IntegrationRegistry(opts.dir, opts.fileLimits);
    this.health = new TriggerHealthTracker(opts.store, opts.logger);
    this.clock = opts.clock ?? systemClock;
    this.tokens = new WebhookTokens(opts.store);
    this.intake = opts.intake ?? DEFAULT_INTAKE_LIMITS;
    this.captureBounds = opts.captures ?? {};
    this.services = {
      tokens: opts.store.tokens,
      publicUrl: this.publicUrl,
      allowPrivateNetwork: opts.allowPrivateNetwork === true,
      maxResultBytes: opts.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    };
    this.dispatcher = new ExecutionDispatcher({
      store: opts.store,
      registry: this.registry,
      services: this.services,
      limits: opts.limits,
      queue: opts.queue,
      env: this.env,
      logger: opts.logger,
      stateFor: (name) => this.triggers.stateFor(name),
      tracer: opts.tracer,
      concurrencyFor: (name) => this.triggers.concurrencyFor(name),
      durable: { publicUrl: this.publicUrl, maxWaiting: opts.maxWaiting },
    });
    this.waker = new Waker({ queue: this.dispatcher.queue, store: opts.store, logger: opts.logger });
    const dispatcher = this.dispatcher;
    this.triggers = new TriggerLifecycle(
      this.registry,
      {
        store: this.store,
        clock: this.clock,
        services: this.services,
        env: this.env,
        logger: this.logger,
        submit: (executions) => dispatcher.submit(executions),
        adopt: (executions) => dispatcher.adopt(executions),
        checkCapacity: (count) => dispatcher.checkCapacity(count),
        webhookUrls: async (name) => {
          await this.tokens.tokenFor(name);
          return this.webhookUrls(name)!;
        },
        isListening: (name) => this.isListening(name),
        current: (name) => this.registry.get(name),
        reportRun: (name, outcome) => this.health.noteRun(name, outcome),
      },
      { subscribeRetryMs: opts.subscribeRetryMs },
    );
    this.on('listening', (name) => this.triggers.changed(name));
    this.detailProviders.push((name) => this.triggers.detail(name));
    // One stream per console tab / API client listens; no leak warning for them.
    this.setMaxListeners(0);
    // A live-feed listener must never fail the work it reports on (a submit, a run). Nothing is
    // built while no stream listens (the usual case on the intake and execution paths).
    const event = (e: Omit<ExecutionEvent, 'at'>) => {
      if (this.listenerCount('execution') === 0) return;
      try {
        this.emit('execution', { ...e, at: new Date().toISOString() });
      } catch (err) {
        this.logger?.warn({ err: (err as Error).message }, 'execution event listener failed');
      }
    };
    this.dispatcher.on('queued', (list) => {
      for (const e of list) event({ id: e.id, integration: e.integration, status: 'queued', test: e.test, attempt: e.attempt ?? 1 });
    });
    this.dispatcher.on('started', (job, stored) =>
      event({ id: job.id, integration: job.integration, status: 'running', test: stored.test, attempt: job.attempt }),
    );
    this.dispatcher.on('finished', (r) => event({ id: r.id, integration: r.integration, status: r.status, test: r.test, attempt: r.attempt }));
    this.dispatcher.on('waiting', (r) => {
      // The waker's timer is aimed at it (the store's next wakeAt is read only once a sweep ends).
      this.waker.noteWakeAt(r.wakeAt);
      event({ id: r.id, integration: r.integration, status: r.status, test: r.test, attempt: r.attempt });
    });
    // Executions of schedules and polls succeed or fail for their trigger's health (test runs do not count).
    this.dispatcher.on('finished', (r) => {
      if (!r.test && this.triggers.hasHealth(r.integration)) this.health.noteExecution(r);
    });
    // New or renamed webhook integrations get their token before the first request needs it.
    this.registry.on('change', (c) => {
      if ((c.kind === 'added' || c.kind === 'updated') && acceptsWebhooks(c.current)) void this.tokens.tokenFor(c.name).catch(() => undefined);
      logRegistryChange(c, {
        logger: this.logger,
        announce: this.loaded,
        webhookUrls: (name) => this.tokens.tokenFor(name).then(() => this.webhookUrls(name)),
      });
    });
  }

  /** Loads the folder, warms caches, resumes unfinished executions, starts housekeeping. */
  async start(): Promise<RegistryEntry[]> {
    const entries = await this.reload();
    this.loaded = true; // from now on each change is logged (the banner lists the first load)
    await this.refreshListening();
    const refresh = setInterval(() => void this.refreshListening().catch(() => undefined), this.opts.listeningRefreshMs ?? 5000);
    refresh.unref();
    this.timers.push({ stop: () => clearInterval(refresh) });
    this.timers.push(startRetention(this.store, { days: this.opts.retentionDays, logger: this.logger }));
    await this.dispatcher.recover();
    // Waits that came due while the process was down run now; then on time.
    this.waker.start();
    await this.triggers.start();
    if (this.opts.watch !== false) {
      this.watcher = new FolderWatcher(this.registry, { logger: this.logger, ...(typeof this.opts.watch === 'object' ? this.opts.watch : {}) });
      this.watcher.start();
    }
    return entries;
  }

  /** Re-reads the folder now (POST /api/reload, SIGHUP). */
  async reload(): Promise<RegistryEntry[]> {
    const entries = await this.registry.loadAll();
    await Promise.all(entries.filter((e) => acceptsWebhooks(e.integration)).map((e) => this.tokens.tokenFor(e.name)));
    return entries;
  }

  /**
   * `health` of GET /api/integrations/{name}, the gauges and the console's marks: undefined for
   * an integration whose trigger does not run on its own clock (webhook, appEvent) or that is not loaded.
   */
  async triggerHealth(name: string): Promise<TriggerHealth | undefined> {
    if (!this.triggers.hasHealth(name)) return undefined;
    const ticks = this.triggers.ticks(name) ?? { dueBy: () => undefined };
    return this.health.health(name, ticks, this.clock.now());
  }

  webhookUrls(name: string): { live: string; test: string } | undefined {
    const token = this.tokens.cachedToken(name);
    if (!token) return undefined;
    return { live: `${this.publicUrl}/webhooks/${token}`, test: `${this.publicUrl}/webhooks/test/${token}` };
  }

  isListening(name: string): boolean {
    return this.listening.has(name);
  }

  async setListening(name: string, on: boolean): Promise<void> {
    await this.store.setListening(name, on);
    const was = this.listening.has(name);
    if (on) this.listening.add(name);
    else this.listening.delete(name);
    if (was !== on) this.emit('listening', name, on);
  }

  /** Saves a listening-mode capture (within the capture bounds) and tells live streams its summary. */
  async addCapture(capture: Capture): Promise<void> {
    const summary = await this.store.addCapture(capture, this.captureBounds);
    this.emit('capture', summary);
  }

  private async refreshListening(): Promise<void> {
    this.listening = new Set(await this.store.listeningIntegrations());
  }

  /**
   * `POST /api/executions/{id}/cancel`: queued or waiting → `cancelled` at once; running → stopped
   * at its next step boundary, its running step's request aborted (ExecutionDispatcher.cancel).
   */
  cancel(id: string): Promise<CancelOutcome> {
    return this.dispatcher.cancel(id);
  }

  /** A callback request was recorded (`/callbacks/{token}`): its waiting execution is due now. */
  callbackReceived(): void {
    this.waker.nudge();
  }

  /** Stops taking work and waits up to `graceMs` for running executions (see ExecutionDispatcher.stop). */
  async stop(graceMs: number): Promise<{ finished: number; abandoned: number }> {
    this.emit('stopping');
    for (const t of this.timers) t.stop();
    this.timers = [];
    // Before the queue stops: no wake-up after this.
    await this.waker.stop();
    this.watcher?.close();
    this.watcher = undefined;
    // One grace period for everything: triggers wind down first (a tick being fired still gets
    // queued durably), then the dispatcher gets what is left of the same deadline.
    const deadline = Date.now() + graceMs;
    await this.triggers.stop(graceMs);
    const stopped = await this.dispatcher.stop(Math.max(0, deadline - Date.now()));
    await this.health.idle();
    return stopped;
  }
}
