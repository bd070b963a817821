/**
 * Time as the schedule and poll loops see it. Production uses the system clock; tests inject a
 * `ManualClock` and move time forward explicitly, so every tick is deterministic.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once, `ms` from now (never blocks process exit). */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

/** setTimeout caps delays at 2^31-1 ms (~24.8 days); longer waits re-arm. */
const MAX_DELAY = 2_147_483_647;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    let t: NodeJS.Timeout | undefined;
    let cancelled = false;
    const due = Date.now() + Math.max(0, ms);
    const arm = () => {
      const wait = due - Date.now();
      if (wait > MAX_DELAY) {
        t = setTimeout(arm, MAX_DELAY);
      } else {
        t = setTimeout(
          () => {
            if (!cancelled) fn();
          },
          Math.max(0, wait),
        );
      }
      t.unref();
    };
    arm();
    return {
      cancel() {
        cancelled = true;
        clearTimeout(t);
      },
    };
  },
};

/**
 * A clock that only moves when told to. `advance(ms)` runs every timer that falls due on the way,
 * in time order, with `now()` set to each timer's due time while it runs.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: Array<{ at: number; seq: number; fn: () => void }> = [];
  private seq = 0;

  constructor(start: Date | string | number = Date.now()) {
    this.current = new Date(start).getTime();
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  advanceTo(target: Date | string | number): void {
    const end = new Date(target).getTime();
    for (;;) {
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = Math.max(this.current, end);
  }

  /** Timers waiting (tests: "is anything armed?"). */
  get pending(): number {
    return this.timers.length;
  }

  /** When the earliest timer falls due (undefined when none). */
  nextDue(): Date | undefined {
    const at = Math.min(...this.timers.map((t) => t.at));
    return Number.isFinite(at) ? new Date(at) : undefined;
  }
}
