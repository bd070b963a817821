/**
 * Checkpoints SQLite's WAL from a worker thread, so the event loop never does.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses 1,000 WAL pages: it copies
 * the pages into the database file and fsyncs both files — milliseconds during which a
 * single-threaded server answers nobody. Measured here on a stream of 1 KB inserts, 30 per
 * commit: 34 µs of CPU but 71–101 µs of wall time per row with automatic checkpoints, 22–36 µs
 * without. So the store's connection turns them off (`wal_autocheckpoint = 0`) and this thread,
 * with its own connection to the same file, runs a PASSIVE checkpoint every `intervalMs`: it never
 * waits for the writer, and the writer never waits for it (WAL mode lets one checkpointer work
 * beside one writer). The writer restarts the WAL from its beginning once a checkpoint has caught
 * up, as with automatic checkpoints, so the WAL stays small under any steady load.
 *
 * Should the writer outrun the checkpoints (a WAL over `maxWalBytes`), the thread asks for a
 * TRUNCATE checkpoint, which waits for the writer between two of its transactions.
 *
 * The worker is evaluated from source text (`eval: true`), so it runs the same from the compiled
 * package, under tsx and under the test runner, without a loader.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CheckpointerOptions {
  /** Between two PASSIVE checkpoints (default 100 ms). */
  intervalMs?: number;
  /** WAL size above which the checkpoint waits for the writer and truncates the WAL (default 64 MiB). */
  maxWalBytes?: number;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
let stopped = false;
const walSize = () => { try { return statSync(workerData.file + '-wal').size; } catch { return 0; } };
const tick = () => {
  if (stopped) return;
  try {
    const mode = walSize() > workerData.maxWalBytes ? 'TRUNCATE' : 'PASSIVE';
    const [r] = db.pragma('wal_checkpoint(' + mode + ')');
    if (r && r.log > 0) parentPort.postMessage({ checkpointed: r.checkpointed, log: r.log, mode });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
let timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'now') { clearTimeout(timer); tick(); return; }
  if (m === 'stop') { stopped = true; clearTimeout(timer); db.close(); parentPort.close(); }
});
`;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  /** Checkpoints that moved pages, and the last error, for diagnostics and tests. */
  readonly stats = { checkpoints: 0, pages: 0, truncates: 0, lastError: undefined as string | undefined };

  constructor(file: string, opts: CheckpointerOptions = {}) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // Not the parent's flags (e.g. a TypeScript loader): the source above is plain CommonJS.
      execArgv: [],
      workerData: { file, driver, intervalMs: opts.intervalMs ?? 100, maxWalBytes: opts.maxWalBytes ?? 64 * 1024 * 1024 },
    });
    // A background helper: it must not keep the process alive, nor take it down.
    this.worker.unref();
    this.worker.on('message', (m: { checkpointed?: number; mode?: string; error?: string }) => {
      if (m.error) this.stats.lastError = m.error;
      else {
        this.stats.checkpoints++;
        this.stats.pages += m.checkpointed ?? 0;
        if (m.mode === 'TRUNCATE') this.stats.truncates++;
      }
    });
    this.worker.on('error', (err) => (this.stats.lastError = err.message));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** Checkpoints at once instead of at the next interval (tests, diagnostics). */
  now(): void {
    this.worker.postMessage('now');
  }

  /** Closes the thread's connection (before the store's own, which then removes the WAL). */
  async stop(): Promise<void> {
    this.worker.postMessage('stop');
    const timeout = setTimeout(() => void this.worker.terminate(), 5000);
    await this.exited;
    clearTimeout(timeout);
  }
}
