/**
 * What Raw Request's retry inputs say (hcm.rawRequest, core.http: maxRetryCount, retryDelayMs,
 * retryOnAllErrors, useExponentialBackoff), read once from a step's inputs into `RetryRules` that
 * travel with the call (./call.ts) to the retry interceptor (./retry.ts), which applies them.
 * Imports nothing of the stack, so the call's settings and the interceptor can both name it.
 */
import { ActionError } from '../../common/errors.js';

export interface RetryTiming {
  useExponentialBackoff: boolean;
  retryDelayMs: number;
}

export interface RetryRules extends RetryTiming {
  maxRetryCount: number;
  /** Also retry 4xx answers, not only 5xx. */
  retryOnAllErrors: boolean;
}

/** A number input ≥ 0 (ms, counts), undefined when not given; else `invalid_input`. */
export function nonNegativeInput(inputs: Record<string, unknown>, key: string, label: string): number | undefined {
  const raw = inputs[key];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new ActionError(`${label}: ${key} must be a number ≥ 0`, { code: 'invalid_input' });
  return v;
}

/** The retry inputs both actions declare (maxRetryCount, retryDelayMs, retryOnAllErrors, useExponentialBackoff). */
export function retryRulesFrom(inputs: Record<string, unknown>, label: string): RetryRules {
  const num = (k: string) => nonNegativeInput(inputs, k, label) ?? 0;
  return {
    maxRetryCount: Math.floor(num('maxRetryCount')),
    retryDelayMs: num('retryDelayMs'),
    retryOnAllErrors: inputs.retryOnAllErrors === true,
    useExponentialBackoff: inputs.useExponentialBackoff === true,
  };
}
