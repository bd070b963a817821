/**
 * A connection's outbound limits (../connection-limits.ts: `rateLimit`, `maxConcurrent`) as one
 * line per connection and replica: every request of every execution on that connection takes a
 * place in it, first come first served, and goes when a token and a slot are free.
 *
 * - The rate is a bucket of `requests` tokens; a request takes one, and that token comes back `per`
 *   after the request left. So no window of length `per` ever holds more than `requests` requests
 *   (what a service counting a sliding or a fixed window checks), and a quiet connection may send
 *   `requests` at once. The line keeps the send time of each token (at most MAX_RATE_REQUESTS).
 * - A slot is held from the moment a request leaves until its answer has been read or it failed.
 * - A `429` with `Retry-After` holds the whole line until then (capped): the service said the
 *   tenant is over its limit, so the other executions' requests would only be refused too.
 * - Waiting is bounded: at most MAX_WAITERS places (more fail at once, retryably), each a few
 *   dozen bytes; a wait ends when the step's signal aborts (its timeoutMs, shutdown), and the
 *   place is freed at once (a linked list: no cancelled places pile up).
 *
 * The interceptor sits inside retry and auth (./stack.ts), so every attempt — a transport retry,
 * the one after a 401 refresh — is a request of its own in the line.
 */
import type { Dispatcher } from 'undici';
import { ActionError } from '../../common/errors.js';
import type { ConnectionLimits } from '../connection-limits.js';
import { callOf } from './call.js';
import { settling } from './forward.js';
import { dispatchAttempts } from './redispatch.js';
import { answerOf } from './response-error.js';
import { RETRY_AFTER_MAX_MS, requestedWaitMs } from './retry-after.js';

/** Requests that may wait in one connection's line; past it a request fails at once (retryable). */
export const MAX_WAITERS = 10_000;
/** setTimeout's longest delay; a longer wait is re-armed when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Waiter {
  prev: Waiter | undefined;
  next: Waiter | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

export class ConnectionLimiter {
  #limits: ConnectionLimits = {};
  /** Send times (performance.now()) of the tokens in use, oldest at `#oldest`: a ring of `rate.requests`. */
  #sent = new Float64Array(0);
  #oldest = 0;
  #used = 0;
  #inFlight = 0;
  #heldUntil = 0;
  #first: Waiter | undefined;
  #last: Waiter | undefined;
  #waiting = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    /** Named in errors: `connection hcm`. */
    readonly name: string,
    limits: ConnectionLimits,
    readonly maxWaiters = MAX_WAITERS,
  ) {
    this.configure(limits);
  }

  /** New limits (a reloaded integration); the tokens in use stay counted, the line stays in order. */
  configure(limits: ConnectionLimits): void {
    const requests = limits.rate?.requests ?? 0;
    if (requests !== this.#sent.length) {
      const kept = Math.min(this.#used, requests);
      const sent = new Float64Array(requests);
      // The newest `kept` send times, oldest first.
      for (let i = 0; i < kept; i++) sent[i] = this.#sent[(this.#oldest + this.#used - kept + i) % this.#sent.length]!;
      this.#sent = sent;
      this.#oldest = 0;
      this.#used = kept;
    }
    this.#limits = limits;
    this.#pump();
  }

  get inFlight(): number {
    return this.#inFlight;
  }
  get waiting(): number {
    return this.#waiting;
  }

  /** Takes a place now if nobody is waiting and a token and a slot are free; then `release` when done. */
  tryTake(now = performance.now()): boolean {
    if (this.#first || this.#readyAt(now) > now) return false;
    this.#take(now);
    return true;
  }

  /** Waits in line for a place; rejects with the signal's reason when it aborts first. Then `release` when done. */
  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.tryTake()) return Promise.resolve();
    if (this.#waiting >= this.maxWaiters) {
      return Promise.reject(
        new ActionError(`${this.name}: ${this.#waiting} requests are already waiting for its rateLimit/maxConcurrent; not queued`, {
          code: 'connection_busy',
          retryable: true,
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { prev: this.#last, next: undefined, resolve, reject, signal, onAbort: () => this.#cancel(w) };
      if (this.#last) this.#last.next = w;
      else this.#first = w;
      this.#last = w;
      this.#waiting++;
      signal.addEventListener('abort', w.onAbort, { once: true });
      this.#pump();
    });
  }

  /** A request that held a place has ended (answered, failed or aborted). */
  release(): void {
    this.#inFlight--;
    this.#pump();
  }

  /** The service answered 429 with Retry-After: nobody in line goes before then. */
  holdFor(ms: number): void {
    const until = performance.now() + Math.min(Math.max(0, ms), RETRY_AFTER_MAX_MS);
    if (until > this.#heldUntil) this.#heldUntil = until;
  }

  /** When the next request may leave: now or later for a token or the hold, Infinity while no slot is free. */
  #readyAt(now: number): number {
    const max = this.#limits.maxConcurrent;
    if (max !== undefined && this.#inFlight >= max) return Infinity;
    let at = Math.max(this.#heldUntil, now);
    const rate = this.#limits.rate;
    if (rate && this.#used >= rate.requests) at = Math.max(at, this.#sent[this.#oldest]! + rate.perMs);
    return at;
  }

  #take(now: number): void {
    this.#inFlight++;
    const n = this.#sent.length;
    if (!n) return;
    if (this.#used < n) this.#sent[(this.#oldest + this.#used++) % n] = now;
    else {
      this.#sent[this.#oldest] = now;
      this.#oldest = (this.#oldest + 1) % n;
    }
  }

  #unlink(w: Waiter): void {
    if (w.prev) w.prev.next = w.next;
    else this.#first = w.next;
    if (w.next) w.next.prev = w.prev;
    else this.#last = w.prev;
    w.prev = w.next = undefined;
    this.#waiting--;
    w.signal.removeEventListener('abort', w.onAbort);
  }

  #cancel(w: Waiter): void {
    this.#unlink(w);
    w.reject(w.signal.reason);
    this.#pump();
  }

  /** Lets the first in line go while a token and a slot are free; else wakes up when a token comes back. */
  #pump(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const now = performance.now();
    while (this.#first) {
      const at = this.#readyAt(now);
      if (at === Infinity) return; // a release pumps again
      if (at > now) {
        this.#timer = setTimeout(() => this.#pump(), Math.min(Math.ceil(at - now), MAX_TIMER_MS));
        return;
      }
      const w = this.#first;
      this.#unlink(w);
      this.#take(now);
      w.resolve();
    }
  }
}

/** The interceptor of a connection's line (outermost inside auth, ./stack.ts). */
export function limitInterceptor(limiter: ConnectionLimiter): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    let held = false;
    let ended = false;
    const end = (err?: Error) => {
      if (ended) return;
      ended = true;
      const answer = err && answerOf(err);
      if (answer?.status === 429) {
        const ms = requestedWaitMs(answer.headers['retry-after']);
        if (ms) limiter.holdFor(ms);
      }
      if (held) limiter.release();
    };
    const releasing = settling(handler, end);
    // Free now: no promise, no wait (the common case, and every request of a quiet connection).
    if (limiter.tryTake()) {
      held = true;
      try {
        return dispatch(opts, releasing);
      } catch (err) {
        end();
        throw err;
      }
    }
    const { signal } = callOf(opts);
    return dispatchAttempts(
      dispatch,
      releasing,
      async () => {
        await limiter.take(signal);
        held = true;
        if (ended) {
          // The caller gave up as the place came free: hand it on.
          held = false;
          limiter.release();
          throw signal.reason ?? new Error('aborted');
        }
        return opts;
      },
      async () => undefined,
    );
  };
}
