/**
 * PostgreSQL schema, as numbered migrations applied on start inside one transaction, under a
 * session advisory lock so replicas starting together apply them once, one after the other.
 * `s` is the quoted schema name.
 */
import type { Pool } from 'pg';

export const MIGRATIONS: ReadonlyArray<(s: string) => string> = [
  // 1: initial schema
  (s) => `
  CREATE TABLE ${s}.executions (
    id          TEXT PRIMARY KEY,
    integration TEXT NOT NULL,
    status      TEXT NOT NULL,
    test        BOOLEAN NOT NULL DEFAULT FALSE,
    attempt     INTEGER NOT NULL DEFAULT 1,
    trigger     JSON NOT NULL,
    record      JSON NOT NULL,
    queued_at   TIMESTAMPTZ NOT NULL,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    duration_ms BIGINT,
    error       TEXT
  );
  CREATE INDEX executions_integration_queued ON ${s}.executions (integration, queued_at);
  CREATE INDEX executions_queued ON ${s}.executions (queued_at);
  CREATE INDEX executions_status ON ${s}.executions (status);
  CREATE INDEX executions_finished ON ${s}.executions (finished_at);

  CREATE TABLE ${s}.webhook_tokens (
    integration TEXT PRIMARY KEY,
    token       TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
  );

  CREATE TABLE ${s}.listening (
    integration TEXT PRIMARY KEY,
    since       TIMESTAMPTZ NOT NULL DEFAULT now()
  );

  CREATE TABLE ${s}.captures (
    seq         BIGSERIAL PRIMARY KEY,
    integration TEXT NOT NULL,
    id          TEXT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    trigger     JSON NOT NULL,
    UNIQUE (integration, id)
  );
  CREATE INDEX captures_integration_seq ON ${s}.captures (integration, seq);

  CREATE TABLE ${s}.payloads (
    integration TEXT NOT NULL,
    name        TEXT NOT NULL,
    trigger     JSON NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (integration, name)
  );

  CREATE TABLE ${s}.trigger_state (
    integration TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       JSON NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (integration, key)
  );

  CREATE SEQUENCE ${s}.poll_seen_seq;
  CREATE TABLE ${s}.poll_seen (
    integration TEXT NOT NULL,
    key         TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    PRIMARY KEY (integration, key)
  );
  CREATE INDEX poll_seen_seq_idx ON ${s}.poll_seen (integration, seq);

  CREATE TABLE ${s}.ticks (
    integration TEXT NOT NULL,
    tick        TEXT NOT NULL,
    claimed_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (integration, tick)
  );
  CREATE INDEX ticks_claimed ON ${s}.ticks (claimed_at);

  CREATE TABLE ${s}.tokens (
    key        TEXT PRIMARY KEY,
    blob       TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  );
  `,
  // 2: cluster-wide lease locks (Store.lock): no client is held while a lock is
  (s) => `
  CREATE TABLE ${s}.locks (
    key         TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL
  );
  `,
  // 3: the executions table is the queue (table-queue.ts): who runs a row, until when
  (s) => `
  ALTER TABLE ${s}.executions ADD COLUMN claimed_by TEXT, ADD COLUMN lease_until TIMESTAMPTZ;
  CREATE INDEX executions_unfinished ON ${s}.executions (integration, queued_at) WHERE status IN ('queued', 'running');
  `,
  // 4: finished_at is only ever searched for finished rows (retention): a queued or running row
  // no longer pays an index entry for its NULL.
  (s) => `
  DROP INDEX ${s}.executions_finished;
  CREATE INDEX executions_finished ON ${s}.executions (finished_at) WHERE finished_at IS NOT NULL;
  `,
  // 5: console sessions live in the store, so signing out (or out everywhere) survives a restart
  // and holds on every replica
  (s) => `
  CREATE TABLE ${s}.console_sessions (
    id         TEXT PRIMARY KEY,
    expires_at TIMESTAMPTZ NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
  );
  CREATE INDEX console_sessions_expires ON ${s}.console_sessions (expires_at);
  `,
  // 6: bounded listening-mode captures (src/store/captures.ts): the full size, whether the stored
  // trigger was cut, the trigger cut for lists, and a summary for the live stream and the console.
  (s) => `
  ALTER TABLE ${s}.captures ADD COLUMN size BIGINT NOT NULL DEFAULT 0, ADD COLUMN truncated BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN preview JSON, ADD COLUMN summary JSON;
  UPDATE ${s}.captures SET size = octet_length(trigger::text);
  `,
  // 7: idempotency keys of webhook and appEvent requests (docs/triggers.md "Idempotency"): the
  // primary key is the duplicate check across replicas; rows are forgotten once their window has passed.
  (s) => `
  CREATE TABLE ${s}.idempotency_keys (
    integration  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    key          TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (integration, kind, key)
  );
  CREATE INDEX idempotency_keys_expires ON ${s}.idempotency_keys (expires_at);
  `,
  // 8: the correlation key (indexed only where there is one: rows without pay nothing at intake)
  // and the file version that ran, as columns for filters and lists
  (s) => `
  ALTER TABLE ${s}.executions ADD COLUMN correlation_key TEXT, ADD COLUMN version_sha256 TEXT, ADD COLUMN version_commit TEXT;
  CREATE INDEX executions_correlation ON ${s}.executions (correlation_key, queued_at) WHERE correlation_key IS NOT NULL;
  `,
  // 9: durable execution (docs/promises.md). A waiting execution's wake-up, indexed for the waker
  // over waiting rows only (as is the count per integration, the cap on waiting executions); the
  // execution a retry retries; the cancel requested while it ran (a constant default: no rewrite).
  // Callback tokens, with their first request: `consumed_at` is set when that request has woken
  // the execution (the waker's safety net looks for received requests that have not: the partial
  // index).
  (s) => `
  ALTER TABLE ${s}.executions ADD COLUMN wake_at TIMESTAMPTZ, ADD COLUMN retry_of TEXT,
    ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;
  CREATE INDEX executions_waiting_wake ON ${s}.executions (wake_at) WHERE status = 'waiting';
  CREATE INDEX executions_waiting_integration ON ${s}.executions (integration) WHERE status = 'waiting';

  CREATE TABLE ${s}.callbacks (
    token        TEXT PRIMARY KEY,
    execution_id TEXT NOT NULL,
    integration  TEXT NOT NULL,
    step         TEXT NOT NULL,
    test         BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at   TIMESTAMPTZ NOT NULL,
    request      JSON,
    received_at  TIMESTAMPTZ,
    consumed_at  TIMESTAMPTZ
  );
  CREATE INDEX callbacks_unconsumed ON ${s}.callbacks (execution_id) WHERE received_at IS NOT NULL AND consumed_at IS NULL;
  CREATE INDEX callbacks_expires ON ${s}.callbacks (expires_at);
  `,
  // 10: the `concurrency:` key (docs/authoring.md "Per-key concurrency"). The claim looks up a
  // key's oldest queued row and counts its running and waiting ones: both read this index; rows
  // without a key are not in it (they pay nothing).
  (s) => `
  ALTER TABLE ${s}.executions ADD COLUMN concurrency_key TEXT;
  CREATE INDEX executions_concurrency ON ${s}.executions (integration, concurrency_key, status, queued_at) WHERE concurrency_key IS NOT NULL;
  `,
  // 11: the retries of an execution (a second retry of the same failed execution is refused unless
  // asked for; a bulk retry skips what was retried): looked up by retry_of, indexed only where set.
  (s) => `
  CREATE INDEX executions_retry_of ON ${s}.executions (retry_of, queued_at) WHERE retry_of IS NOT NULL;
  `,
];

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export async function migrate(pool: Pool, schema: string): Promise<number> {
  const s = quoteIdent(schema);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`hcm-runner:migrate:${schema}`]);
    try {
      await client.query('BEGIN');
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_version (version INTEGER NOT NULL)`);
      const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${s}.schema_version`);
      const current = rows[0]?.version ?? 0;
      if (current > MIGRATIONS.length) {
        throw new Error(
          `the database schema ${schema} is version ${current}, newer than this hcm-runner knows (${MIGRATIONS.length}): upgrade hcm-runner`,
        );
      }
      for (let v = current; v < MIGRATIONS.length; v++) await client.query(MIGRATIONS[v]!(s));
      if (rows.length === 0) await client.query(`INSERT INTO ${s}.schema_version (version) VALUES ($1)`, [MIGRATIONS.length]);
      else if (current !== MIGRATIONS.length) await client.query(`UPDATE ${s}.schema_version SET version = $1`, [MIGRATIONS.length]);
      await client.query('COMMIT');
      return MIGRATIONS.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`hcm-runner:migrate:${schema}`]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
