/**
 * Transport retries, for the actions that take Raw Request's retry inputs (hcm.rawRequest,
 * core.http; docs/hcm-service.md "Raw Request"): up to `maxRetries` more attempts after a
 * network error, a timeout or a 5xx answer (every error answer with `allErrors`). The wait is a
 * fixed `delayMs` — or the answer's Retry-After when that is longer —, or with `exponential` a
 * 500 ms base doubled per retry with full jitter, capped at 30 s, where a Retry-After answer wins.
 * Retry-After is capped at 2 minutes (./retry-after.ts). The rules themselves —
 * what the actions' retry inputs say — are ./retry-rules.ts.
 *
 * Not the step's `retry:` (engine/step-attempts.ts): that one runs the whole action again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { dispatchAttempts } from './redispatch.js';
import { callFailure, callOf } from './call.js';
import { answerOf } from './response-error.js';
import { requestedWaitMs } from './retry-after.js';
import type { RetryTiming } from './retry-rules.js';

export { RETRY_AFTER_MAX_MS, retryAfterMs } from './retry-after.js';

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 30_000;

/** Delay before retry number `n` (0-based) after an answer that may carry Retry-After. */
export function retryDelay(n: number, opts: RetryTiming, retryAfter?: string | string[]): number {
  const hinted = requestedWaitMs(retryAfter);
  // Fixed: never sooner than the service asked.
  if (!opts.useExponentialBackoff) return Math.max(0, opts.retryDelayMs, hinted ?? 0);
  if (hinted !== undefined) return hinted;
  const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** n);
  return Math.floor(Math.random() * cap); // full jitter
}

export const retryInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const call = callOf(opts);
  const rules = call.retry;
  if (!rules || rules.maxRetryCount <= 0) return dispatch(opts, handler);
  return dispatchAttempts(
    dispatch,
    handler,
    async () => opts,
    async (err, n, signal) => {
      const failure = callFailure(err, call);
      const answer = answerOf(err);
      const retryable = answer ? answer.status >= 500 || rules.retryOnAllErrors : ['network_error', 'timeout'].includes(failure.details.code ?? '');
      if (!retryable || n > rules.maxRetryCount) return undefined;
      const delay = retryDelay(n - 1, rules, answer?.headers['retry-after']);
      call.log?.('warn', `${failure.message}; retry ${n} of ${rules.maxRetryCount} in ${delay} ms`);
      await sleep(delay, undefined, { signal });
      return opts;
    },
  );
};
