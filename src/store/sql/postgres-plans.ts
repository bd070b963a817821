/**
 * PostgreSQL's own statements: the group-committed hot paths (enqueue with its NOTIFY, batched
 * saves), markRunning with the lease, the table queue's claim and housekeeping
 * (postgres/table-queue.ts), the lease locks (postgres/lease-locks.ts), advisory locks and the
 * connection's search path. Unlike plans.ts they use `$n` placeholders and name their table
 * schema-qualified (a quoted `schema.table`): each builder runs once per store, so a statement's
 * text is constant and is prepared once per connection (postgres/prepared.ts).
 *
 * A running row carries who holds it (`claimed_by`) and until when (`lease_until`).
 */
import { dollarPlaceholders } from './dialect.js';
import {
  ALL_COLUMNS,
  columnList,
  type ExecutionColumn,
  isJson,
  QUEUED_COLUMNS,
  RECORD_COLUMNS,
  rowTypes,
  STATE_COLUMNS,
} from './execution-columns.js';
import { dueWaiting, markRunningSql, stateAssignments, upsertAssignments } from './plans.js';

/** Now plus `seconds` (a parameter) seconds. */
const leaseUntil = (seconds: string) => `now() + ${seconds} * interval '1 second'`;

/** The holder columns of a row saved with `status`: held by `owner` while running, by nobody after. */
const leaseIfRunning = (status: string, owner: string, seconds: string) =>
  [`CASE WHEN ${status} = 'running' THEN ${owner} END`, `CASE WHEN ${status} = 'running' THEN ${leaseUntil(seconds)} END`] as const;

/** `$n` of a column among positional parameters, cast where it holds JSON text. */
const positional = (columns: readonly ExecutionColumn[]) => (c: ExecutionColumn) => `$${columns.indexOf(c) + 1}${isJson(c) ? '::json' : ''}`;

/** The statements on the executions table `t` (quoted, schema-qualified) that store writes run. */
export function executionPlans(t: string) {
  const [batchOwner, batchLease] = leaseIfRunning('v.status', '$2', '$3');
  const upd = stateAssignments((c) => `v.${c}`);
  const one = positional(STATE_COLUMNS);
  const [oneOwner, oneLease] = leaseIfRunning(one('status'), `$${STATE_COLUMNS.length + 1}`, `$${STATE_COLUMNS.length + 2}`);
  const all = positional(ALL_COLUMNS);
  const n = ALL_COLUMNS.length;
  const [upsertOwner, upsertLease] = leaseIfRunning(all('status'), `$${n + 2}`, `$${n + 3}`);
  return {
    /**
     * Enqueue, one statement: the rows ($1, a JSON array), and a NOTIFY on channel $2 (delivered
     * at commit) naming the integrations that got work, which wakes every replica's queue. Too
     * many names for a payload: an empty one (= look).
     */
    insertQueued: `WITH ins AS (
           INSERT INTO ${t} (${columnList(QUEUED_COLUMNS)})
           SELECT ${columnList(QUEUED_COLUMNS, '', { status: "'queued'", trigger: "COALESCE(trigger, 'null')" })}
           FROM json_to_recordset($1::json) AS t(${rowTypes(QUEUED_COLUMNS.filter((c) => c !== 'status'))})
           RETURNING integration),
         names AS (SELECT string_agg(DISTINCT integration, E'\\n') AS list FROM ins)
         SELECT pg_notify($2, CASE WHEN octet_length(list) < 7900 THEN list ELSE '' END) FROM names`,
    /** plans.ts's markRunning, also taking the lease: attempt, startedAt, owner, lease seconds, id. */
    markRunning: dollarPlaceholders(markRunningSql(t, `,\n           claimed_by = ?, lease_until = ${leaseUntil('?')}`)),
    /** Saves of existing rows ($1: JSON array of state columns; $2 owner, $3 lease seconds); returns the ids found. */
    updateStates: `UPDATE ${t} e SET ${upd},
         claimed_by = ${batchOwner},
         lease_until = ${batchLease}
       FROM json_to_recordset($1::json)
         AS v(${rowTypes(STATE_COLUMNS)})
       WHERE e.id = v.id RETURNING e.id`,
    /** Saves that create a missing row ($1: JSON array of all columns and `queued_given`; $2, $3 as above). */
    upsertRows: `WITH v AS (
         SELECT * FROM json_to_recordset($1::json)
           AS v(${rowTypes(ALL_COLUMNS)}, queued_given boolean)),
       upd AS (
         UPDATE ${t} e SET ${upsertAssignments('v', 'v.queued_given', 'e')},
           claimed_by = ${batchOwner},
           lease_until = ${batchLease}
         FROM v WHERE e.id = v.id RETURNING e.id)
       INSERT INTO ${t} (${columnList(ALL_COLUMNS)}, claimed_by, lease_until)
       SELECT ${columnList(ALL_COLUMNS, 'v.', { trigger: "COALESCE(v.trigger, 'null')" })}, ${batchOwner}, ${batchLease}
       FROM v WHERE NOT EXISTS (SELECT 1 FROM upd WHERE upd.id = v.id)`,
    /** `updateStates` for one save: the state columns in order, then owner and lease seconds. */
    updateState: `UPDATE ${t} SET ${stateAssignments(one)},
         claimed_by = ${oneOwner},
         lease_until = ${oneLease}
       WHERE id = ${one('id')}`,
    /** `upsertRows` for one save: all columns in order, then queued_given, owner and lease seconds. */
    upsertExecution: `INSERT INTO ${t} AS e (${columnList(ALL_COLUMNS)}, claimed_by, lease_until)
       VALUES (${ALL_COLUMNS.map(all).join(', ')},
         ${upsertOwner}, ${upsertLease})
       ON CONFLICT (id) DO UPDATE SET ${upsertAssignments('excluded', `$${n + 1}`, 'e')},
         claimed_by = excluded.claimed_by, lease_until = excluded.lease_until`,
  };
}

