/**
 * Keeps every trigger's run-time part in line with the registry: each registered trigger type
 * that has one (src/triggers/registry.ts, `start`) is loaded once when serving starts, and told
 * about every integration as it is loaded, changed, disabled, removed, or switches listening mode
 * (hot reload, POST /api/reload, SIGHUP). Webhook triggers have no run-time part: the HTTP intake
 * looks the integration up per request.
 *
 * Reconciliation is by name and deferred to the next turn of the event loop, so a batch of
 * registry changes (a renamed file: removed + added) is seen as its end state: an integration
 * whose definition did not change keeps its timers and its subscription.
 */
import type { CompiledIntegration } from '../definition/types.js';
import type { TriggerHost } from '../triggers/host.js';
import { triggerTypes, triggerTypeOf } from '../triggers/registry.js';
import type { RunningTrigger, TickSchedule, TriggerSettings, TriggerType } from '../triggers/type.js';
import type { IntegrationRegistry } from './registry.js';

export class TriggerLifecycle {
  private readonly running = new Map<TriggerType, RunningTrigger>();
  private loading?: Promise<void>;
  private loaded = false;
  private readonly dirty = new Set<string>();
  private flushing?: NodeJS.Immediate;
  private started = false;

  constructor(
    private readonly registry: IntegrationRegistry,
    private readonly host: TriggerHost,
    private readonly settings: TriggerSettings = {},
  ) {
    registry.on('change', (c) => {
      if (c.kind === 'error') return; // the last good version keeps running: nothing to do
      this.changed(c.name);
      if (c.kind !== 'removed' && c.previous && c.previous.name !== c.name) this.changed(c.previous.name);
    });
    registry.on('reloaded', () => this.markAll());
  }

  /** Imports the run-time part of every type that has one (once; `validate` never gets here). */
  load(): Promise<void> {
    this.loading ??= Promise.all(
      triggerTypes.map(async (type) => {
        const start = await type.start?.();
        if (start) this.running.set(type, start(this.host, this.settings));
      }),
    ).then(() => {
      this.loaded = true;
    });
    return this.loading;
  }

  /** Starts every loaded integration's trigger (appEvent subscriptions proceed in the background). */
  async start(): Promise<void> {
    if (this.started) return;
    await this.load();
    this.started = true;
    this.markAll();
    this.flush();
  }

  /** The integration's trigger should be looked at again (e.g. its listening mode changed). */
  changed(name: string): void {
    if (!this.started) return;
    this.dirty.add(name);
    this.flushing ??= setImmediate(() => this.flush());
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
    await Promise.all([...this.running.values()].map((r) => r.stop(graceMs)));
  }

  /** Resolves once pending reconciliations, fired ticks, polls and subscription calls are done (tests). */
  async idle(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (this.flushing) this.flush();
      await Promise.all([...this.running.values()].map((r) => r.idle()));
      await new Promise((r) => setImmediate(r));
      if (!this.flushing && ![...this.running.values()].some((r) => r.busy)) return;
    }
  }

  /** Syncs one integration now and waits for it (a failed subscribe tried again, tests). */
  async sync(name: string): Promise<void> {
    await this.load();
    await Promise.all([...this.running].map(([type, r]) => r.sync(name, this.versionFor(type, name))));
  }

  /** The running instance of an integration, e.g. its schedule or poll loop (tests). */
  instance(name: string): unknown {
    for (const r of this.running.values()) {
      const found = r.instance?.(name);
      if (found) return found;
    }
    return undefined;
  }

  /** `$state` for an execution (appEvent: `{subscribe}`). */
  async stateFor(name: string): Promise<Record<string, unknown> | undefined> {
    const i = this.registry.get(name);
    if (!i) return undefined;
    const type = triggerTypeOf(i.trigger);
    if (!type.start) return undefined;
    if (!this.loaded) await this.load(); // executions resumed at start may come before the triggers start
    return this.running.get(type)?.stateFor?.(name);
  }

  /** Per-integration concurrency for the dispatcher (schedules with overlap skip/queue: one at a time). */
  concurrencyFor(name: string): number | undefined {
    const i = this.registry.get(name);
    return i && triggerTypeOf(i.trigger).concurrency?.(i.trigger);
  }

  /**
   * Whether the integration's trigger type runs on its own clock and so has trigger health
   * (schedule, poll) — whether or not a loop runs for it now (a disabled one has none).
   */
  hasHealth(name: string): boolean {
    const i = this.registry.get(name);
    return !!i && !!this.running.get(triggerTypeOf(i.trigger))?.ticks;
  }

  /** The ticks of the integration's loop (trigger health), undefined while none runs. */
  ticks(name: string): TickSchedule | undefined {
    const i = this.registry.get(name);
    return i && this.running.get(triggerTypeOf(i.trigger))?.ticks?.(name);
  }

  /** Extra fields of GET /api/integrations/{name} (`nextRunAt`, `lastPoll`, `subscription`). */
  detail(name: string): Record<string, unknown> | undefined {
    const i = this.registry.get(name);
    return i && this.running.get(triggerTypeOf(i.trigger))?.detail?.(name);
  }

  private markAll(): void {
    for (const e of this.registry.entries()) this.changed(e.name);
    for (const r of this.running.values()) for (const name of r.names?.() ?? []) this.changed(name);
  }

  private flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const names = [...this.dirty];
    this.dirty.clear();
    for (const name of names) for (const [type, r] of this.running) void r.sync(name, this.versionFor(type, name));
  }

  /** The loaded version of `name` when it is of this type; otherwise undefined (its trigger of this type, if any, goes). */
  private versionFor(type: TriggerType, name: string): CompiledIntegration | undefined {
    const i = this.registry.get(name);
    return i && triggerTypeOf(i.trigger) === type ? i : undefined;
  }
}
