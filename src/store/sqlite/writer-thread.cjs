// @ts-check
/**
 * The SQLite writer thread: every write of the store runs here, on its own connection, so the
 * statements, the COMMIT with its fsync (synchronous=FULL) and the WAL checkpoints never stop the
 * event loop that serves requests (write-queue.ts explains the protocol and why).
 *
 * Plain CommonJS on purpose: it runs as it is from src/ (tests, tsx) and from dist/ (tsc copies
 * it), in a worker thread, without a TypeScript loader.
 *
 * One message in: `{type: 'batch', ops: [{id, steps}]}` — run as ONE transaction; each op inside
 * its own SAVEPOINT, so an op that fails by itself (a constraint) fails alone, while a failure of
 * the transaction as a whole (the COMMIT, or an error after which SQLite rolled everything back,
 * such as SQLITE_FULL) fails the whole batch and writes nothing. One message out per batch:
 * `{type: 'done', results: [{id, value} | {id, error}], batchError?}`.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);

/** @param {unknown} err */
const plainError = (err) => {
  const e = /** @type {{message?: string, code?: string}} */ (err);
  return { message: e && e.message ? e.message : String(err), code: e && e.code };
};

/** @type {import('better-sqlite3').Database} */
let db;
try {
  db = new Database(workerData.file);
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${workerData.busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
} catch (err) {
  parentPort?.postMessage({ type: 'failed', error: plainError(err) });
  throw err;
}

/** Prepared statements by SQL text: preparing costs more than running. */
const statements = new Map();
/** @param {string} sql */
const prepare = (sql) => {
  let stmt = statements.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    // Statements built per call (lists, seen keys) are not worth keeping.
    if (statements.size < 200) statements.set(sql, stmt);
  }
  return stmt;
};
const tx = {
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  rollback: db.prepare('ROLLBACK'),
  savepoint: db.prepare('SAVEPOINT w'),
  release: db.prepare('RELEASE w'),
  rollbackTo: db.prepare('ROLLBACK TO w'),
};

/**
 * Runs one op's steps; a reading statement (SELECT, RETURNING) answers its rows.
 * @param {Array<{sql: string, params?: unknown[]}>} steps
 */
function runSteps(steps) {
  const out = [];
  for (const step of steps) {
    const stmt = prepare(step.sql);
    const params = step.params ?? [];
    if (stmt.reader) {
      const rows = stmt.all(...params);
      out.push({ rows, changes: rows.length });
    } else out.push({ rows: [], changes: stmt.run(...params).changes });
  }
  return out;
}

/** @param {Array<{id: number, steps: any[]}>} ops */
function runBatch(ops) {
  /** @type {Array<{id: number, value?: unknown, error?: unknown}>} */
  const results = [];
  try {
    tx.begin.run();
  } catch (err) {
    return { results, batchError: plainError(err) };
  }
  for (const op of ops) {
    tx.savepoint.run();
    try {
      results.push({ id: op.id, value: runSteps(op.steps) });
      tx.release.run();
    } catch (err) {
      if (!db.inTransaction) return { results: [], batchError: plainError(err) }; // SQLite rolled back everything
      results.push({ id: op.id, error: plainError(err) });
      try {
        tx.rollbackTo.run();
        tx.release.run();
      } catch (err2) {
        rollback();
        return { results: [], batchError: plainError(err2) };
      }
    }
  }
  try {
    tx.commit.run();
  } catch (err) {
    rollback();
    return { results: [], batchError: plainError(err) };
  }
  return { results };
}

function rollback() {
  if (!db.inTransaction) return;
  try {
    tx.rollback.run();
  } catch {
    /* already rolled back */
  }
}

parentPort?.on('message', (msg) => {
  if (msg.type === 'batch') parentPort?.postMessage({ type: 'done', ...runBatch(msg.ops) });
  else if (msg.type === 'pragma') {
    try {
      parentPort?.postMessage({ type: 'pragma', value: db.pragma(msg.pragma, { simple: true }) });
    } catch (err) {
      parentPort?.postMessage({ type: 'pragma', error: plainError(err) });
    }
  } else if (msg.type === 'close') {
    db.close();
    parentPort?.close();
  }
});
parentPort?.postMessage({ type: 'ready' });
