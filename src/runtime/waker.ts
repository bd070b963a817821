/**
 * Wakes `waiting` executions (core.wait) when they are due: `queue.wake(now)` makes them queued
 * again (exactly one replica wakes each) and available to the workers. One timer, aimed at the
 * next `wakeAt` — the store's earliest and those this process saved since — but never more than
 * `maxDelayMs` away, so waits other replicas saved (and callback requests other replicas took)
 * are seen within a second. It sweeps once at start (waits due while the process was down run
 * now), and at once when a callback request came in (`nudge`).
 *
 * The timer is unref'd (it never holds the process open) and nothing fires after `stop`.
 */
import type { Logger } from 'pino';
import type { ExecutionQueue } from '../store/queue.js';
import type { Store } from '../store/types.js';

const MIN_DELAY_MS = 10;

export interface WakerOptions {
  queue: Pick<ExecutionQueue, 'wake'>;
  store: Pick<Store, 'nextWakeAt'>;
  logger?: Logger;
  /** Longest time between two sweeps (default 1 s). */
  maxDelayMs?: number;
}

export class Waker {
  private readonly queue: WakerOptions['queue'];
  private readonly store: WakerOptions['store'];
  private readonly logger?: Logger;
  private readonly maxDelayMs: number;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  /** A nudge or an earlier wakeAt came during a sweep: sweep again right after it. */
  private again = false;
  /** The earliest wakeAt this process saved since the last sweep (ms), which the store may not show yet. */
  private soonest = Number.POSITIVE_INFINITY;
  private running = false;

  constructor(opts: WakerOptions) {
    this.queue = opts.queue;
    this.store = opts.store;
    this.logger = opts.logger;
    this.maxDelayMs = opts.maxDelayMs ?? 1000;
  }

  /** Sweeps now, then keeps sweeping (see above). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.sweepNow();
  }

  /** A callback request was recorded: its execution is due now. */
  nudge(): void {
    if (!this.running) return;
    this.sweepNow();
  }

  /** This process saved an execution `waiting` until `wakeAt`: the timer is re-aimed if that is sooner. */
  noteWakeAt(wakeAt: string | undefined): void {
    if (!this.running || wakeAt === undefined) return;
    const at = Date.parse(wakeAt);
    if (Number.isNaN(at) || at >= this.soonest) return;
    this.soonest = at;
    if (this.sweeping) return; // the sweep in progress aims the timer when it ends
    this.schedule(at - Date.now());
  }

  /** No sweep starts after this; resolves once the one in progress (if any) ended. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private sweepNow(): void {
    if (this.sweeping) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sweeping = this.sweep().finally(() => {
      this.sweeping = undefined;
    });
  }

  private async sweep(): Promise<void> {
    let next: number | undefined;
    try {
      do {
        this.again = false;
        const now = Date.now();
        if (this.soonest <= now) this.soonest = Number.POSITIVE_INFINITY;
        // The queue takes every due row, batch after batch.
        await this.queue.wake(new Date(now));
        if (!this.running) return;
        const stored = await this.store.nextWakeAt();
        next = Math.min(stored === undefined ? Number.POSITIVE_INFINITY : Date.parse(stored), this.soonest);
      } while (this.again && this.running);
    } catch (err) {
      this.logger?.warn({ err: (err as Error).message }, 'waking waiting executions failed; will retry');
    }
    if (this.running) this.schedule(next === undefined ? this.maxDelayMs : next - Date.now());
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    // At least a few ms: a wakeAt already past that nothing woke (another replica took it) must not spin.
    const delay = Math.max(MIN_DELAY_MS, Math.min(this.maxDelayMs, Number.isFinite(delayMs) ? delayMs : this.maxDelayMs));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) this.sweepNow();
    }, delay);
    this.timer.unref();
  }
}
