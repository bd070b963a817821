/**
 * forEach's loop: items in bounded parallel (`concurrency`), results in item order, and turns of
 * the event loop while it runs. An item whose action answers at once (core.transform, a mock)
 * resolves in a microtask; without turns, 100,000 of them would hold the process — other
 * executions, webhooks, timers — until the last one.
 */
import { performance } from 'node:perf_hooks';
import { WaitSignal } from './durable.js';

/** How long a run of items may go on before the event loop gets a turn. */
const TURN_MS = 10;

/**
 * Hands the event loop a turn every TURN_MS. Every loop of one execution waits on the same turn,
 * so parallel items all stop together (one of them alone yielding would not free the loop).
 */
export class Turns {
  private last = performance.now();
  private pending?: Promise<void>;

  /** A promise to wait on when a turn is due, else undefined (no allocation on the common path). */
  due(): Promise<void> | undefined {
    if (this.pending) return this.pending;
    if (performance.now() - this.last < TURN_MS) return undefined;
    this.pending = new Promise((resolve) =>
      setImmediate(() => {
        this.pending = undefined;
        this.last = performance.now();
        resolve();
      }),
    );
    return this.pending;
  }
}

/**
 * `fn` over `items` with at most `concurrency` at once, results in item order. `fn` is called in
 * item order, so whatever it records first (an iteration's record) is in order too. After a
 * failure no further item starts; those running finish, then the first failure is thrown. A wait
 * (core.wait in an iteration) stops new items the same way, but a real failure wins over it, and
 * of several waits the earliest to wake is thrown (the others wait again when it resumes).
 */
export async function mapInOrder<T, R>(
  items: readonly T[],
  concurrency: number,
  turns: Turns,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  if (concurrency <= 1 || items.length <= 1) {
    for (let i = 0; i < items.length; i++) {
      out[i] = await fn(items[i]!, i);
      const turn = turns.due();
      if (turn) await turn;
    }
    return out;
  }
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (err) {
        failure = firstToReport(failure, err);
        return;
      }
      const turn = turns.due();
      if (turn) await turn;
    }
  };
  const workers: Promise<void>[] = [];
  for (let w = 0; w < Math.min(concurrency, items.length); w++) workers.push(worker());
  await Promise.all(workers);
  if (failure) throw failure.err;
  return out;
}

/** A failure wins over a wait; the first failure over later ones; the earliest wake-up over later ones (no wakeAt: last). */
function firstToReport(kept: { err: unknown } | undefined, err: unknown): { err: unknown } {
  if (!kept) return { err };
  if (!(kept.err instanceof WaitSignal)) return kept;
  if (!(err instanceof WaitSignal)) return { err };
  const a = kept.err.wakeAt ?? '\uffff';
  const b = err.wakeAt ?? '\uffff';
  return b < a ? { err } : kept;
}
