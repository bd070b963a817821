/**
 * Poison executions: an execution whose run keeps taking the process down (a crash, an OOM kill,
 * a deploy that always lands mid-run) must not be resumed forever. Recovery resumes an
 * execution found `running` as attempt + 1 only while its attempt is below the limit; at the
 * limit it is marked failed with the reason. The dispatcher applies these to what either queue
 * (in-process or PostgreSQL) hands back (run-lifecycle.ts).
 */
import type { ExecutionRecord, ExecutionStatus } from '../../engine/record.js';
import { settingSpecs } from '../../settings/spec.js';

/** Default of HCM_RUNNER_MAX_INTERRUPTIONS. */
export const DEFAULT_MAX_INTERRUPTIONS = settingSpecs.maxInterruptions.default;

/**
 * True when an execution left in `status` at `attempt` by a stopped process must not run again:
 * it was running, and every one of its `attempt` starts ended with the process stopping.
 */
export function interruptedTooOften(status: ExecutionStatus | string, attempt: number, maxInterruptions: number): boolean {
  return status === 'running' && attempt >= maxInterruptions;
}

/** The failed record saved instead of resuming a poison execution. */
export function poisonRecord(record: ExecutionRecord, maxInterruptions: number): ExecutionRecord {
  const finishedAt = new Date().toISOString();
  return {
    ...record,
    status: 'failed',
    error: {
      message: `integration ${record.integration}: the process stopped ${record.attempt} times while this execution ran; not resumed (limit ${maxInterruptions}, HCM_RUNNER_MAX_INTERRUPTIONS). Find the cause in the server log, then replay it`,
      integration: record.integration,
      code: 'interrupted',
    },
    finishedAt,
    durationMs: record.startedAt ? Date.parse(finishedAt) - Date.parse(record.startedAt) : undefined,
  };
}

/**
 * The record saved when the finished record itself cannot be saved (too large to serialise, or
 * refused by the database): failed, with the reason, without step results and response — so
 * the execution never stays `running` and is not downloaded and run again on the next start.
 */
export function unsavableRecord(record: ExecutionRecord, cause: Error): ExecutionRecord {
  const { result: _r, response: _p, ...rest } = record;
  return {
    ...rest,
    status: 'failed',
    steps: record.steps.map(({ results: _results, ...s }) => s),
    log: record.log.slice(-50),
    error: {
      message: `integration ${record.integration}: the execution's record could not be saved (${cause.message}); saved as failed without its step results`,
      integration: record.integration,
      code: 'record_not_saved',
    },
    finishedAt: record.finishedAt ?? new Date().toISOString(),
  };
}
