/**
 * The TriggerManager: keeps the running trigger instances in line with the registry. It starts
 * and stops the schedule and poll loops of each integration version and drives the appEvent
 * subscriptions, reacting to registry changes (hot reload, POST /api/reload, SIGHUP) and to
 * listening mode. Webhook triggers need nothing here: the HTTP intake looks the integration up
 * per request.
 *
 * Reconciliation is by name and deferred to the next turn of the event loop, so a batch of
 * registry changes (a renamed file: removed + added) is seen as its end state: an integration
 * whose definition did not change keeps its timers and its subscription.
 */
import type { CompiledIntegration } from '../definition/types.js';
import { AppEventSubscriptions, type AppEventHost, type AppEventOptions } from '../triggers/app-event/index.js';
import { PollTrigger } from '../triggers/poll/index.js';
import { ScheduleTrigger, scheduleConcurrency, systemClock, type Clock } from '../triggers/schedule/index.js';
import type { Runtime } from './runtime.js';

export interface TriggerManagerOptions {
  /** Time source for schedules and polls (tests inject a ManualClock). */
  clock?: Clock;
  appEvent?: AppEventOptions;
}

type Timed = ScheduleTrigger | PollTrigger;

export class TriggerManager {
  readonly clock: Clock;
  readonly appEvents: AppEventSubscriptions;
  private readonly timed = new Map<string, Timed>();
  private readonly dirty = new Set<string>();
  private flushing?: NodeJS.Immediate;
  private started = false;
  private readonly host: AppEventHost;

  constructor(
    private readonly runtime: Runtime,
    opts: TriggerManagerOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    const dispatcher = runtime.dispatcher;
    this.host = {
      store: runtime.store,
      clock: this.clock,
      services: runtime.services,
      env: runtime.env,
      logger: runtime.logger,
      submit: (executions) => dispatcher.submit(executions),
      adopt: (executions) => dispatcher.adopt(executions),
      checkCapacity: (count) => dispatcher.checkCapacity(count),
      webhookUrls: async (name) => {
        await runtime.tokens.tokenFor(name);
        return runtime.webhookUrls(name)!;
      },
      isListening: (name) => runtime.isListening(name),
      current: (name) => runtime.registry.get(name),
    };
    this.appEvents = new AppEventSubscriptions(this.host, opts.appEvent);
    runtime.registry.on('change', (c) => {
      if (c.kind === 'error') return; // the last good version keeps running: nothing to do
      this.mark(c.name);
      if (c.kind !== 'removed' && c.previous && c.previous.name !== c.name) this.mark(c.previous.name);
    });
    runtime.registry.on('reloaded', () => this.markAll());
    runtime.on('listening', (name) => this.mark(name));
    runtime.detailProviders.push((name) => this.detail(name));
  }

  /** Starts every loaded integration's trigger (appEvent subscriptions proceed in the background). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.markAll();
    this.flush();
  }

  /**
   * Stops the loops (polls in progress are cancelled and commit nothing), waits up to `graceMs`
   * for subscription calls in progress. Nothing is unsubscribed: a shutdown is not a disable.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.started = false;
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    this.dirty.clear();
    const instances = [...this.timed.values()];
    this.timed.clear();
    for (const t of instances) t.stop();
    await Promise.all([Promise.allSettled(instances.map((t) => t.idle())), this.appEvents.stop(graceMs)]);
  }

  /** Resolves once pending reconciliations, fired ticks, polls and subscription calls are done (tests). */
  async idle(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (this.flushing) this.flush();
      await Promise.all([...[...this.timed.values()].map((t) => t.idle()), this.appEvents.idle()]);
      await new Promise((r) => setImmediate(r));
      if (!this.flushing && !this.appEvents.busy) return;
    }
  }

  /** The running schedule or poll instance of an integration (tests, admin). */
  instance(name: string): Timed | undefined {
    return this.timed.get(name);
  }

  /** `$state` for an execution: `{subscribe}` for appEvent integrations. */
  async stateFor(name: string): Promise<Record<string, unknown> | undefined> {
    const i = this.runtime.registry.get(name);
    return i?.trigger.type === 'appEvent' ? this.appEvents.stateFor(name) : undefined;
  }

  /** Per-integration concurrency for the dispatcher (schedules with overlap skip/queue: one at a time). */
  concurrencyFor(name: string): number | undefined {
    return scheduleConcurrency(this.runtime.registry.get(name));
  }

  /** Extra fields of GET /api/integrations/{name}. */
  detail(name: string): Record<string, unknown> | undefined {
    const i = this.runtime.registry.get(name);
    if (!i) return undefined;
    if (i.trigger.type === 'schedule' || i.trigger.type === 'poll') {
      const inst = this.timed.get(name);
      const out: Record<string, unknown> = { nextRunAt: inst?.nextRunAt?.toISOString() ?? null };
      if (inst instanceof PollTrigger && inst.last) out.lastPoll = inst.last;
      return out;
    }
    if (i.trigger.type === 'appEvent') {
      const s = this.appEvents.status(name);
      return s ? { subscription: s } : undefined;
    }
    return undefined;
  }

  private markAll(): void {
    for (const e of this.runtime.registry.entries()) this.mark(e.name);
    for (const name of this.timed.keys()) this.mark(name);
  }

  private mark(name: string): void {
    if (!this.started) return;
    this.dirty.add(name);
    this.flushing ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const names = [...this.dirty];
    this.dirty.clear();
    for (const name of names) this.reconcile(name);
  }

  private reconcile(name: string): void {
    const desired = this.runtime.registry.get(name);
    const current = this.timed.get(name);
    const wanted = desired?.enabled && (desired.trigger.type === 'schedule' || desired.trigger.type === 'poll') ? desired : undefined;
    if (current && (!wanted || !sameVersion(current.integration, wanted))) {
      current.stop();
      this.timed.delete(name);
      this.runtime.logger?.info({ integration: name }, `${current.integration.trigger.type} stopped`);
    }
    if (wanted && !this.timed.has(name)) {
      const inst = wanted.trigger.type === 'schedule' ? new ScheduleTrigger(wanted, this.host) : new PollTrigger(wanted, this.host);
      this.timed.set(name, inst);
      inst.start();
      this.runtime.logger?.info({ integration: name, nextRunAt: inst.nextRunAt?.toISOString() }, `${wanted.trigger.type} started`);
    }
    if (desired?.trigger.type === 'appEvent' || this.appEvents.tracks(name)) void this.appEvents.sync(name, desired);
  }
}

function sameVersion(a: CompiledIntegration, b: CompiledIntegration): boolean {
  return a === b || (a.hash === b.hash && a.name === b.name);
}
