/**
 * SQLite schema, as numbered migrations. `schema_version` holds the applied number; every
 * pending migration runs on open inside one IMMEDIATE transaction (all or nothing).
 * Timestamps are ISO-8601 UTC strings (`toISOString()`), so text order is time order.
 */
import type Database from 'better-sqlite3';

export const MIGRATIONS: readonly string[] = [
  // 1: initial schema
  `
  CREATE TABLE executions (
    id          TEXT PRIMARY KEY,
    integration TEXT NOT NULL,
    status      TEXT NOT NULL,
    test        INTEGER NOT NULL DEFAULT 0,
    attempt     INTEGER NOT NULL DEFAULT 1,
    trigger     TEXT NOT NULL,
    record      TEXT NOT NULL,
    queued_at   TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    duration_ms INTEGER,
    error       TEXT
  );
  CREATE INDEX executions_integration_queued ON executions (integration, queued_at);
  CREATE INDEX executions_queued ON executions (queued_at);
  CREATE INDEX executions_status ON executions (status);
  CREATE INDEX executions_finished ON executions (finished_at);

  CREATE TABLE webhook_tokens (
    integration TEXT PRIMARY KEY,
    token       TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
  );

  CREATE TABLE listening (
    integration TEXT PRIMARY KEY,
    since       TEXT NOT NULL
  );

  CREATE TABLE captures (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    integration TEXT NOT NULL,
    id          TEXT NOT NULL,
    received_at TEXT NOT NULL,
    trigger     TEXT NOT NULL,
    UNIQUE (integration, id)
  );

  CREATE TABLE payloads (
    integration TEXT NOT NULL,
    name        TEXT NOT NULL,
    trigger     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (integration, name)
  );

  CREATE TABLE trigger_state (
    integration TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (integration, key)
  );

  CREATE TABLE poll_seen (
    integration TEXT NOT NULL,
    key         TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    PRIMARY KEY (integration, key)
  );
  CREATE INDEX poll_seen_seq ON poll_seen (integration, seq);

  CREATE TABLE ticks (
    integration TEXT NOT NULL,
    tick        TEXT NOT NULL,
    claimed_at  TEXT NOT NULL,
    PRIMARY KEY (integration, tick)
  );
  CREATE INDEX ticks_claimed ON ticks (claimed_at);

  CREATE TABLE tokens (
    key        TEXT PRIMARY KEY,
    blob       TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  `,
  // 2: finished_at is only ever searched for finished rows (retention): a queued or running row
  // no longer pays an index entry for its NULL at every insert (~3 µs of ~18 per intake row).
  `
  DROP INDEX executions_finished;
  CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;
  `,
  // 3: console sessions live in the store, so signing out (or out everywhere) survives a restart
  `
  CREATE TABLE console_sessions (
    id         TEXT PRIMARY KEY,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
  `,
  // 4: bounded listening-mode captures (src/store/captures.ts): the full size, whether the stored
  // trigger was cut, a summary for the live stream and the console, the trigger cut for lists.
  // Both tables rebuilt with their bulky columns last: SQLite reads a row's columns in order,
  // through the overflow pages of everything before them, so listing summaries (the console's
  // recent executions, the API's lists) read every byte of each listed execution's trigger —
  // 6 MiB requests made each render of an integration's page read 60 MB.
  `
  CREATE TABLE captures_by_size (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    integration TEXT NOT NULL,
    id          TEXT NOT NULL,
    received_at TEXT NOT NULL,
    size        INTEGER NOT NULL DEFAULT 0,
    truncated   INTEGER NOT NULL DEFAULT 0,
    summary     TEXT,
    preview     TEXT,
    trigger     TEXT NOT NULL,
    UNIQUE (integration, id)
  );
  INSERT INTO captures_by_size (seq, integration, id, received_at, size, trigger)
    SELECT seq, integration, id, received_at, length(CAST(trigger AS BLOB)), trigger FROM captures;
  DROP TABLE captures;
  ALTER TABLE captures_by_size RENAME TO captures;

  CREATE TABLE executions_by_size (
    id          TEXT PRIMARY KEY,
    integration TEXT NOT NULL,
    status      TEXT NOT NULL,
    test        INTEGER NOT NULL DEFAULT 0,
    attempt     INTEGER NOT NULL DEFAULT 1,
    queued_at   TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    duration_ms INTEGER,
    error       TEXT,
    trigger     TEXT NOT NULL,
    record      TEXT NOT NULL
  );
  INSERT INTO executions_by_size (id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error, trigger, record)
    SELECT id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error, trigger, record FROM executions;
  DROP TABLE executions;
  ALTER TABLE executions_by_size RENAME TO executions;
  CREATE INDEX executions_integration_queued ON executions (integration, queued_at);
  CREATE INDEX executions_queued ON executions (queued_at);
  CREATE INDEX executions_status ON executions (status);
  CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;
  `,
  // 5: idempotency keys of webhook and appEvent requests (docs/triggers.md "Idempotency"): the
  // primary key is the duplicate check; rows are forgotten once their window has passed.
  `
  CREATE TABLE idempotency_keys (
    integration  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    key          TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (integration, kind, key)
  );
  CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
  `,
  // 6: the correlation key (indexed only where there is one: rows without pay nothing at intake)
  // and the file version that ran, as columns for filters and lists. Rebuilt so they sit before the
  // bulky trigger and record (see 4: summaries read them).
  `
  CREATE TABLE executions_with_origin (
    id              TEXT PRIMARY KEY,
    integration     TEXT NOT NULL,
    status          TEXT NOT NULL,
    test            INTEGER NOT NULL DEFAULT 0,
    attempt         INTEGER NOT NULL DEFAULT 1,
    queued_at       TEXT NOT NULL,
    started_at      TEXT,
    finished_at     TEXT,
    duration_ms     INTEGER,
    error           TEXT,
    correlation_key TEXT,
    version_sha256  TEXT,
    version_commit  TEXT,
    trigger         TEXT NOT NULL,
    record          TEXT NOT NULL
  );
  INSERT INTO executions_with_origin (id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error, trigger, record)
    SELECT id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error, trigger, record FROM executions;
  DROP TABLE executions;
  ALTER TABLE executions_with_origin RENAME TO executions;
  CREATE INDEX executions_integration_queued ON executions (integration, queued_at);
  CREATE INDEX executions_queued ON executions (queued_at);
  CREATE INDEX executions_status ON executions (status);
  CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;
  CREATE INDEX executions_correlation ON executions (correlation_key, queued_at) WHERE correlation_key IS NOT NULL;
  `,
  // 7: durable execution (docs/promises.md). A waiting execution's wake-up, indexed for the waker
  // over waiting rows only (as is the count per integration, the cap on waiting executions); the
  // execution a retry retries; the cancel requested while it ran. Rebuilt so they sit before the
  // bulky trigger and record (see 4: summaries read them). The wake-up index leads with the status
  // it is restricted to: without it SQLite's planner prefers executions_status and sorts. Callback tokens, with their first
  // request: `consumed_at` is set when that request has woken the execution (the waker's safety
  // net looks for received requests that have not: the partial index).
  `
  CREATE TABLE executions_durable (
    id               TEXT PRIMARY KEY,
    integration      TEXT NOT NULL,
    status           TEXT NOT NULL,
    test             INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 1,
    queued_at        TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    duration_ms      INTEGER,
    error            TEXT,
    correlation_key  TEXT,
    version_sha256   TEXT,
    version_commit   TEXT,
    wake_at          TEXT,
    retry_of         TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    trigger          TEXT NOT NULL,
    record           TEXT NOT NULL
  );
  INSERT INTO executions_durable (id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error,
      correlation_key, version_sha256, version_commit, trigger, record)
    SELECT id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error,
      correlation_key, version_sha256, version_commit, trigger, record FROM executions;
  DROP TABLE executions;
  ALTER TABLE executions_durable RENAME TO executions;
  CREATE INDEX executions_integration_queued ON executions (integration, queued_at);
  CREATE INDEX executions_queued ON executions (queued_at);
  CREATE INDEX executions_status ON executions (status);
  CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;
  CREATE INDEX executions_correlation ON executions (correlation_key, queued_at) WHERE correlation_key IS NOT NULL;
  CREATE INDEX executions_waiting_wake ON executions (status, wake_at) WHERE status = 'waiting';
  CREATE INDEX executions_waiting_integration ON executions (integration) WHERE status = 'waiting';

  CREATE TABLE callbacks (
    token        TEXT PRIMARY KEY,
    execution_id TEXT NOT NULL,
    integration  TEXT NOT NULL,
    step         TEXT NOT NULL,
    test         INTEGER NOT NULL DEFAULT 0,
    expires_at   TEXT NOT NULL,
    request      TEXT,
    received_at  TEXT,
    consumed_at  TEXT
  );
  CREATE INDEX callbacks_unconsumed ON callbacks (execution_id) WHERE received_at IS NOT NULL AND consumed_at IS NULL;
  CREATE INDEX callbacks_expires ON callbacks (expires_at);
  `,
  // 8: the `concurrency:` key (docs/authoring.md "Per-key concurrency"), indexed with the status
  // and acceptance order of its line; rows without a key are not in the index. Rebuilt so it sits
  // after the durable columns and before the bulky trigger and record (see 4: summaries read them);
  // the rebuild drops every index of the table, so the durable ones of 7 are made again too.
  `
  CREATE TABLE executions_keyed (
    id               TEXT PRIMARY KEY,
    integration      TEXT NOT NULL,
    status           TEXT NOT NULL,
    test             INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 1,
    queued_at        TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    duration_ms      INTEGER,
    error            TEXT,
    correlation_key  TEXT,
    version_sha256   TEXT,
    version_commit   TEXT,
    wake_at          TEXT,
    retry_of         TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    concurrency_key  TEXT,
    trigger          TEXT NOT NULL,
    record           TEXT NOT NULL
  );
  INSERT INTO executions_keyed (id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error,
      correlation_key, version_sha256, version_commit, wake_at, retry_of, cancel_requested, trigger, record)
    SELECT id, integration, status, test, attempt, queued_at, started_at, finished_at, duration_ms, error,
      correlation_key, version_sha256, version_commit, wake_at, retry_of, cancel_requested, trigger, record FROM executions;
  DROP TABLE executions;
  ALTER TABLE executions_keyed RENAME TO executions;
  CREATE INDEX executions_integration_queued ON executions (integration, queued_at);
  CREATE INDEX executions_queued ON executions (queued_at);
  CREATE INDEX executions_status ON executions (status);
  CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;
  CREATE INDEX executions_correlation ON executions (correlation_key, queued_at) WHERE correlation_key IS NOT NULL;
  CREATE INDEX executions_waiting_wake ON executions (status, wake_at) WHERE status = 'waiting';
  CREATE INDEX executions_waiting_integration ON executions (integration) WHERE status = 'waiting';
  CREATE INDEX executions_concurrency ON executions (integration, concurrency_key, status, queued_at) WHERE concurrency_key IS NOT NULL;
  `,
  // 9: the retries of an execution (a second retry of the same failed execution is refused unless
  // asked for; a bulk retry skips what was retried): looked up by retry_of, indexed only where set.
  `
  CREATE INDEX executions_retry_of ON executions (retry_of, queued_at) WHERE retry_of IS NOT NULL;
  `,
];

export function migrate(db: Database.Database): number {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const run = db.transaction(() => {
    const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(`the database schema is version ${current}, newer than this hcm-runner knows (${MIGRATIONS.length}): upgrade hcm-runner`);
    }
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (!row) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
    else if (current !== MIGRATIONS.length) db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
    return MIGRATIONS.length;
  });
  return run.immediate();
}
