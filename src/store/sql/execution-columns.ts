/**
 * The `executions` table's columns, declared once (table order). Every statement that names them
 * — the shared plans, SQLite's and PostgreSQL's hot paths, the queue's claim — takes its column
 * list from here. PostgreSQL's batch rows and single-save parameters are written out for speed
 * (postgres/group-saves.ts); test/architecture/store-sql.test.ts holds them to this order. A
 * column added to the table is added here (and to the migrations, to `ExecutionColumns` in
 * ../execution-rows.ts, and to group-saves.ts).
 */
import type { ExecutionColumns } from '../execution-rows.js';

/** Column → the `ExecutionColumns` field it is written from, and its type in a PostgreSQL row set. */
const COLUMNS = {
  id: ['id', 'text'],
  integration: ['integration', 'text'],
  status: ['status', 'text'],
  test: ['test', 'boolean'],
  attempt: ['attempt', 'int'],
  trigger: ['trigger', 'json'],
  record: ['record', 'json'],
  queued_at: ['queuedAt', 'timestamptz'],
  started_at: ['startedAt', 'timestamptz'],
  finished_at: ['finishedAt', 'timestamptz'],
  duration_ms: ['durationMs', 'bigint'],
  error: ['error', 'text'],
  correlation_key: ['correlationKey', 'text'],
  version_sha256: ['versionSha256', 'text'],
  version_commit: ['versionCommit', 'text'],
  wake_at: ['wakeAt', 'timestamptz'],
  retry_of: ['retryOf', 'text'],
  cancel_requested: ['cancelRequested', 'boolean'],
  concurrency_key: ['concurrencyKey', 'text'],
} as const satisfies Record<string, readonly [keyof ExecutionColumns, string]>;

export type ExecutionColumn = keyof typeof COLUMNS;

/** Every column, in table order. */
export const ALL_COLUMNS = Object.keys(COLUMNS) as ExecutionColumn[];

const except = (...left: ExecutionColumn[]) => ALL_COLUMNS.filter((c) => !left.includes(c));

/** What a record is rebuilt from (../execution-rows.ts `recordFromRow`). */
export const RECORD_COLUMNS = except('duration_ms', 'error');
/** A list row: no trigger, no record (`summaryFromRow`); the cancel flag only matters to a running process. */
export const SUMMARY_COLUMNS = except('trigger', 'record', 'cancel_requested');
/**
 * What a run changes in an existing row (`stateColumnsOf`): never the trigger or when it was
 * queued, nor what is set once at creation (`retry_of`, `concurrency_key`) or by someone else
 * while it runs (`cancel_requested`, set by `cancelExecution`: a checkpoint of the running process
 * must not clear it).
 */
export const STATE_COLUMNS = except('integration', 'test', 'trigger', 'queued_at', 'retry_of', 'cancel_requested', 'concurrency_key');
/** What an enqueue writes: the row up to `queued_at`, what it retries and its concurrency key; the rest is written by the run. */
export const QUEUED_COLUMNS = except('started_at', 'finished_at', 'duration_ms', 'error', 'wake_at', 'cancel_requested');

/** The field of `ExecutionColumns` a column is written from. */
export const fieldOf = (column: ExecutionColumn): keyof ExecutionColumns => COLUMNS[column][0];
/** Whether a column holds JSON (written as JSON text). */
export const isJson = (column: ExecutionColumn): boolean => COLUMNS[column][1] === 'json';

/**
 * `a, b, c` — each column as `expr(column)` when given (a literal, a cast, a CASE), else with
 * `prefix` (`e.`, `v.`).
 */
export function columnList(columns: readonly ExecutionColumn[], prefix = '', expr: Partial<Record<ExecutionColumn, string>> = {}): string {
  return columns.map((c) => expr[c] ?? `${prefix}${c}`).join(', ');
}

/** `a = <value of a>, b = …` for a SET list; `value(column)` gives the right-hand side. */
export function assignments(columns: readonly ExecutionColumn[], value: (column: ExecutionColumn) => string): string {
  return columns.map((c) => `${c} = ${value(c)}`).join(', ');
}

/** `a text, b int, …`: a PostgreSQL row set's column definitions (`json_to_recordset(…) AS v(…)`). */
export function rowTypes(columns: readonly ExecutionColumn[]): string {
  return columns.map((c) => `${c} ${COLUMNS[c][1]}`).join(', ');
}
