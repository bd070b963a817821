/**
 * The schedule trigger of one integration version: fires executions with
 * `$trigger = {scheduledAt, firedAt}` on its ticks.
 *
 * - Each tick is claimed in the store (`claimTick(name, scheduledAt ISO)`) before anything else, so
 *   however many replicas run it, one of them fires it.
 * - `overlap`: `skip` fires nothing while an execution of the integration is queued or running
 *   (cluster-wide, from the store); `queue` enqueues anyway and the dispatcher runs them one at a
 *   time; `allow` enqueues and they may run side by side (up to the per-integration limit).
 * - `catchUp: latest`: at start, when a tick was missed since the last one fired (the process was
 *   down, the integration disabled), one execution runs for the latest missed tick. `none` (the
 *   default) replays nothing. The last fired tick is trigger state `schedule` = `{lastTick}`.
 */
import { newExecutionId } from '../../common/ids.js';
import type { CompiledIntegration, CompiledTrigger, ScheduleTiming } from '../../definition/types.js';
import { concurrencyKeyOf } from '../../engine/concurrency-key.js';
import { correlationKeyOf } from '../../engine/correlation-key.js';
import type { TriggerHost } from '../host.js';
import { Ticker } from './ticker.js';
import { latestRunAtOrBefore } from './timing.js';

export type ScheduleTriggerDef = Extract<CompiledTrigger, { type: 'schedule' }>;

export interface ScheduleState {
  /** ISO time of the last tick that was claimed (fired or skipped by `overlap: skip`). */
  lastTick?: string;
}

export const SCHEDULE_STATE_KEY = 'schedule';

export interface ScheduleTriggerData {
  scheduledAt: string;
  firedAt: string;
}

export class ScheduleTrigger {
  private readonly ticker: Ticker;
  private readonly trigger: ScheduleTriggerDef;
  private readonly inflight = new Set<Promise<void>>();
  private lastTick?: number;
  private stopped = false;

  constructor(
    readonly integration: CompiledIntegration,
    private readonly host: TriggerHost,
  ) {
    if (integration.trigger.type !== 'schedule') throw new Error(`${integration.name} is not a schedule integration`);
    this.trigger = integration.trigger;
    this.ticker = new Ticker(this.trigger, host.clock, (scheduledAt, firedAt) => this.track(this.fire(scheduledAt, firedAt)));
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
    this.track(this.catchUp());
  }

  stop(): void {
    this.stopped = true;
    this.ticker.stop();
  }

  /** Resolves when every tick handled so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private async catchUp(): Promise<void> {
    try {
      const state = (await this.host.store.getState(this.name, SCHEDULE_STATE_KEY)) as ScheduleState | undefined;
      const last = state?.lastTick ? Date.parse(state.lastTick) : undefined;
      if (last !== undefined && !Number.isNaN(last)) this.lastTick = Math.max(this.lastTick ?? last, last);
      if (this.trigger.catchUp !== 'latest' || last === undefined || Number.isNaN(last) || this.stopped) return;
      const now = this.host.clock.now();
      const missed = latestRunAtOrBefore(this.trigger, now, last);
      if (!missed) return;
      this.host.logger?.info(
        { integration: this.name, scheduledAt: missed.toISOString(), lastTick: state!.lastTick },
        'schedule: catching up the latest missed tick',
      );
      await this.fire(missed, new Date(now));
    } catch (err) {
      this.host.logger?.error({ integration: this.name, err: (err as Error).message }, 'schedule: catch-up failed');
    }
  }

  private async fire(scheduledAt: Date, firedAt: Date): Promise<void> {
    const name = this.name;
    const tick = scheduledAt.toISOString();
    const log = this.host.logger;
    try {
      if (this.stopped) return;
      if (!(await this.host.store.claimTick(name, tick))) {
        log?.debug({ integration: name, scheduledAt: tick }, 'schedule: tick already claimed (another replica fired it)');
        return;
      }
      await this.remember(scheduledAt);
      if (this.trigger.overlap === 'skip' && (await this.busy())) {
        log?.info({ integration: name, scheduledAt: tick }, 'schedule: previous execution still queued or running; tick skipped (overlap: skip)');
        return;
      }
      const trigger: ScheduleTriggerData = { scheduledAt: tick, firedAt: firedAt.toISOString() };
      const id = newExecutionId();
      const correlationKey = await correlationKeyOf(this.integration, trigger, { executionId: id, env: this.host.env, logger: log });
      const concurrencyKey = await concurrencyKeyOf(this.integration, trigger, { executionId: id, env: this.host.env, logger: log });
      await this.host.submit([
        {
          id,
          integration: name,
          trigger,
          test: false,
          attempt: 1,
          queuedAt: trigger.firedAt,
          correlationKey,
          ...(concurrencyKey ? { concurrencyKey } : {}),
        },
      ]);
      log?.debug({ integration: name, executionId: id, scheduledAt: tick }, 'schedule: fired');
      this.host.reportRun?.(name, { status: 'started', at: trigger.firedAt, executionId: id });
    } catch (err) {
      const busy = (err as Error)?.name === 'BusyError';
      if (!this.stopped) this.host.reportRun?.(name, { status: 'failed', at: firedAt.toISOString(), error: (err as Error).message });
      log?.[busy ? 'warn' : 'error'](
        { integration: name, scheduledAt: tick, err: (err as Error).message },
        busy ? 'schedule: tick dropped, the runner is busy' : 'schedule: tick failed',
      );
    }
  }

  private async busy(): Promise<boolean> {
    const store = this.host.store;
    for (const status of ['running', 'queued'] as const) {
      if ((await store.listExecutions({ integration: this.name, status, limit: 1 })).length > 0) return true;
    }
    return false;
  }

  /** Trigger state `schedule.lastTick` only moves forward. */
  private async remember(tick: Date): Promise<void> {
    const t = tick.getTime();
    if (this.lastTick !== undefined && this.lastTick >= t) return;
    this.lastTick = t;
    await this.host.store.setState(this.name, SCHEDULE_STATE_KEY, { lastTick: tick.toISOString() } satisfies ScheduleState);
  }
}
