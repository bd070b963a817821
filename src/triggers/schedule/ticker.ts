/**
 * A timer that walks a schedule's ticks: arms the next one, calls `onTick(scheduledAt, firedAt)`
 * when it falls due, and arms the one after. Ticks that passed while the process was busy or
 * asleep are not replayed (the walk jumps to the first tick after now).
 */
import type { ScheduleTiming } from '../../definition/types.js';
import type { Clock, TimerHandle } from './clock.js';
import { nextRunAfter, stepFrom } from './timing.js';

export class Ticker {
  private handle?: TimerHandle;
  private next?: Date;
  private stopped = true;

  constructor(
    private readonly timing: ScheduleTiming,
    private readonly clock: Clock,
    private readonly onTick: (scheduledAt: Date, firedAt: Date) => void,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.arm(nextRunAfter(this.timing, this.clock.now()));
  }

  stop(): void {
    this.stopped = true;
    this.handle?.cancel();
    this.handle = undefined;
    this.next = undefined;
  }

  /** The tick armed now (undefined when stopped or the timing never fires again). */
  get nextRunAt(): Date | undefined {
    return this.next;
  }

  private arm(tick: Date | undefined): void {
    this.next = tick;
    if (!tick || this.stopped) return;
    this.handle = this.clock.setTimer(() => this.fire(tick), tick.getTime() - this.clock.now());
  }

  private fire(tick: Date): void {
    if (this.stopped) return;
    const now = this.clock.now();
    // Timers may fire a millisecond before the wall clock reaches the tick: wait out the rest.
    if (now < tick.getTime()) {
      this.handle = this.clock.setTimer(() => this.fire(tick), tick.getTime() - now);
      return;
    }
    let next = stepFrom(this.timing, tick);
    if (next && next.getTime() <= now) next = nextRunAfter(this.timing, now);
    this.arm(next);
    this.onTick(tick, new Date(now));
  }
}
