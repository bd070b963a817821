/**
 * The mechanism of the interceptors that send a request again (auth after a 401, retry): the
 * caller's handler sees one request — one start, then the answer or the error of the last
 * attempt — while attempts come and go underneath. An attempt that failed after its answer began
 * to reach the caller is final (its bytes cannot be taken back).
 *
 * Not a step's attempts (engine/step-attempts.ts): those run the whole action again.
 */
import type { Dispatcher } from 'undici';

type Options = Dispatcher.DispatchOptions;
type Handler = Dispatcher.DispatchHandler;
type Controller = Dispatcher.DispatchController;

/** After failed attempt number `n` (1-based): the options of the next attempt, or undefined to give up. */
export type NextAttempt = (failure: Error, n: number, signal: AbortSignal) => Promise<Options | undefined>;

/** The controller the caller holds: forwards to the attempt in flight, and ends a wait between attempts. */
class AttemptsController implements Controller {
  target: Controller | undefined;
  #reason: Error | null = null;
  #paused = false;
  /** Aborts the wait between two attempts; made only when a request is tried again (rare). */
  #between: AbortController | undefined;
  /** Called when the caller aborts while no attempt is in flight. */
  onAbortBetween: ((reason: Error) => void) | undefined;

  get aborted() {
    return this.#reason !== null || (this.target?.aborted ?? false);
  }
  get paused() {
    return this.#paused;
  }
  get reason() {
    return this.#reason ?? this.target?.reason ?? null;
  }
  get abortedByCaller() {
    return this.#reason !== null;
  }

  /** The signal of the wait before the next attempt (aborted already if the caller has aborted). */
  betweenSignal(): AbortSignal {
    if (!this.#between) {
      this.#between = new AbortController();
      if (this.#reason) this.#between.abort(this.#reason);
    }
    return this.#between.signal;
  }

  abort(reason: Error): void {
    this.#reason = reason ?? new Error('aborted');
    if (this.target) {
      this.target.abort(this.#reason);
      return;
    }
    this.#between?.abort(this.#reason);
    this.onAbortBetween?.(this.#reason);
  }
  pause(): void {
    this.#paused = true;
    this.target?.pause();
  }
  resume(): void {
    this.#paused = false;
    this.target?.resume();
  }
}

export function dispatchAttempts(dispatch: Dispatcher.Dispatch, handler: Handler, first: () => Promise<Options>, next: NextAttempt): boolean {
  const controller = new AttemptsController();
  let finished = false;
  const fail = (err: Error) => {
    if (finished) return;
    finished = true;
    handler.onResponseError?.(controller, err);
  };
  controller.onAbortBetween = fail;
  handler.onRequestStart?.(controller, {});

  const attempt = (opts: Options, n: number) => {
    let answered = false;
    const own: Handler = {
      onRequestStart(c) {
        controller.target = c;
        if (controller.abortedByCaller) c.abort(controller.reason!);
        else if (controller.paused) c.pause();
      },
      onRequestUpgrade: (_c, status, headers, socket) => handler.onRequestUpgrade?.(controller, status, headers, socket),
      onResponseStart(_c, status, headers, message) {
        answered = true;
        return handler.onResponseStart?.(controller, status, headers, message);
      },
      onResponseData: (_c, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd(_c, trailers) {
        finished = true;
        handler.onResponseEnd?.(controller, trailers);
      },
      onResponseError(_c, err) {
        controller.target = undefined;
        if (answered || controller.abortedByCaller) return fail(controller.abortedByCaller ? controller.reason! : err);
        next(err, n, controller.betweenSignal()).then(
          (again) => (finished ? undefined : again ? attempt(again, n + 1) : fail(err)),
          (e: unknown) => fail(controller.abortedByCaller ? controller.reason! : (e as Error)),
        );
      },
    };
    try {
      dispatch(opts, own);
    } catch (err) {
      own.onResponseError!(controller, err as Error);
    }
  };

  first().then(
    (opts) => (finished ? undefined : attempt(opts, 1)),
    (e: unknown) => fail(e as Error),
  );
  return true;
}
