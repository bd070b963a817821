/**
 * The retry timing shared by the actions that take Raw Request's retry inputs (docs/hcm-service.md) (hcm.rawRequest and
 * core.http): a fixed Retry Delay, or — with Use Exponential Backoff — a 500 ms base doubled per
 * retry with full jitter, capped at 30 s, where a Retry-After answer wins (capped at 2 minutes).
 */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 30_000;
export const RETRY_AFTER_MAX_MS = 120_000;

export interface RetryTiming {
  useExponentialBackoff: boolean;
  retryDelayMs: number;
}

/** Delay before retry number `n` (0-based) after an answer that may carry Retry-After. */
export function retryDelay(n: number, opts: RetryTiming, retryAfter?: string | string[]): number {
  if (!opts.useExponentialBackoff) return Math.max(0, opts.retryDelayMs);
  const hinted = retryAfterMs(retryAfter);
  if (hinted !== undefined) return Math.min(hinted, RETRY_AFTER_MAX_MS);
  const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** n);
  return Math.floor(Math.random() * cap); // full jitter
}

/** Retry-After as seconds or an HTTP date → milliseconds from now. */
export function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}
