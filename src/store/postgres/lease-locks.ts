/**
 * Cluster-wide locks as leases in the `locks` table: a row per held key with its owner and the
 * time its lease ends. Taking a lock is one INSERT … ON CONFLICT that succeeds only when nobody
 * holds the key or the holder's lease ran out; the holder renews the lease while it works, so a
 * slow holder keeps it and a dead one loses it after `leaseMs`.
 *
 * Unlike an advisory lock, no database client is held while the caller works (a poll waits on a
 * third party with this lock held): the pool stays free for everyone else.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { KeyedMutex } from '../keyed-mutex.js';
import { leaseLockPlans } from '../sql/postgres-plans.js';

export interface LeaseLockOptions {
  /** How long a lease lasts without renewal (default 30 s); renewed every third of it. */
  leaseMs?: number;
  /** How often a waiter tries again (default 100 ms). */
  retryMs?: number;
}

export class LeaseLocks {
  /** One process, one owner id: the in-process mutex keeps a process to one holder per key. */
  private readonly owner = randomUUID();
  private readonly local = new KeyedMutex();
  private readonly leaseMs: number;
  private readonly retryMs: number;
  private readonly sql: ReturnType<typeof leaseLockPlans>;

  constructor(
    private readonly pool: pg.Pool,
    /** The quoted, schema-qualified table name. */
    table: string,
    opts: LeaseLockOptions = {},
  ) {
    this.sql = leaseLockPlans(table);
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.retryMs = opts.retryMs ?? 100;
  }

  run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.local.run(
      key,
      async () => {
        await this.acquire(key, signal);
        const renew = setInterval(() => void this.renew(key).catch(() => undefined), Math.max(100, Math.floor(this.leaseMs / 3)));
        renew.unref();
        try {
          return await fn();
        } finally {
          clearInterval(renew);
          await this.pool.query(this.sql.release, [key, this.owner]).catch(() => undefined);
        }
      },
      signal,
    );
  }

  private async acquire(key: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const { rowCount } = await this.pool.query(this.sql.acquire, [key, this.owner, this.leaseMs]);
      if (rowCount === 1) return;
      // An abort ends the wait; the check at the top of the loop then throws its reason.
      await sleep(this.retryMs, undefined, { signal }).catch(() => undefined);
    }
  }

  private async renew(key: string): Promise<void> {
    await this.pool.query(this.sql.renew, [key, this.owner, this.leaseMs]);
  }
}