/** The table queue's statements on the executions table `t` (postgres/table-queue.ts). */
export function queuePlans(t: string) {
  return {
    /** Running rows whose lease ran out (what a start takes over). */
    countExpired: `SELECT count(*)::int AS n FROM ${t} WHERE status = 'running' AND (lease_until IS NULL OR lease_until < now())`,
    /**
     * Claimed but never started, back to how they were ($1 ids, $2 statuses, $3 attempts; only
     * rows still held by $4).
     */
    handBack: `UPDATE ${t} e SET status = u.status, attempt = u.attempt, lease_until = NULL, claimed_by = NULL,
             started_at = CASE WHEN u.status = 'queued' THEN NULL ELSE e.started_at END
           FROM unnest($1::text[], $2::text[], $3::int[]) AS u(id, status, attempt)
           WHERE e.id = u.id AND e.claimed_by = $4 AND e.status = 'running'`,
    /**
     * Claims up to n rows of each integration ($1 names, $2 counts), oldest first, skipping rows
     * others lock; marks them running under the lease of $4 for $5 seconds. A resumed row becomes
     * attempt + 1, unless it reached $3 attempts (poison: left as it was for the dispatcher).
     *
     * Per-key concurrency ($6: each integration's `concurrency.limit`, 0 = none): a queued row
     * with a key is claimable only while fewer than `limit` rows of its key are running or waiting
     * or queued before it — only the head(s) of a key's line, in acceptance order. Safe between
     * replicas without a lock of its own: a claimer takes the heads of its snapshot, which it must
     * lock; a row another replica locked is skipped and the rows behind it are not heads in that
     * snapshot, and a head claimed and committed meanwhile fails the re-check of the lock. Both
     * counts stop at the limit and read executions_concurrency.
     */
    claim: `WITH caps AS (SELECT * FROM unnest($1::text[], $2::int[], $6::int[]) AS c(integration, n, key_limit)),
       picked AS (
         SELECT x.id, x.status AS was, x.attempt AS was_attempt, x.attempt >= $3 AS poison
         FROM caps CROSS JOIN LATERAL (
           SELECT q.id, q.status, q.attempt FROM ${t} q
           WHERE q.integration = caps.integration AND q.status IN ('queued', 'running')
             AND (q.lease_until IS NULL OR q.lease_until < now())
             AND (caps.key_limit = 0 OR q.concurrency_key IS NULL OR q.status = 'running'
               OR (SELECT count(*) FROM (
                     SELECT 1 FROM ${t} a
                     WHERE a.integration = q.integration AND a.concurrency_key = q.concurrency_key AND a.status IN ('running', 'waiting')
                     LIMIT caps.key_limit) held)
                 + (SELECT count(*) FROM (
                     SELECT 1 FROM ${t} b
                     WHERE b.integration = q.integration AND b.concurrency_key = q.concurrency_key AND b.status = 'queued'
                       AND (b.queued_at, b.id) < (q.queued_at, q.id)
                     LIMIT caps.key_limit) ahead) < caps.key_limit)
           ORDER BY q.queued_at, q.id LIMIT caps.n
           FOR UPDATE SKIP LOCKED) x)
       UPDATE ${t} e SET
         status = 'running',
         attempt = CASE WHEN p.was = 'running' AND NOT p.poison THEN e.attempt + 1 ELSE e.attempt END,
         started_at = CASE WHEN p.was = 'running' AND p.poison THEN e.started_at ELSE now() END,
         finished_at = NULL, duration_ms = NULL, error = NULL,
         claimed_by = $4, lease_until = ${leaseUntil('$5')}
       FROM picked p WHERE e.id = p.id
       RETURNING ${columnList(RECORD_COLUMNS, 'e.')}, p.was, p.was_attempt`,
    /** Renews the leases of $1 (ids) held by $2 for $3 seconds; returns those still held. */
    renew: `UPDATE ${t} SET lease_until = ${leaseUntil('$3')} WHERE id = ANY($1) AND claimed_by = $2 AND status = 'running' RETURNING id`,
    /** Ends the leases of $1 (ids) held by $2 now: another replica takes them over at once. */
    expire: `UPDATE ${t} SET lease_until = now() - interval '1 second' WHERE id = ANY($1) AND claimed_by = $2 AND status = 'running'`,
    /** Per integration: the cluster-wide backlog, and how many rows are claimable. */
    poll: `SELECT integration, count(*) FILTER (WHERE status = 'queued')::int AS queued,
         count(*) FILTER (WHERE lease_until IS NULL OR lease_until < now())::int AS claimable
       FROM ${t} WHERE status IN ('queued', 'running') GROUP BY integration`,
  };
}

