/**
 * The poll trigger of one integration version (the "polling app event trigger"): on its own
 * schedule it runs the poll action through the engine, picks the items out of the results, and
 * starts executions for the items whose key it has not seen before.
 *
 * Guarantees (docs/triggers.md "Poll", docs/promises.md):
 * - The first poll records a baseline (the keys only, no execution).
 * - Seen keys and the new executions are committed in ONE store transaction (`commitPoll`), and
 *   only then handed to the dispatcher: a crash before the commit loses nothing (the next poll
 *   sees the same items as new), a crash after it repeats nothing (the executions are recorded
 *   and resumed at start; the keys are seen).
 * - The seen-set is bounded (`maxSeen`, default 10 000, newest kept; every key of the latest
 *   response counts as newest).
 * - A failing poll (action error, expression error, backlog full) commits nothing, is logged with
 *   the integration's name, and is tried again at the next tick.
 * - Polls of one integration never overlap in a process (a tick that comes while the previous
 *   poll still runs is skipped); each tick is claimed in the store, so one replica polls it.
 */
import { randomUUID } from 'node:crypto';
import { newExecutionId } from '../../common/ids.js';
import type { CompiledIntegration, CompiledTrigger, ScheduleTiming } from '../../definition/types.js';
import { bareScope } from '../../engine/connections.js';
import { concurrencyKeyOf } from '../../engine/concurrency-key.js';
import { correlationKeyOf } from '../../engine/correlation-key.js';
import { evaluateTemplate, type Scope } from '../../engine/evaluate.js';
import { runExecution } from '../../engine/run.js';
import type { NewExecution } from '../../store/types.js';
import type { TriggerHost } from '../host.js';
import { Ticker } from '../schedule/ticker.js';

export type PollTriggerDef = Extract<CompiledTrigger, { type: 'poll' }>;

export const POLL_STATE_KEY = 'poll';

/** Trigger state `poll`: set once the baseline is recorded. */
export interface PollState {
  baselineAt?: string;
}

export interface PollOutcome {
  status: 'baseline' | 'polled' | 'failed' | 'skipped';
  polledAt: string;
  /** Items in the response. */
  items?: number;
  /** Items not seen before (each one, or all in one batch, started an execution). */
  newItems?: number;
  executionIds?: string[];
  error?: string;
}

export class PollTrigger {
  private readonly ticker: Ticker;
  private readonly trigger: PollTriggerDef;
  private running?: Promise<PollOutcome>;
  private controller = new AbortController();
  private stopped = false;
  /** The last poll's outcome (GET /api/integrations/{name} shows it as `lastPoll`). */
  last?: PollOutcome;

  constructor(
    readonly integration: CompiledIntegration,
    private readonly host: TriggerHost,
  ) {
    if (integration.trigger.type !== 'poll') throw new Error(`${integration.name} is not a poll integration`);
    this.trigger = integration.trigger;
    this.ticker = new Ticker(this.trigger, host.clock, (scheduledAt) => void this.tick(scheduledAt));
  }

  get name(): string {
    return this.integration.name;
  }

  get nextRunAt(): Date | undefined {
    return this.ticker.nextRunAt;
  }

  get timing(): ScheduleTiming {
    return this.trigger;
  }

  /** Clock time the loop started (trigger health counts missed ticks from it at the earliest). */
  startedAt?: number;

  start(): void {
    this.startedAt = this.host.clock.now();
    this.ticker.start();
  }

  /** Stops the timer and cancels a poll in progress (it commits nothing once cancelled). */
  stop(): void {
    this.stopped = true;
    this.ticker.stop();
    this.controller.abort(new Error('poll trigger stopped'));
  }

  /** Resolves when the poll in progress (if any) has finished. */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  /** One tick: claimed cluster-wide, skipped while this integration's previous poll still runs. */
  async tick(scheduledAt: Date): Promise<PollOutcome> {
    const polledAt = new Date(this.host.clock.now()).toISOString();
    if (this.running) {
      this.host.logger?.info({ integration: this.name, scheduledAt: scheduledAt.toISOString() }, 'poll: previous poll still running; tick skipped');
      return { status: 'skipped', polledAt };
    }
    const run = (async (): Promise<PollOutcome> => {
      try {
        if (!(await this.host.store.claimTick(this.name, scheduledAt.toISOString()))) return { status: 'skipped', polledAt };
      } catch (err) {
        return this.failed(polledAt, err);
      }
      // Polls of one integration never overlap, across replicas too: the whole poll (the call to
      // the third party, reading the seen keys, the commit) runs under the store's cluster-wide
      // lock, so a replica polls only after the previous poll committed and never takes an item
      // for new that the other one is about to commit. The lock is a lease: no database
      // connection is held while the third party answers.
      try {
        return await this.host.store.lock(`poll:${this.name}`, () => this.poll(scheduledAt, polledAt), this.controller.signal);
      } catch (err) {
        return this.failed(polledAt, err);
      }
    })();
    this.running = run;
    try {
      return this.report(await run);
    } finally {
      this.running = undefined;
    }
  }

