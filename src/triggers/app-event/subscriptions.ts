/**
 * The appEvent trigger's subscription lifecycle (the "webhook-powered app event trigger"): the
 * `subscribe` steps register the integration's webhook URL with a third party when the
 * integration becomes active, the `unsubscribe` steps remove it when it stops being active.
 * Events then arrive at the live URL and run like webhooks, with `$state.subscribe.<stepId>`.
 *
 * Active = loaded, of type appEvent, and enabled — or in listening mode (then the *test* URL is
 * the one to register: `$trigger.mode` is `test` and `$trigger.webhookUrl` the test URL).
 *
 * State (store trigger state of the integration):
 * - `subscribe` = `{id, fingerprint, url, mode, subscribedAt, results}`: `results` are the subscribe
 *   steps' results by step id. `fingerprint` hashes what the subscription depends on (the subscribe
 *   steps, config, connections): a restart or reload with the same fingerprint and the same URL
 *   neither unsubscribes nor subscribes again.
 * - `subscribeLast` = `{id}`: the last subscription ended (or attempt failed); part of the claim
 *   key so that replicas subscribe once per generation.
 *
 * Every subscribe and unsubscribe is claimed in the store (`claimTick`), so with several replicas
 * exactly one of them calls the third party. Operations of one integration run one at a time.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { CompiledIntegration, CompiledTrigger } from '../../definition/types.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { runExecution } from '../../engine/run.js';
import type { TimerHandle } from '../schedule/clock.js';
import type { TriggerHost } from '../host.js';

export type AppEventTriggerDef = Extract<CompiledTrigger, { type: 'appEvent' }>;

export const SUBSCRIBE_STATE_KEY = 'subscribe';
export const SUBSCRIBE_LAST_KEY = 'subscribeLast';

export interface SubscriptionState {
  id: string;
  fingerprint: string;
  url: string;
  mode: 'live' | 'test';
  subscribedAt: string;
  /** `$state.subscribe`: each subscribe step's results by step id. */
  results: Record<string, unknown>;
}

/** `$trigger` of the subscribe and unsubscribe steps. */
export interface SubscriptionTriggerData {
  webhookUrls: { live: string; test: string };
  /** The URL to register: the live URL, or the test URL in listening mode of a disabled integration. */
  webhookUrl: string;
  mode: 'live' | 'test';
}

export interface SubscriptionStatus {
  status: 'subscribed' | 'unsubscribed' | 'failed';
  mode?: 'live' | 'test';
  url?: string;
  subscribedAt?: string;
  error?: string;
  at: string;
}

export interface AppEventOptions {
  /** Wait before a failed subscribe is tried again (default 60 s; 0 = no retry). */
  retryMs?: number;
}

/** What a subscription depends on: a change re-subscribes, anything else does not. */
export function subscriptionFingerprint(integration: CompiledIntegration): string {
  const t = integration.trigger as AppEventTriggerDef;
  const json = JSON.stringify({ subscribe: t.subscribe, config: integration.config, connections: integration.connections }, (k, v) => {
    if (k === 'expression' || k === 'position' || k === 'pointer') return undefined;
    if (k === 'action' && v && typeof v === 'object' && typeof (v as { key?: unknown }).key === 'string') return (v as { key: string }).key;
    return v;
  });
  return createHash('sha256').update(json).digest('hex').slice(0, 32);
}

export class AppEventSubscriptions {
  private readonly chains = new Map<string, Promise<void>>();
  /** The appEvent version each integration was last synced with (its unsubscribe steps end the subscription). */
  private readonly known = new Map<string, CompiledIntegration>();
  private readonly statuses = new Map<string, SubscriptionStatus>();
  private readonly retries = new Map<string, TimerHandle>();
  private readonly controller = new AbortController();
  private stopped = false;

  constructor(
    private readonly host: TriggerHost,
    private readonly opts: AppEventOptions = {},
  ) {}

