/**
 * An execution record <-> its `executions` row: the column values written from a record, and the
 * record and list summary rebuilt from a row (the columns are authoritative over the JSON copy).
 * Which columns a statement names is sql/execution-columns.ts.
 */
import { triggerJson } from '../common/trigger-json.js';
import type { ExecutionRecord, ExecutionStatus } from '../engine/record.js';
import { recordIso } from './timestamps.js';
import type { ExecutionSummary } from './types.js';

/** The JSON kept in the `record` column: everything but the trigger (stored in its own column). */
export function recordJson(record: ExecutionRecord): string {
  const { trigger: _t, ...rest } = record;
  return JSON.stringify(rest);
}

/** Row columns derived from a record. */
export interface ExecutionColumns {
  id: string;
  integration: string;
  status: ExecutionStatus;
  test: boolean;
  attempt: number;
  trigger: string;
  record: string;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  error: string | null;
  /** Indexed where present: GET /api/executions?correlation=. */
  correlationKey: string | null;
  versionSha256: string | null;
  versionCommit: string | null;
  /** A `waiting` execution's wake-up (indexed for the waker); NULL in every other status. */
  wakeAt: string | null;
  /** The execution this one retries (set at creation). */
  retryOf: string | null;
  /** Cancel requested while it ran (set by `cancelExecution` only; a save never clears it). */
  cancelRequested: boolean;
  /** `concurrency:`'s key, set at creation; the queue lines executions up by it (indexed with status). */
  concurrencyKey: string | null;
}

export function columnsOf(record: ExecutionRecord, now: string): ExecutionColumns {
  return {
    id: record.id,
    integration: record.integration,
    status: record.status,
    test: !!record.test,
    attempt: record.attempt ?? 1,
    trigger: triggerJson(record.trigger),
    record: recordJson(record),
    queuedAt: recordIso(record.queuedAt) ?? now,
    startedAt: recordIso(record.startedAt) ?? null,
    finishedAt: recordIso(record.finishedAt) ?? null,
    durationMs: typeof record.durationMs === 'number' ? record.durationMs : null,
    error: record.error?.message ?? null,
    ...originColumnsOf(record),
    wakeAt: wakeAtOf(record),
    retryOf: record.retryOf ?? null,
    cancelRequested: !!record.cancelRequested,
    concurrencyKey: record.concurrencyKey ?? null,
  };
}

/** Only a waiting execution has a wake-up: saving any other status clears it (the waker skips it). */
function wakeAtOf(record: ExecutionRecord): string | null {
  return record.status === 'waiting' ? (recordIso(record.wakeAt) ?? null) : null;
}

/** The correlation key (set at creation) and the version (set when a run starts), as columns. */
function originColumnsOf(record: ExecutionRecord): Pick<ExecutionColumns, 'correlationKey' | 'versionSha256' | 'versionCommit'> {
  return {
    correlationKey: record.correlationKey ?? null,
    versionSha256: record.version?.sha256 ?? null,
    versionCommit: record.version?.commit ?? null,
  };
}

/** The columns a run changes (a save of an existing row): no trigger, no queued_at. */
export type StateColumns = Pick<
  ExecutionColumns,
  | 'id'
  | 'status'
  | 'attempt'
  | 'record'
  | 'startedAt'
  | 'finishedAt'
  | 'durationMs'
  | 'error'
  | 'correlationKey'
  | 'versionSha256'
  | 'versionCommit'
  | 'wakeAt'
>;

export function stateColumnsOf(record: ExecutionRecord): StateColumns {
  return {
    id: record.id,
    status: record.status,
    attempt: record.attempt ?? 1,
    record: recordJson(record),
    startedAt: recordIso(record.startedAt) ?? null,
    finishedAt: recordIso(record.finishedAt) ?? null,
    durationMs: typeof record.durationMs === 'number' ? record.durationMs : null,
    error: record.error?.message ?? null,
    ...originColumnsOf(record),
    wakeAt: wakeAtOf(record),
  };
}

/** A JSON column as read: text (SQLite) is parsed; PostgreSQL hands back the value. */
export function parseJsonText(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** Rebuilds a record from its row; the columns are authoritative over the JSON copy. */
export function recordFromRow(
  row: {
    id: string;
    integration: string;
    status: string;
    test: boolean | number;
    attempt: number;
    trigger: unknown;
    record: unknown;
    queued_at: string | Date | null;
    started_at: string | Date | null;
    finished_at: string | Date | null;
    wake_at?: string | Date | null;
    retry_of?: string | null;
    cancel_requested?: boolean | number | null;
    concurrency_key?: string | null;
  },
  json: (value: unknown) => unknown = parseJsonText,
): ExecutionRecord {
  const body = json(row.record) as Partial<ExecutionRecord>;
  const trigger = json(row.trigger);
  const record: ExecutionRecord = {
    ...body,
    id: row.id,
    integration: row.integration,
    status: row.status as ExecutionStatus,
    test: !!row.test,
    attempt: Number(row.attempt),
    trigger,
    steps: body.steps ?? [],
    log: body.log ?? [],
  };
  const q = recordIso(row.queued_at);
  const s = recordIso(row.started_at);
  const f = recordIso(row.finished_at);
  if (q) record.queuedAt = q;
  if (s) record.startedAt = s;
  if (f) record.finishedAt = f;
  // The columns decide: a woken or cancelled row keeps no wake-up its JSON copy may still name.
  const w = recordIso(row.wake_at);
  if (w) record.wakeAt = w;
  else delete record.wakeAt;
  if (row.retry_of != null) record.retryOf = row.retry_of;
  if (row.cancel_requested) record.cancelRequested = true;
  else delete record.cancelRequested;
  if (row.concurrency_key != null) record.concurrencyKey = row.concurrency_key;
  return record;
}

export function summaryFromRow(row: {
  id: string;
  integration: string;
  status: string;
  test: boolean | number;
  attempt: number;
  queued_at: string | Date | null;
  started_at: string | Date | null;
  finished_at: string | Date | null;
  duration_ms: number | string | null;
  error: string | null;
  correlation_key?: string | null;
  version_sha256?: string | null;
  version_commit?: string | null;
  wake_at?: string | Date | null;
  retry_of?: string | null;
}): ExecutionSummary {
  const s: ExecutionSummary = {
    id: row.id,
    integration: row.integration,
    status: row.status as ExecutionStatus,
    test: !!row.test,
    attempt: Number(row.attempt),
  };
  const q = recordIso(row.queued_at);
  const st = recordIso(row.started_at);
  const f = recordIso(row.finished_at);
  if (q) s.queuedAt = q;
  if (st) s.startedAt = st;
  if (f) s.finishedAt = f;
  if (row.duration_ms !== null && row.duration_ms !== undefined) s.durationMs = Number(row.duration_ms);
  if (row.error !== null && row.error !== undefined) s.error = { message: row.error };
  if (row.correlation_key != null) s.correlationKey = row.correlation_key;
  if (row.version_sha256 != null)
    s.version = row.version_commit != null ? { sha256: row.version_sha256, commit: row.version_commit } : { sha256: row.version_sha256 };
  const w = recordIso(row.wake_at);
  if (w) s.wakeAt = w;
  if (row.retry_of != null) s.retryOf = row.retry_of;
  return s;
}