  /** Trigger health: a poll with new items succeeds or fails with its executions; any other poll by itself. */
  private report(outcome: PollOutcome): PollOutcome {
    const at = outcome.polledAt;
    if (outcome.status === 'failed') {
      if (!this.stopped) this.host.reportRun?.(this.name, { status: 'failed', at, error: outcome.error });
    } else if (outcome.status !== 'skipped') {
      this.host.reportRun?.(this.name, { status: outcome.newItems ? 'started' : 'succeeded', at });
    }
    return outcome;
  }

  private failed(polledAt: string, err: unknown): PollOutcome {
    const message = (err as Error)?.message ?? String(err);
    this.last = { status: 'failed', polledAt, error: message };
    if (!this.stopped) this.host.logger?.error({ integration: this.name, err: message }, 'poll failed; trying again at the next tick');
    return this.last;
  }

  private async poll(scheduledAt: Date, polledAt: string): Promise<PollOutcome> {
    const { host, integration, trigger } = this;
    const name = this.name;
    const signal = this.controller.signal;
    try {
      const record = await runExecution({
        integration,
        trigger: { scheduledAt: scheduledAt.toISOString(), polledAt },
        steps: [trigger.step],
        services: host.services,
        env: host.env,
        signal,
        executionId: `poll-${randomUUID()}`,
      });
      if (record.status !== 'succeeded') throw new Error(record.error?.message ?? 'the poll action failed');
      const results = record.steps.find((s) => s.id === trigger.step.id)?.results;

      const scope: Scope = {
        ...bareScope(host.env),
        trigger: { scheduledAt: scheduledAt.toISOString(), polledAt },
        steps: { [trigger.step.id]: results },
        execution: { integration: name, startedAt: polledAt },
        input: results,
      };
      scope.config = ((await evaluateTemplate(integration.config, scope)) ?? {}) as Record<string, unknown>;
      const found = await evaluateTemplate(trigger.items, scope);
      const items = found === undefined || found === null ? [] : Array.isArray(found) ? found : [found];
      const keyed: Array<{ key: string; item: unknown }> = [];
      const inResponse = new Set<string>();
      for (let index = 0; index < items.length; index++) {
        const item = items[index];
        const k = await evaluateTemplate(trigger.key, { ...scope, input: item, item, index });
        if (k === undefined || k === null || k === '')
          throw new Error(`the key expression gave no value for item #${index} (trigger.key must identify every item)`);
        const key = typeof k === 'string' ? k : JSON.stringify(k);
        if (inResponse.has(key)) continue; // the same item twice in one response counts once
        inResponse.add(key);
        keyed.push({ key, item });
      }
      if (keyed.length > trigger.maxSeen) {
        host.logger?.warn(
          { integration: name, items: keyed.length, maxSeen: trigger.maxSeen },
          'poll: more items in one response than maxSeen; raise maxSeen or the oldest ones will be seen as new again',
        );
      }
      if (signal.aborted) throw signal.reason;

      const seen = await host.store.seenKeys(name);
      const state = (await host.store.getState(name, POLL_STATE_KEY)) as PollState | undefined;
      const keys = keyed.map((k) => k.key);
      if (seen.size === 0 && !state?.baselineAt) {
        await host.store.commitPoll(name, keys, trigger.maxSeen, []);
        await host.store.setState(name, POLL_STATE_KEY, { baselineAt: polledAt } satisfies PollState);
        host.logger?.info({ integration: name, items: keys.length }, 'poll: baseline recorded (the first poll starts no execution)');
        return (this.last = { status: 'baseline', polledAt, items: keyed.length, newItems: 0, executionIds: [] });
      }

      const fresh = keyed.filter((k) => !seen.has(k.key));
      const executions: NewExecution[] = [];
      const base = { integration: name, test: false, attempt: 1, queuedAt: new Date(host.clock.now()).toISOString() };
      if (fresh.length > 0) {
        if (trigger.mode === 'each') for (const f of fresh) executions.push({ ...base, id: newExecutionId(), trigger: { item: f.item, polledAt } });
        else executions.push({ ...base, id: newExecutionId(), trigger: { items: fresh.map((f) => f.item), polledAt } });
        if (integration.correlationKey)
          for (const e of executions)
            e.correlationKey = await correlationKeyOf(integration, e.trigger, { executionId: e.id, env: host.env, logger: host.logger });
        if (integration.concurrency)
          for (const e of executions)
            e.concurrencyKey = await concurrencyKeyOf(integration, e.trigger, { executionId: e.id, env: host.env, logger: host.logger });
        host.checkCapacity(executions.length);
      }
      if (signal.aborted) throw signal.reason;
      // Order: keys seen again are refreshed too, so the newest `maxSeen` are what the API returns now.
      await host.store.commitPoll(name, keys, trigger.maxSeen, executions);
      host.adopt(executions);
      if (fresh.length) host.logger?.info({ integration: name, newItems: fresh.length, executions: executions.length }, 'poll: new items');
      return (this.last = { status: 'polled', polledAt, items: keyed.length, newItems: fresh.length, executionIds: executions.map((e) => e.id) });
    } catch (err) {
      return this.failed(polledAt, err);
    }
  }
}