  /** Brings the integration's subscription in line with `current` (queued behind earlier operations). */
  sync(name: string, current: CompiledIntegration | undefined): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const prev = this.chains.get(name) ?? Promise.resolve();
    const next = prev
      .then(() => this.apply(name, current))
      .catch((err) => {
        this.host.logger?.error({ integration: name, err: (err as Error).message }, 'appEvent: subscription sync failed');
      });
    this.chains.set(name, next);
    void next.finally(() => {
      if (this.chains.get(name) === next) this.chains.delete(name);
    });
    return next;
  }

  /** Whether the integration has (or had, until its pending operations finish) an appEvent version here. */
  tracks(name: string): boolean {
    return this.known.has(name) || this.chains.has(name);
  }

  /** Names with a subscription operation pending or running. */
  get busy(): boolean {
    return this.chains.size > 0;
  }

  async idle(): Promise<void> {
    while (this.chains.size) await Promise.allSettled([...this.chains.values()]);
  }

  status(name: string): SubscriptionStatus | undefined {
    return this.statuses.get(name);
  }

  /** `$state` for an execution of an appEvent integration. */
  async stateFor(name: string): Promise<Record<string, unknown>> {
    const s = (await this.host.store.getState(name, SUBSCRIBE_STATE_KEY)) as SubscriptionState | undefined;
    return { subscribe: s?.results ?? {} };
  }

  /**
   * Stops retries; waits up to `graceMs` for operations in progress, then cancels them. Shutting
   * down is not disabling: nothing is unsubscribed.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopped = true;
    for (const t of this.retries.values()) t.cancel();
    this.retries.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    this.controller.abort(new Error('shutting down'));
  }

  private async apply(name: string, current: CompiledIntegration | undefined): Promise<void> {
    this.retries.get(name)?.cancel();
    this.retries.delete(name);
    const prev = this.known.get(name);
    const def = current?.trigger.type === 'appEvent' ? current : undefined;
    const store = this.host.store;
    const state = (await store.getState(name, SUBSCRIBE_STATE_KEY)) as SubscriptionState | undefined;
    const active = !!def && (def.enabled || this.host.isListening(name));
    try {
      if (active) {
        const urls = await this.host.webhookUrls(name);
        const mode = def.enabled ? 'live' : 'test';
        const url = urls[mode];
        const fingerprint = subscriptionFingerprint(def);
        if (state && state.fingerprint === fingerprint && state.url === url) {
          this.statuses.set(name, { status: 'subscribed', mode: state.mode, url: state.url, subscribedAt: state.subscribedAt, at: this.nowIso() });
          return;
        }
        if (state) await this.unsubscribe(name, prev ?? def, state, urls);
        await this.subscribe(name, def, fingerprint, urls, mode);
      } else if (state) {
        const using = prev ?? def;
        if (!using) {
          this.host.logger?.warn(
            { integration: name },
            'appEvent: no definition left to run the unsubscribe steps with; the subscription state is dropped',
          );
          await this.forget(name, state.id);
          return;
        }
        await this.unsubscribe(name, using, state, await this.host.webhookUrls(name));
      } else if (!def) {
        this.statuses.delete(name);
      } else {
        this.statuses.set(name, { status: 'unsubscribed', at: this.nowIso() });
      }
    } finally {
      if (def) this.known.set(name, def);
      else this.known.delete(name);
    }
  }

  private async subscribe(
    name: string,
    def: CompiledIntegration,
    fingerprint: string,
    urls: { live: string; test: string },
    mode: 'live' | 'test',
  ): Promise<void> {
    const store = this.host.store;
    const url = urls[mode];
    const last = (await store.getState(name, SUBSCRIBE_LAST_KEY)) as { id?: string } | undefined;
    if (!(await store.claimTick(name, `appEvent:subscribe:${fingerprint}:${url}:${last?.id ?? 'first'}`))) {
      this.host.logger?.debug({ integration: name }, 'appEvent: another replica subscribes');
      return;
    }
    const trigger: SubscriptionTriggerData = { webhookUrls: urls, webhookUrl: url, mode };
    const record = await this.run(def, (def.trigger as AppEventTriggerDef).subscribe, trigger, {});
    if (record.status !== 'succeeded') {
      const error = record.error?.message ?? 'the subscribe steps failed';
      // A new generation, so the retry (here or on another replica) can claim again.
      await store.setState(name, SUBSCRIBE_LAST_KEY, { id: `failed-${randomUUID()}` });
      this.statuses.set(name, { status: 'failed', mode, url, error, at: this.nowIso() });
      this.host.logger?.error({ integration: name, err: error }, 'appEvent: subscribe failed; the integration receives no events until it succeeds');
      this.scheduleRetry(name);
      return;
    }
    const state: SubscriptionState = { id: randomUUID(), fingerprint, url, mode, subscribedAt: this.nowIso(), results: stepResults(record) };
    await store.setState(name, SUBSCRIBE_STATE_KEY, state);
    this.statuses.set(name, { status: 'subscribed', mode, url, subscribedAt: state.subscribedAt, at: state.subscribedAt });
    this.host.logger?.info({ integration: name, mode, url }, 'appEvent: subscribed');
  }

  private async unsubscribe(name: string, def: CompiledIntegration, state: SubscriptionState, urls: { live: string; test: string }): Promise<void> {
    const store = this.host.store;
    if (await store.claimTick(name, `appEvent:unsubscribe:${state.id}`)) {
      const steps = def.trigger.type === 'appEvent' ? def.trigger.unsubscribe : [];
      const trigger: SubscriptionTriggerData = { webhookUrls: urls, webhookUrl: state.url, mode: state.mode };
      const record = await this.run(def, steps, trigger, { subscribe: state.results });
      if (record.status !== 'succeeded') {
        this.host.logger?.error(
          { integration: name, err: record.error?.message },
          'appEvent: unsubscribe failed; the third party may keep sending events (they get 404 while the integration is not active)',
        );
      } else {
        this.host.logger?.info({ integration: name, url: state.url }, 'appEvent: unsubscribed');
      }
    }
    await this.forget(name, state.id);
  }

  private async forget(name: string, id: string): Promise<void> {
    await this.host.store.setState(name, SUBSCRIBE_LAST_KEY, { id });
    await this.host.store.deleteState(name, SUBSCRIBE_STATE_KEY);
    this.statuses.set(name, { status: 'unsubscribed', at: this.nowIso() });
  }

  private run(
    def: CompiledIntegration,
    steps: AppEventTriggerDef['subscribe'],
    trigger: SubscriptionTriggerData,
    state: Record<string, unknown>,
  ): Promise<ExecutionRecord> {
    return runExecution({
      integration: def,
      trigger,
      steps,
      state,
      services: this.host.services,
      env: this.host.env,
      signal: this.controller.signal,
      executionId: `subscription-${randomUUID()}`,
      onLog: (entry) => {
        if (entry.level !== 'debug') this.host.logger?.[entry.level]({ integration: def.name, step: entry.step }, `appEvent: ${entry.message}`);
      },
    });
  }

  private scheduleRetry(name: string): void {
    const ms = this.opts.retryMs ?? 60_000;
    if (!ms || this.stopped) return;
    this.retries.set(
      name,
      this.host.clock.setTimer(() => {
        this.retries.delete(name);
        void this.sync(name, this.host.current(name));
      }, ms),
    );
  }

  private nowIso(): string {
    return new Date(this.host.clock.now()).toISOString();
  }
}

function stepResults(record: ExecutionRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of record.steps) if (s.status === 'succeeded') out[s.id] = s.results ?? null;
  return out;
}
