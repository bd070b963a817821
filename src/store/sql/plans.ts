/**
 * The store's SQL, written once for SQLite and PostgreSQL: `?` placeholders (the dialect numbers
 * them), unqualified table names (PostgreSQL sets the schema as the search path), standard upserts
 * (`ON CONFLICT`) and `RETURNING`. Timestamps are passed in as ISO-8601 text; JSON columns take
 * JSON text. The statements of the hot write paths that depend on an engine's batching (enqueue,
 * group-committed saves, the PostgreSQL queue) are in sqlite-plans.ts and postgres-plans.ts; the
 * executions columns every statement names are execution-columns.ts.
 */
import type { Step } from './dialect.js';
import { ALL_COLUMNS, assignments, columnList, type ExecutionColumn, RECORD_COLUMNS, STATE_COLUMNS, SUMMARY_COLUMNS } from './execution-columns.js';

export const EXEC_COLS = columnList(RECORD_COLUMNS);
export const SUMMARY_COLS = columnList(SUMMARY_COLUMNS);
/** A capture's columns besides its trigger forms (src/store/captures.ts says what each holds). */
export const CAPTURE_COLS = 'integration, id, received_at, size, truncated';
export const PAYLOAD_COLS = 'integration, name, trigger, created_at, updated_at';

const s = (sql: string, ...params: unknown[]): Step => ({ sql, params });

// Executions -------------------------------------------------------------------------------------

export const getExecution = `SELECT ${EXEC_COLS} FROM executions WHERE id = ?`;
export const unfinishedExecutions = `SELECT ${EXEC_COLS} FROM executions WHERE status IN ('queued', 'running') ORDER BY queued_at ASC, id ASC`;
/** Waiting executions with a `concurrency:` key: they hold their key's slot (the in-process queue's start). */
export const waitingKeyHolders = `SELECT id, integration, concurrency_key FROM executions WHERE status = 'waiting' AND concurrency_key IS NOT NULL`;
/**
 * Executions ahead of a queued one in its `concurrency:` line ($1 integration, $2 key, then its
 * queued_at twice and id): those of the key running or waiting, and those queued before it.
 */
export const aheadInLine = `SELECT count(*) AS n FROM executions
  WHERE integration = ? AND concurrency_key = ?
    AND (status IN ('running', 'waiting') OR (status = 'queued' AND (queued_at < ? OR (queued_at = ? AND id < ?))))`;
export const countByStatus = 'SELECT status, COUNT(*) AS n FROM executions GROUP BY status';

/**
 * The newest execution of each named integration, in one statement: per name, the newest id
 * through the (integration, queued_at) index, then those rows by primary key.
 */
export const latestExecutions = (count: number) =>
  `SELECT ${SUMMARY_COLS} FROM executions WHERE id IN (
     SELECT (SELECT x.id FROM executions x WHERE x.integration = n.column1 ORDER BY x.queued_at DESC, x.id DESC LIMIT 1)
     FROM (VALUES ${Array.from({ length: count }, () => '(?)').join(', ')}) AS n)`;

export function listExecutions(f: { integration?: string; status?: string; correlation?: string; since?: string; before?: string; limit: number }): {
  sql: string;
  params: unknown[];
} {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.correlation !== undefined) {
    where.push('correlation_key = ?');
    params.push(f.correlation);
  }
  if (f.integration !== undefined) {
    where.push('integration = ?');
    params.push(f.integration);
  }
  if (f.status !== undefined) {
    where.push('status = ?');
    params.push(f.status);
  }
  if (f.since !== undefined) {
    where.push('queued_at >= ?');
    params.push(f.since);
  }
  if (f.before !== undefined) {
    where.push('queued_at < ?');
    params.push(f.before);
  }
  params.push(f.limit);
  return {
    sql: `SELECT ${SUMMARY_COLS} FROM executions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY queued_at DESC, id DESC LIMIT ?`,
    params,
  };
}

/**
 * Marks a queued (or interrupted) execution running; nothing for a finished or missing one.
 * Parameters: attempt, startedAt, those of `also` (more assignments: PostgreSQL takes the
 * execution's lease in the same statement, postgres-plans.ts), then the id.
 */
