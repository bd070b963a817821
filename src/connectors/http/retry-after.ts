/**
 * `Retry-After` (seconds or an HTTP date), read once for everyone who waits on it: the transport
 * retries (./retry.ts), a connection's line after a 429 (./limit.ts) and a step's `retry:`
 * (engine/step-attempts.ts, through `ActionError.details.retryAfterMs`, set in ./response-error.ts).
 * Every one of them waits at most RETRY_AFTER_MAX_MS, whatever the service asks.
 */

export const RETRY_AFTER_MAX_MS = 120_000;

/** Retry-After as seconds or an HTTP date → milliseconds from now (uncapped); undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}

/** The wait a Retry-After asks for, capped at RETRY_AFTER_MAX_MS. */
export function requestedWaitMs(header: string | string[] | undefined): number | undefined {
  const ms = retryAfterMs(header);
  return ms === undefined ? undefined : Math.min(ms, RETRY_AFTER_MAX_MS);
}
