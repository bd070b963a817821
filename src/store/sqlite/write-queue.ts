/**
 * Group commit for SQLite, on a writer thread (writer-thread.cjs).
 *
 * better-sqlite3 is synchronous: on the event loop, every INSERT, every COMMIT with its fsync
 * (synchronous=FULL) and every WAL checkpoint (page copies and two more fsyncs) stops the whole
 * process — about a third of the time of a webhook intake went there. So the store's writes run
 * on a worker thread with its own connection to the file; the event loop only sends the
 * statements and their parameters and gets the results back. Reads stay on the event loop's own
 * connection (WAL lets them run beside the writer, on committed state).
 *
 * Writes queued while no batch is in flight go out together on `setImmediate` (or at once at
 * `maxBatch`); while one batch is being written and synced, everything queued meanwhile waits and
 * goes out as the next batch — so the slower the disk, the larger the groups, one fsync each.
 * Each caller's promise settles only after the COMMIT that holds its rows, i.e. after the WAL
 * fsync: nothing is acknowledged before it is on disk.
 *
 * Each write runs in its own SAVEPOINT, so a write that fails by itself (a constraint, bad input)
 * rejects only its caller; a failure of the transaction as a whole (the COMMIT, or an error after
 * which SQLite rolled the whole transaction back, such as SQLITE_FULL) rejects every caller of
 * the batch, and nothing of the batch is written. If the thread dies, every waiting write and
 * every later one is rejected with that error: the store is unavailable, never silently lost.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** One statement of a write; `params` may be one object bound by name (`@id`). */
export interface WriteStep {
  sql: string;
  params?: unknown[];
}

export interface WriteStepResult {
  rows: Array<Record<string, unknown>>;
  changes: number;
}

interface Op {
  id: number;
  kind: string;
  steps: WriteStep[];
  resolve: (v: WriteStepResult[]) => void;
  reject: (e: unknown) => void;
}

export interface WriteQueueHooks {
  /** Called after each successful commit with the kinds of writes it held. */
  committed(kinds: ReadonlySet<string>): void;
  /** Maps an error of a write or of the whole batch (e.g. disk full) to the error callers see. */
  mapError(err: unknown): Error;
}

export interface WriteQueueOptions {
  /** busy_timeout of the writer's connection, in ms. */
  busyTimeoutMs: number;
  /** Writes per batch at most (default 500). */
  maxBatch?: number;
}

type WireError = { message: string; code?: string };
type Done = { type: 'done'; results: Array<{ id: number; value?: WriteStepResult[]; error?: WireError }>; batchError?: WireError };

const toError = (e: WireError): Error => Object.assign(new Error(e.message), e.code ? { code: e.code } : {});

