/**
 * Helpers shared by the SQLite and PostgreSQL stores: the execution record <-> row mapping,
 * a per-key async mutex, token generation and small normalisers.
 */
import { randomBytes } from 'node:crypto';
import { triggerJson } from '../common/trigger-json.js';
import type { ExecutionRecord, ExecutionStatus } from '../engine/record.js';
import type { ExecutionFilter, ExecutionSummary, NewExecution } from './types.js';

export const STATUSES: readonly ExecutionStatus[] = ['queued', 'running', 'succeeded', 'failed'];
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 500;

/** Write-path counters, for tests and metrics. */
export interface StoreStats {
  /** enqueue() calls (commitPoll not included). */
  enqueueCalls: number;
  /** Transactions that held at least one enqueue() call's rows. */
  enqueueCommits: number;
  /** All write transactions committed. */
  commits: number;
  /** WAL syncs run off the event loop (SQLite, for batches of concurrent writes). */
  walSyncs: number;
}

export function newStats(): StoreStats {
  return { enqueueCalls: 0, enqueueCommits: 0, commits: 0, walSyncs: 0 };
}

/** A webhook token: 32 random bytes, base64url (256 bits). */
export function newWebhookToken(): string {
  return randomBytes(32).toString('base64url');
}

export function iso(value: string | Date | undefined | null): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) throw new Error(`invalid timestamp: ${String(value)}`);
  return d.toISOString();
}

/** What `Date.prototype.toISOString` writes (years 0–9999). */
const CANONICAL_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * `iso` for the timestamps of records saved and read: they were written by `toISOString`, so a
 * string in that exact form is kept as it is instead of being parsed and formatted again (three
 * times per record). Anything else (a PostgreSQL Date, another form) goes through `iso`.
 */
function recordIso(value: string | Date | undefined | null): string | undefined {
  return typeof value === 'string' && CANONICAL_ISO.test(value) ? value : iso(value);
}

export function clampLimit(limit: number | undefined, def = DEFAULT_LIST_LIMIT, max = MAX_LIST_LIMIT): number {
  if (limit === undefined || !Number.isFinite(limit)) return def;
  return Math.max(1, Math.min(max, Math.floor(limit)));
}

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
  };
}

/** The columns a run changes (a save of an existing row): no trigger, no queued_at. */
export type StateColumns = Pick<ExecutionColumns, 'id' | 'status' | 'attempt' | 'record' | 'startedAt' | 'finishedAt' | 'durationMs' | 'error'>;

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
  return s;
}

export function emptyCounts(): Record<ExecutionStatus, number> {
  return { queued: 0, running: 0, succeeded: 0, failed: 0 };
}

/** Removes duplicate keys, keeping each key's last position (the newest). */
export function dedupeKeepLast(keys: readonly string[]): string[] {
  const last = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) last.set(keys[i]!, i);
  return keys.filter((k, i) => last.get(k) === i);
}

export function checkFilter(filter: ExecutionFilter): void {
  if (filter.status && !STATUSES.includes(filter.status)) throw new Error(`unknown execution status: ${filter.status}`);
}

/** In-process async mutex per key: callers of the same key run one at a time, in order. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** A `signal` that aborts while waiting rejects with its reason; those queued behind still wait their turn. */
  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    try {
      await (signal ? untilAborted(prev, signal) : prev);
    } catch (err) {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
      throw err;
    }
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

function untilAborted(p: Promise<void>, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
