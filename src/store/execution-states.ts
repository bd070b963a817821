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
    // A retry starts from the records of the steps before the one that failed (they are not run again).
    steps: e.steps ?? [],
    log: [],
    queuedAt: recordIso(e.queuedAt) ?? now,
    ...(e.idempotencyKey !== undefined ? { idempotencyKey: e.idempotencyKey } : {}),
    ...(e.correlationKey !== undefined ? { correlationKey: e.correlationKey } : {}),
    ...(e.retryOf !== undefined ? { retryOf: e.retryOf } : {}),
    ...(e.concurrencyKey !== undefined ? { concurrencyKey: e.concurrencyKey } : {}),
  };
}

/**
 * The record as it starts an attempt (a new one, a wake-up, a resume after a crash). Its stored
 * steps are kept: they are what the run resumes from (the lifecycle hands them to the engine,
 * which does not run a finished step again and runs the one that was running again). The log
 * stays with them. What only an ended or waiting run has is dropped: its outcome, and its
 * wake-up and what it waited for.
 */
export function runningRecord(stored: ExecutionRecord, attempt: number, now: string): ExecutionRecord {
  const { result: _r, error: _e, response: _p, finishedAt: _f, durationMs: _d, wakeAt: _w, waitingFor: _wf, ...rest } = stored;
  return { ...rest, status: 'running', attempt, startedAt: now };
}