export class WriteQueue {
  private readonly worker: Worker;
  private pending: Op[] = [];
  private inFlight: Op[] | undefined;
  private scheduled = false;
  private closed = false;
  /** Set when the thread failed: every write is rejected with it. */
  private dead: Error | undefined;
  private nextId = 1;
  private readonly pragmaWaiters: Array<{ resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  private readonly exited: Promise<void>;
  private readonly maxBatch: number;

  private constructor(
    file: string,
    private readonly hooks: WriteQueueHooks,
    opts: WriteQueueOptions,
  ) {
    this.maxBatch = opts.maxBatch ?? 500;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(new URL('./writer-thread.cjs', import.meta.url), {
      // Not the parent's flags (e.g. a TypeScript loader): the thread is plain CommonJS.
      execArgv: [],
      workerData: { file, driver, busyTimeoutMs: opts.busyTimeoutMs },
    });
    this.worker.on('message', (m: Done | { type: 'pragma'; value?: unknown; error?: WireError } | { type: 'ready' | 'failed' }) => {
      if (m.type === 'done') this.settle(m);
      else if (m.type === 'pragma') {
        const w = this.pragmaWaiters.shift();
        this.unrefWhenIdle();
        if (m.error) w?.reject(toError(m.error));
        else w?.resolve(m.value);
      }
    });
    this.worker.on('error', (err) => this.die(err));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        if (!this.closed) this.die(new Error(`the SQLite writer thread exited (code ${code})`));
        resolve();
      }),
    );
  }

  /** Starts the writer thread; resolves once its connection is open. */
  static async start(file: string, hooks: WriteQueueHooks, opts: WriteQueueOptions): Promise<WriteQueue> {
    const q = new WriteQueue(file, hooks, opts);
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: { type: string; error?: WireError }) => {
        if (m.type === 'ready') done(resolve);
        else if (m.type === 'failed') done(() => reject(toError(m.error!)));
      };
      const onError = (err: Error) => done(() => reject(err));
      const done = (fn: () => void) => {
        q.worker.off('message', onMessage);
        q.worker.off('error', onError);
        fn();
      };
      q.worker.on('message', onMessage);
      q.worker.on('error', onError);
    });
    q.worker.unref(); // idle: the thread alone must not keep the process running
    return q;
  }

  run(kind: string, steps: WriteStep[]): Promise<WriteStepResult[]> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (this.dead) return Promise.reject(this.dead);
    return new Promise<WriteStepResult[]>((resolve, reject) => {
      this.pending.push({ id: this.nextId++, kind, steps, resolve, reject });
      if (!this.inFlight && this.pending.length >= this.maxBatch) this.send();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (!this.inFlight) this.send();
        });
      }
    });
  }

  /** Runs a pragma on the writer's connection (diagnostics, tests: e.g. `max_page_count`). */
  pragma(pragma: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.pragmaWaiters.push({ resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ type: 'pragma', pragma });
    });
  }

  /** Sends what is queued as one batch (one transaction). */
  private send(): void {
    if (this.pending.length === 0 || this.dead) return;
    const ops = this.pending.length > this.maxBatch ? this.pending.splice(0, this.maxBatch) : this.pending;
    if (ops === this.pending) this.pending = [];
    this.inFlight = ops;
    this.worker.ref(); // a write in flight keeps the process alive until it is answered
    this.worker.postMessage({ type: 'batch', ops: ops.map((op) => ({ id: op.id, steps: op.steps })) });
  }

  private settle(done: Done): void {
    const ops = this.inFlight ?? [];
    this.inFlight = undefined;
    if (done.batchError) {
      const err = this.hooks.mapError(toError(done.batchError));
      for (const op of ops) op.reject(err);
    } else {
      const byId = new Map(done.results.map((r) => [r.id, r]));
      const kinds = new Set<string>();
      for (const op of ops) if (!byId.get(op.id)?.error) kinds.add(op.kind);
      this.hooks.committed(kinds);
      for (const op of ops) {
        const r = byId.get(op.id);
        if (r?.error) op.reject(this.hooks.mapError(toError(r.error)));
        else op.resolve(r?.value ?? []);
      }
    }
    this.send();
    if (!this.inFlight && this.pending.length === 0) {
      this.unrefWhenIdle();
      for (const w of this.drainWaiters.splice(0)) w();
    }
  }

  private readonly drainWaiters: Array<() => void> = [];

  /** Idle, the thread alone must not keep the process running (a write in flight does). */
  private unrefWhenIdle(): void {
    if (!this.inFlight && this.pragmaWaiters.length === 0) this.worker.unref();
  }

  /** Resolves when everything queued so far is written (or failed). */
  drained(): Promise<void> {
    if (!this.inFlight && this.pending.length === 0) return Promise.resolve();
    if (!this.inFlight && !this.scheduled) this.send();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = this.hooks.mapError(Object.assign(err, { code: (err as Error & { code?: string }).code ?? 'SQLITE_IOERR' }));
    const ops = [...(this.inFlight ?? []), ...this.pending];
    this.inFlight = undefined;
    this.pending = [];
    for (const op of ops) op.reject(this.dead);
    for (const w of this.pragmaWaiters.splice(0)) w.reject(this.dead);
    for (const w of this.drainWaiters.splice(0)) w();
  }

  /** Writes what is queued, then closes the thread's connection; later writes are refused. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.drained();
    this.closed = true;
    this.worker.postMessage({ type: 'close' });
    const timeout = setTimeout(() => void this.worker.terminate(), 5000);
    await this.exited;
    clearTimeout(timeout);
  }
}
