/**
 * One step's attempts: a timeout per attempt (the action's signal is aborted), and the step's
 * retry policy — fixed or exponential with jitter. Only failures another attempt could change
 * are retried: timeouts, network errors, 429 and 5xx answers (actions mark them `retryable`),
 * and unexpected errors. A 404, invalid inputs, an expression error or core.fail fail at once.
 * When the service said how long to wait (a 429's or 503's Retry-After, `retryAfterMs` on the
 * error), the wait is at least that.
 *
 * Not the HTTP stack's transport retries (connectors/http/retry.ts), which repeat one request
 * inside a single attempt of the action.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ActionError, StopSignal } from '../common/errors.js';
import type { CompiledStep, RetryPolicy } from '../definition/types.js';
import { CancelSignal, WaitSignal } from './durable.js';
import { EvaluationError } from './evaluate.js';

export function isRetryable(err: unknown): boolean {
  if (
    err instanceof StopSignal ||
    err instanceof WaitSignal ||
    err instanceof CancelSignal ||
    err instanceof EvaluationError ||
    !(err instanceof Error)
  )
    return false;
  if (err instanceof ActionError) return err.details.retryable === true;
  return true;
}

export function retryDelay(policy: RetryPolicy, failedAttempt: number, random = Math.random): number {
  if (policy.backoff === 'fixed') return policy.delayMs;
  const base = Math.min(policy.maxDelayMs, policy.delayMs * 2 ** (failedAttempt - 1));
  // "Equal jitter": half fixed, half random, so retries spread out but never collapse to zero.
  return Math.round(base / 2 + (random() * base) / 2);
}

/** Waits between two attempts; rejects when `signal` aborts. */
export type RetrySleep = (ms: number, signal: AbortSignal) => Promise<void>;

const realSleep: RetrySleep = (ms, signal) => sleep(ms, undefined, { signal });

export async function invokeWithRetry<T>(
  step: CompiledStep,
  runSignal: AbortSignal,
  attempt: (signal: AbortSignal) => Promise<T>,
  warn: (message: string) => void,
  wait: RetrySleep = realSleep,
): Promise<{ results: T; attempts: number }> {
  const maxAttempts = step.retry?.maxAttempts ?? 1;
  for (let n = 1; ; n++) {
    try {
      return { results: await withTimeout(step.timeoutMs, runSignal, attempt), attempts: n };
    } catch (err) {
      const final = n >= maxAttempts || runSignal.aborted || !isRetryable(err);
      if (final || !step.retry) {
        if (err instanceof Error) (err as Error & { attempts?: number }).attempts = n;
        throw err;
      }
      const delay = Math.max(retryDelay(step.retry, n), err instanceof ActionError ? (err.details.retryAfterMs ?? 0) : 0);
      warn(`attempt ${n} of ${maxAttempts} failed (${(err as Error).message}); retrying in ${delay} ms`);
      await wait(delay, runSignal).catch(() => {
        throw err;
      });
    }
  }
}

async function withTimeout<T>(timeoutMs: number | undefined, runSignal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  // Without a timeout only the run aborts an attempt: its own signal will do (no controller and
  // no listener per attempt).
  if (!timeoutMs) return fn(runSignal);
  const controller = new AbortController();
  const onAbort = () => controller.abort(runSignal.reason);
  runSignal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new ActionError(`timed out after ${timeoutMs} ms`, { code: 'timeout', retryable: true });
        controller.abort(err);
        reject(err);
      }, timeoutMs);
    });
    return await Promise.race([fn(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
    runSignal.removeEventListener('abort', onAbort);
  }
}
