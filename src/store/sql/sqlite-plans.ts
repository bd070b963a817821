/**
 * SQLite's own statements: the group-committed hot paths of sqlite/sqlite-store.ts (enqueue and
 * saves), run inside the write queue's transaction with named parameters (`@field`, the fields of
 * `ExecutionColumns`), prepared once per connection.
 */
import { ALL_COLUMNS, columnList, type ExecutionColumn, fieldOf, QUEUED_COLUMNS } from './execution-columns.js';
import { stateAssignments, upsertAssignments } from './plans.js';

const named = (c: ExecutionColumn) => `@${fieldOf(c)}`;

/** A new execution, `queued`. */
export const insertQueued = `INSERT INTO executions (${columnList(QUEUED_COLUMNS)})
       VALUES (${QUEUED_COLUMNS.map((c) => (c === 'status' ? "'queued'" : named(c))).join(', ')})`;

/** A save of an existing row (`stored`): what a run changes, without the trigger (and queued_at) again. */
export const updateState = `UPDATE executions SET ${stateAssignments(named)} WHERE id = @id`;

/** A save that creates the row when there is none; queued_at is kept unless the record names one (`@queuedAtGiven`). */
export const upsertExecution = `INSERT INTO executions (${columnList(ALL_COLUMNS)})
           VALUES (${ALL_COLUMNS.map(named).join(', ')})
           ON CONFLICT (id) DO UPDATE SET ${upsertAssignments('excluded', '@queuedAtGiven', 'executions')}`;
