/**
 * Deletes finished executions older than the retention period, idempotency keys past their window
 * and callback tokens past their expiry (with their requests), at start and then hourly.
 */
import type { Logger } from 'pino';
import type { Store } from '../store/types.js';

export const DEFAULT_RETENTION_DAYS = 14;
const HOUR = 60 * 60 * 1000;

export function startRetention(
  store: Store,
  opts: { days?: number; intervalMs?: number; logger?: Logger } = {},
): { stop(): void; runOnce(): Promise<number> } {
  const days = opts.days ?? DEFAULT_RETENTION_DAYS;
  const runOnce = async () => {
    try {
      // Idempotency keys live for their window whatever the retention (a claim takes an expired one over anyway).
      await store.pruneIdempotencyKeys(new Date());
    } catch (err) {
      opts.logger?.warn({ err: (err as Error).message }, 'pruning expired idempotency keys failed; will retry');
    }
    try {
      // An expired callback URL answers 404 either way; its row (and the request it holds) goes whatever the retention.
      await store.pruneCallbacks(new Date());
    } catch (err) {
      opts.logger?.warn({ err: (err as Error).message }, 'pruning expired callback tokens failed; will retry');
    }
    if (days <= 0) return 0; // 0 = keep forever
    try {
      const n = await store.pruneExecutions(new Date(Date.now() - days * 24 * HOUR));
      if (n > 0) opts.logger?.info({ deleted: n, days }, 'pruned old executions');
      return n;
    } catch (err) {
      opts.logger?.warn({ err: (err as Error).message }, 'pruning old executions failed; will retry');
      return 0;
    }
  };
  const first = setTimeout(() => void runOnce(), 1000);
  const timer = setInterval(() => void runOnce(), opts.intervalMs ?? HOUR);
  // Never keep the process alive just for housekeeping.
  first.unref();
  timer.unref();
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
    runOnce,
  };
}
