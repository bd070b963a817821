/**
 * The run-time part shared by the triggers that run on their own timer (schedule, poll): one
 * loop per enabled integration, started when its version appears and stopped when it goes,
 * changes or is disabled. A version whose definition did not change keeps its loop (and timers).
 */
import type { Logger } from 'pino';
import type { CompiledIntegration, ScheduleTiming } from '../definition/types.js';
import { nextRunAfter } from './schedule/timing.js';
import type { RunningTrigger, TickSchedule } from './type.js';

/** One integration version's timer loop. */
export interface IntegrationLoop {
  readonly integration: CompiledIntegration;
  readonly nextRunAt: Date | undefined;
  /** Its timing keys (every, cron, at, timezone). */
  readonly timing: ScheduleTiming;
  /** Clock time its loop started (set by start()). */
  readonly startedAt?: number;
  start(): void;
  /** Stops the timer; work in progress winds down (`idle`). */
  stop(): void;
  idle(): Promise<void>;
}

export class IntegrationLoops<L extends IntegrationLoop> implements RunningTrigger {
  private readonly loops = new Map<string, L>();
  readonly busy = false;

  constructor(
    private readonly create: (integration: CompiledIntegration) => L,
    private readonly logger?: Logger,
    /** More fields of GET /api/integrations/{name} besides `nextRunAt`. */
    private readonly moreDetail?: (loop: L) => Record<string, unknown> | undefined,
  ) {}

  sync(name: string, current: CompiledIntegration | undefined): void {
    const wanted = current?.enabled ? current : undefined;
    const running = this.loops.get(name);
    if (running && (!wanted || !sameVersion(running.integration, wanted))) {
      running.stop();
      this.loops.delete(name);
      this.logger?.info({ integration: name }, `${running.integration.trigger.type} stopped`);
    }
    if (wanted && !this.loops.has(name)) {
      const loop = this.create(wanted);
      this.loops.set(name, loop);
      loop.start();
      this.logger?.info({ integration: name, nextRunAt: loop.nextRunAt?.toISOString() }, `${wanted.trigger.type} started`);
    }
  }

  /** `nextRunAt` is null while the integration is disabled (no loop runs). */
  detail(name: string): Record<string, unknown> {
    const loop = this.loops.get(name);
    return { nextRunAt: loop?.nextRunAt?.toISOString() ?? null, ...(loop && this.moreDetail?.(loop)) };
  }

  ticks(name: string): TickSchedule | undefined {
    const loop = this.loops.get(name);
    if (!loop) return undefined;
    return {
      nextRunAt: loop.nextRunAt?.toISOString(),
      dueBy: (after, runs) => {
        const from = Math.max(after?.getTime() ?? Number.NEGATIVE_INFINITY, loop.startedAt ?? Number.NEGATIVE_INFINITY);
        if (!Number.isFinite(from)) return undefined;
        let previous = from;
        let at: Date | undefined = new Date(from);
        for (let i = 0; i < runs && at; i++) {
          previous = at.getTime();
          at = nextRunAfter(loop.timing, at);
        }
        return at && { at, periodMs: at.getTime() - previous };
      },
    };
  }

  names(): Iterable<string> {
    return this.loops.keys();
  }

  instance(name: string): L | undefined {
    return this.loops.get(name);
  }

  async idle(): Promise<void> {
    await Promise.all([...this.loops.values()].map((l) => l.idle()));
  }

  /** Stops every loop (a poll in progress is cancelled and commits nothing) and waits for them. */
  async stop(): Promise<void> {
    const loops = [...this.loops.values()];
    this.loops.clear();
    for (const l of loops) l.stop();
    await Promise.allSettled(loops.map((l) => l.idle()));
  }
}

function sameVersion(a: CompiledIntegration, b: CompiledIntegration): boolean {
  return a === b || (a.hash === b.hash && a.name === b.name);
}