/**
 * The waker's statement on schema `s` (quoted): the due waiting rows (plans.ts `dueWaiting`), each
 * locked by one waker (`SKIP LOCKED`: concurrent wakers on other replicas take other rows, and a
 * row is re-checked to be still waiting once locked), made queued with their callback requests
 * marked as having woken them, and a NOTIFY on the queue's channel naming their integrations
 * (delivered at commit), so every replica claims them at once. Parameters: now, now, now, limit,
 * limit, now, channel. Each row comes with its `due_at` (RETURNING keeps no order).
 */
export function wakePlans(s: string) {
  const t = `${s}.executions`;
  return {
    wakeDue: dollarPlaceholders(`WITH picked AS (${dueWaiting(t, `${s}.callbacks`, ' FOR UPDATE OF e SKIP LOCKED')}),
       consumed AS (
         UPDATE ${s}.callbacks c SET consumed_at = CAST(? AS timestamptz) FROM picked p
         WHERE c.execution_id = p.id AND c.received_at IS NOT NULL AND c.consumed_at IS NULL),
       woke AS (
         UPDATE ${t} e SET status = 'queued', wake_at = NULL FROM picked p WHERE e.id = p.id
         RETURNING ${columnList(RECORD_COLUMNS, 'e.')}, p.due_at),
       names AS (SELECT string_agg(DISTINCT integration, E'\\n') AS list FROM woke)
     SELECT woke.*, (SELECT pg_notify(?, CASE WHEN octet_length(list) < 7900 THEN list ELSE '' END) FROM names) AS notified FROM woke`),
  };
}

/** The lease locks' statements on the locks table `t` (postgres/lease-locks.ts): key $1, owner $2, lease $3 ms. */
export function leaseLockPlans(t: string) {
  return {
    /** Succeeds (one row) only when nobody holds the key or the holder's lease ran out. */
    acquire: `INSERT INTO ${t} (key, owner, lease_until) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until
         WHERE ${t}.lease_until < now()`,
    renew: `UPDATE ${t} SET lease_until = now() + $3 * interval '1 millisecond' WHERE key = $1 AND owner = $2`,
    release: `DELETE FROM ${t} WHERE key = $1 AND owner = $2`,
  };
}

/** A transaction-scoped advisory lock on key $1: held until the transaction ends. */
export const advisoryXactLock = 'SELECT pg_advisory_xact_lock(hashtext($1))';

/** Where unqualified table names resolve, for every connection of a store (`schema` quoted). */
export const setSearchPath = (schema: string) => `SET search_path TO ${schema}, public`;

/** Wake-ups of the table queue on `channel` (quoted). */
export const listen = (channel: string) => `LISTEN ${channel}`;
export const unlisten = (channel: string) => `UNLISTEN ${channel}`;
