/** The record of an execution as it enters the queue and as it starts an attempt. */
import type { ExecutionRecord } from '../engine/record.js';
import type { NewExecution } from './queue.js';
import { recordIso } from './timestamps.js';

/** The record created for a newly enqueued execution. */
export function queuedRecord(e: NewExecution, now: string): ExecutionRecord {
  return {
    id: e.id,
    integration: e.integration,
    status: 'queued',
    test: e.test,
    attempt: e.attempt ?? 1,
    trigger: e.trigger ?? null,
    steps: [],
    log: [],
    queuedAt: recordIso(e.queuedAt) ?? now,
    ...(e.idempotencyKey !== undefined ? { idempotencyKey: e.idempotencyKey } : {}),
    ...(e.correlationKey !== undefined ? { correlationKey: e.correlationKey } : {}),
    ...(e.concurrencyKey !== undefined ? { concurrencyKey: e.concurrencyKey } : {}),
  };
}

/**
 * The record as it starts an attempt: the parts of an earlier (crashed) attempt are dropped,
 * because a new attempt runs every step again (at-least-once).
 */
export function runningRecord(stored: ExecutionRecord, attempt: number, now: string): ExecutionRecord {
  const { result: _r, error: _e, response: _p, finishedAt: _f, durationMs: _d, ...rest } = stored;
  return { ...rest, status: 'running', attempt, startedAt: now, steps: [], log: [] };
}
