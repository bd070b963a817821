/** Write-path counters of a store, for tests and metrics. */
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