export const markRunningSql = (table = 'executions', also = '') =>
  `UPDATE ${table} SET status = 'running', attempt = ?, started_at = ?, finished_at = NULL, duration_ms = NULL, error = NULL${also}
     WHERE id = ? AND status IN ('queued', 'running') RETURNING ${EXEC_COLS}`;
const MARK_RUNNING = markRunningSql();
export const markRunning = (id: string, attempt: number, startedAt: string): Step => s(MARK_RUNNING, attempt, startedAt, id);

/** What a save of a run writes over the row it ran from (`stored`): never the trigger or queued_at. */
export const stateAssignments = (value: (column: ExecutionColumn) => string) =>
  assignments(
    STATE_COLUMNS.filter((c) => c !== 'id'),
    value,
  );

/** Written when the row is created, never over it: a save does not clear a cancel requested meanwhile. */
const UPSERTED_OVER = ALL_COLUMNS.filter((c) => c !== 'id' && c !== 'trigger' && c !== 'retry_of' && c !== 'cancel_requested');

/**
 * What a save writes over an existing row when it may have to create it (the upsert): all but the
 * id, the trigger (which never changes), what the row was created with (`retry_of`) and the cancel
 * flag (`cancelExecution`'s), and queued_at only when the record names one.
 * `from`: the new values (`excluded`, a row set); `queuedGiven`: whether the record names queued_at;
 * `existing`: the row as it was.
 */
export const upsertAssignments = (from: string, queuedGiven: string, existing: string) =>
  assignments(UPSERTED_OVER, (c) =>
    c === 'queued_at'
      ? `CASE WHEN ${queuedGiven} THEN ${from}.queued_at ELSE ${existing}.queued_at END`
      : // Set at creation: a save whose record lacks it keeps the row's.
        c === 'concurrency_key'
        ? `COALESCE(${from}.concurrency_key, ${existing}.concurrency_key)`
        : `${from}.${c}`,
  );

/** Finished executions before `cutoff`, and the schedule/poll ticks claimed before it. */
export const prune = (cutoff: string): Step[] => [
  s(`DELETE FROM executions WHERE status IN ('succeeded', 'failed', 'cancelled') AND finished_at IS NOT NULL AND finished_at < ?`, cutoff),
  s('DELETE FROM ticks WHERE claimed_at < ?', cutoff),
];

// Durable execution: waiting, callbacks, cancel (docs/promises.md) ----------------------------------

/** The earliest wake-up of the waiting rows (the partial index on wake_at). */
export const nextWakeAt = `SELECT MIN(wake_at) AS wake_at FROM executions WHERE status = 'waiting'`;
/** Waiting rows of one integration (the partial index on integration). */
export const countWaiting = `SELECT COUNT(*) AS n FROM executions WHERE status = 'waiting' AND integration = ?`;

/**
 * The waiting rows that are due at `now` (parameters: now, now, now, limit, limit): those whose
 * wake-up has come (the wake_at index), and those with a callback request that has not woken them
 * yet (the callbacks' unconsumed index: a request that came while the execution still ran toward
 * its wait) — oldest wake-up first, a callback's as if due now. `lock`: PostgreSQL's
 * `FOR UPDATE SKIP LOCKED`, so that concurrent wakers each take other rows.
 */
export const dueWaiting = (table = 'executions', callbacks = 'callbacks', lock = '') =>
  `SELECT e.id, CASE WHEN e.wake_at <= ? THEN e.wake_at ELSE ? END AS due_at FROM ${table} e WHERE e.status = 'waiting' AND e.id IN (
     SELECT * FROM (SELECT w.id FROM ${table} w WHERE w.status = 'waiting' AND w.wake_at <= ? ORDER BY w.wake_at LIMIT ?) AS timed
     UNION
     SELECT c.execution_id FROM ${callbacks} c WHERE c.received_at IS NOT NULL AND c.consumed_at IS NULL)
   ORDER BY due_at, e.id LIMIT ?${lock}`;

/** One due row made queued again (SQLite: one process wakes, inside one transaction). */
export const wakeOne = `UPDATE executions SET status = 'queued', wake_at = NULL WHERE id = ? AND status = 'waiting' RETURNING ${EXEC_COLS}`;
/** The received requests of a woken execution have woken it: the safety net does not wake it for them again. */
export const consumeCallbacks = 'UPDATE callbacks SET consumed_at = ? WHERE execution_id = ? AND received_at IS NOT NULL AND consumed_at IS NULL';

export const CALLBACK_COLS = 'token, execution_id, integration, step, test, expires_at, request, received_at';
export const createCallback = (c: {
  token: string;
  executionId: string;
  integration: string;
  step: string;
  test: boolean;
  expiresAt: string;
  request: string | null;
  receivedAt: string | null;
}): Step =>
  s(
    `INSERT INTO callbacks (${CALLBACK_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    c.token,
    c.executionId,
    c.integration,
    c.step,
    c.test,
    c.expiresAt,
    c.request,
    c.receivedAt,
  );
export const getCallback = `SELECT ${CALLBACK_COLS} FROM callbacks WHERE token = ?`;
/**
 * A callback's first request (request, receivedAt, token, now): only while it has none and has
 * not expired. The row lock makes concurrent requests wait for each other: exactly one is recorded.
 */
export const recordCallbackRequest = `UPDATE callbacks SET request = ?, received_at = ? WHERE token = ? AND received_at IS NULL AND expires_at > ?
  RETURNING execution_id`;
/** Makes an execution waiting on anything due now (the waker takes it at its next sweep): wakeAt, id. */
export const makeDue = `UPDATE executions SET wake_at = ? WHERE id = ? AND status = 'waiting'`;
export const pruneCallbacks = (now: string): Step => s('DELETE FROM callbacks WHERE expires_at <= ?', now);

/**
 * Cancel, in one transaction: a queued or waiting execution is cancelled at once; a running one
 * gets the flag (its process stops it at its next step boundary, and its own final save decides
 * the status: saves never write the flag, and nothing else sets `cancelled` on a running row);
 * then the row as it stands (finished, or missing). Parameters: now, id.
 */
export const cancelExecution = (id: string, now: string): Step[] => [
  s(
    `UPDATE executions SET status = 'cancelled', finished_at = ?, wake_at = NULL WHERE id = ? AND status IN ('queued', 'waiting') RETURNING ${EXEC_COLS}`,
    now,
    id,
  ),
  s(`UPDATE executions SET cancel_requested = ? WHERE id = ? AND status = 'running' RETURNING ${EXEC_COLS}`, true, id),
  s(getExecution, id),
];
/** Which of `count` ids (the parameters, then `true`) have a cancel requested. */
export const cancelRequested = (count: number) =>
  `SELECT id FROM executions WHERE id IN (${Array.from({ length: count }, () => '?').join(', ')}) AND cancel_requested = ?`;

/** The retries of `count` executions (the parameters), oldest first (the partial index on retry_of). */
export const retriesOf = (count: number) =>
  `SELECT retry_of, id FROM executions WHERE retry_of IN (${Array.from({ length: count }, () => '?').join(', ')}) ORDER BY retry_of, queued_at ASC, id ASC`;

// Idempotency keys (docs/triggers.md "Idempotency") ------------------------------------------------

/**
 * Claims `key` for `executionId`: the insert is the check (the primary key (integration, kind,
 * key) decides, on every replica at once). A row whose window has passed but is not pruned yet is
 * taken over. The first step returns a row only when this call claimed the key; the second reads
 * who holds it (the claim's own execution, or the earlier one).
 */
export const claimIdempotencyKey = (
  k: { integration: string; kind: 'live' | 'test'; key: string; executionId: string; expiresAt: string },
  now: string,
): Step[] => [
  s(
    `INSERT INTO idempotency_keys (integration, kind, key, execution_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (integration, kind, key) DO UPDATE SET execution_id = excluded.execution_id, expires_at = excluded.expires_at,
       created_at = excluded.created_at WHERE idempotency_keys.expires_at <= ? RETURNING execution_id`,
    k.integration,
    k.kind,
    k.key,
    k.executionId,
    k.expiresAt,
    now,
    now,
  ),
  s('SELECT execution_id FROM idempotency_keys WHERE integration = ? AND kind = ? AND key = ?', k.integration, k.kind, k.key),
];

/** Keys whose window has passed are forgotten (retention; a claim takes such a row over anyway). */
export const pruneIdempotencyKeys = (now: string): Step => s('DELETE FROM idempotency_keys WHERE expires_at <= ?', now);

// Webhook tokens ---------------------------------------------------------------------------------

export const tokenOf = 'SELECT token FROM webhook_tokens WHERE integration = ?';
export const integrationForToken = 'SELECT integration FROM webhook_tokens WHERE token = ?';
export const createToken = (integration: string, token: string, now: string): Step[] => [
  s('INSERT INTO webhook_tokens (integration, token, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', integration, token, now),
  s(tokenOf, integration),
];
export const rotateToken = (integration: string, token: string, now: string): Step =>
  s(
    `INSERT INTO webhook_tokens (integration, token, created_at) VALUES (?, ?, ?)
     ON CONFLICT (integration) DO UPDATE SET token = excluded.token, created_at = excluded.created_at RETURNING token`,
    integration,
    token,
    now,
  );

// Listening, captures, payloads ------------------------------------------------------------------

export const isListening = 'SELECT 1 AS one FROM listening WHERE integration = ?';
export const listeningIntegrations = 'SELECT integration FROM listening ORDER BY integration';
export const setListening = (integration: string, on: boolean, now: string): Step =>
  on
    ? s('INSERT INTO listening (integration, since) VALUES (?, ?) ON CONFLICT DO NOTHING', integration, now)
    : s('DELETE FROM listening WHERE integration = ?', integration);

/** Lists carry the trigger cut for lists (`preview`), or the stored one when that is small enough. */
export const listCaptures = `SELECT ${CAPTURE_COLS}, COALESCE(preview, trigger) AS trigger FROM captures WHERE integration = ? ORDER BY seq DESC LIMIT ?`;
/**
 * Summaries, newest first, after capture `?` when it is still kept (else all). Rows saved before
 * summaries existed have none: their trigger is read instead, to make one.
 */
export const captureSummaries = `SELECT ${CAPTURE_COLS}, summary, CASE WHEN summary IS NULL THEN trigger END AS trigger FROM captures
  WHERE integration = ? AND seq > COALESCE((SELECT seq FROM captures WHERE integration = ? AND id = ?), 0) ORDER BY seq DESC LIMIT ?`;
export const getCapture = `SELECT ${CAPTURE_COLS}, trigger FROM captures WHERE integration = ? AND id = ?`;
/** Trimming must see concurrent captures of the same integration: one at a time (the lock). */
export const addCapture = (
  c: {
    integration: string;
    id: string;
    receivedAt: string;
    trigger: string;
    preview: string | null;
    summary: string;
    size: number;
    truncated: boolean;
  },
  keep: number,
): Step[] => [
  { lock: `captures:${c.integration}` },
  s(
    `INSERT INTO captures (integration, id, received_at, trigger, preview, summary, size, truncated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (integration, id) DO UPDATE SET received_at = excluded.received_at, trigger = excluded.trigger, preview = excluded.preview,
       summary = excluded.summary, size = excluded.size, truncated = excluded.truncated`,
    c.integration,
    c.id,
    c.receivedAt,
    c.trigger,
    c.preview,
    c.summary,
    c.size,
    c.truncated,
  ),
  s(
    `DELETE FROM captures WHERE integration = ? AND seq NOT IN (SELECT seq FROM captures WHERE integration = ? ORDER BY seq DESC LIMIT ?)`,
    c.integration,
    c.integration,
    keep,
  ),
];

export const getPayload = `SELECT ${PAYLOAD_COLS} FROM payloads WHERE integration = ? AND name = ?`;
export const listPayloads = `SELECT ${PAYLOAD_COLS} FROM payloads WHERE integration = ? ORDER BY name`;
export const savePayload = (integration: string, name: string, trigger: string, now: string): Step =>
  s(
    `INSERT INTO payloads (integration, name, trigger, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (integration, name) DO UPDATE SET trigger = excluded.trigger, updated_at = excluded.updated_at RETURNING ${PAYLOAD_COLS}`,
    integration,
    name,
    trigger,
    now,
    now,
  );
export const deletePayload = (integration: string, name: string): Step =>
  s('DELETE FROM payloads WHERE integration = ? AND name = ?', integration, name);

// Trigger state ----------------------------------------------------------------------------------

export const getState = 'SELECT value FROM trigger_state WHERE integration = ? AND key = ?';
export const setState = (integration: string, key: string, value: string, now: string): Step =>
  s(
    `INSERT INTO trigger_state (integration, key, value, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (integration, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    integration,
    key,
    value,
    now,
  );
export const deleteState = (integration: string, key?: string): Step =>
  key === undefined
    ? s('DELETE FROM trigger_state WHERE integration = ?', integration)
    : s('DELETE FROM trigger_state WHERE integration = ? AND key = ?', integration, key);
export const takeState = (integration: string, key: string): Step =>
  s('DELETE FROM trigger_state WHERE integration = ? AND key = ? RETURNING value', integration, key);

export const seenKeys = 'SELECT key FROM poll_seen WHERE integration = ?';
/**
 * Remembers `keys` (in order: later = newer) after the integration's newest, keeping `maxSeen`.
 * One poll of an integration at a time (the lock), so the numbering cannot collide.
 */
export const commitSeen = (integration: string, keys: string[], maxSeen: number): Step[] => [
  { lock: `poll:${integration}` },
  ...(keys.length
    ? [
        s(
          `INSERT INTO poll_seen (integration, key, seq)
           SELECT ?, k.column1, (SELECT COALESCE(MAX(seq), 0) FROM poll_seen WHERE integration = ?) + k.column2
           FROM (VALUES ${keys.map(() => '(?, CAST(? AS INTEGER))').join(', ')}) AS k WHERE true
           ON CONFLICT (integration, key) DO UPDATE SET seq = excluded.seq`,
          integration,
          integration,
          ...keys.flatMap((k, i) => [k, i + 1]),
        ),
      ]
    : []),
  s(
    `DELETE FROM poll_seen WHERE integration = ? AND seq NOT IN (SELECT seq FROM poll_seen WHERE integration = ? ORDER BY seq DESC LIMIT ?)`,
    integration,
    integration,
    maxSeen,
  ),
];

export const claimTick = (integration: string, tick: string, now: string): Step =>
  s('INSERT INTO ticks (integration, tick, claimed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', integration, tick, now);

// Connection tokens (encrypted blobs) --------------------------------------------------------------

export const getTokenBlob = 'SELECT blob FROM tokens WHERE key = ?';
export const setTokenBlob = (key: string, blob: string | undefined, now: string): Step =>
  blob === undefined
    ? s('DELETE FROM tokens WHERE key = ?', key)
    : s(
        'INSERT INTO tokens (key, blob, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET blob = excluded.blob, updated_at = excluded.updated_at',
        key,
        blob,
        now,
      );

// Console sessions ---------------------------------------------------------------------------------

/** A new session; expired ones are forgotten in the same write, so the table stays small. */
export const addConsoleSession = (id: string, expiresAt: string, now: string): Step[] => [
  s('DELETE FROM console_sessions WHERE expires_at <= ?', now),
  s('INSERT INTO console_sessions (id, expires_at, created_at) VALUES (?, ?, ?)', id, expiresAt, now),
];
export const hasConsoleSession = 'SELECT 1 AS one FROM console_sessions WHERE id = ? AND expires_at > ?';
export const deleteConsoleSession = (id: string): Step => s('DELETE FROM console_sessions WHERE id = ?', id);
export const deleteConsoleSessions = (): Step => s('DELETE FROM console_sessions');
