/**
 * The runner under test: `startServer` in its own process, configured by the orchestrator
 * (bench/run.ts). Answers calls for the store's execution timings (queuedAt/finishedAt of the
 * records), schedule trigger data, memory, and stops gracefully on `stop`.
 */
import type { RunningServer, ServerOptions } from '../../src/server/index.js';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { childConfig, serveParent } from '../lib/proc.js';
import { product } from '../lib/product.js';

const { startServer } = await product<typeof import('../../src/server/index.js')>('server/index.js');

// Statements this process sends to PostgreSQL (every pg client: the store's pool, LISTEN, locks).
let pgQueries = 0;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  pgQueries++;
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof clientQuery;

/**
 * CPU time of this process's main thread, µs: utime + stime of /proc/self/task/<pid>/stat, in
 * clock ticks of 10 ms (USER_HZ is 100 on Linux). null where /proc is not there.
 */
function mainThreadCpuUs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which is in parentheses and may hold spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

export interface RunnerConfig {
  dir: string;
  dataDir?: string;
  databaseUrl?: string;
  limits?: ServerOptions['limits'];
  env?: Record<string, string>;
  logLevel?: string;
}

const cfg = childConfig<RunnerConfig>();
const t0 = performance.now();
const server: RunningServer = await startServer({
  dir: cfg.dir,
  dataDir: cfg.dataDir,
  databaseUrl: cfg.databaseUrl,
  port: 0,
  adminToken: 'bench-admin-token',
  logLevel: cfg.logLevel ?? 'info',
  retentionDays: 0,
  shutdownGraceMs: 5000,
  limits: cfg.limits,
  env: { ...process.env, ...cfg.env },
});
const startMs = performance.now() - t0;
const webhooks: Record<string, { live: string; test: string }> = {};
for (const e of server.integrations) {
  const u = server.runtime.webhookUrls(e.name);
  if (u) webhooks[e.name] = u;
}

type Row = {
  queued_at: string | Date;
  started_at: string | Date | null;
  finished_at: string | Date | null;
  status: string;
  trigger?: string | object;
  record?: string | object;
};
const ms = (v: string | Date | null) => (v === null || v === undefined ? null : v instanceof Date ? v.getTime() : Date.parse(v));

/** Raw rows of one integration, straight from the store's table (SQLite or PostgreSQL). */
async function rows(integration: string, withTrigger = false, withRecord = false): Promise<Row[]> {
  const store = server.runtime.store as unknown as {
    kind: string;
    db?: { prepare(sql: string): { all(...a: unknown[]): unknown[] } };
    pool?: { query(sql: string, params: unknown[]): Promise<{ rows: unknown[] }> };
    schema?: string;
  };
  const cols = `queued_at, started_at, finished_at, status${withTrigger ? ', trigger' : ''}${withRecord ? ', record' : ''}`;
  if (store.kind === 'sqlite' && store.db) return store.db.prepare(`SELECT ${cols} FROM executions WHERE integration = ?`).all(integration) as Row[];
  if (store.pool) {
    const r = await store.pool.query(`SELECT ${cols} FROM "${store.schema ?? 'public'}".executions WHERE integration = $1`, [integration]);
    return r.rows as Row[];
  }
  throw new Error(`cannot read timings from a ${store.kind} store`);
}

serveParent(
  {
    url: server.url,
    adminToken: server.adminToken,
    webhooks,
    startMs,
    integrations: server.integrations.length,
    storeKind: server.runtime.store.kind,
  },
  {
    /** [queuedAt, startedAt, finishedAt] in epoch ms, plus status counts. */
    timings: async ({ integration }: { integration: string }) => {
      const list = await rows(integration);
      const counts: Record<string, number> = {};
      for (const r of list) counts[r.status] = (counts[r.status] ?? 0) + 1;
      return { counts, rows: list.map((r) => [ms(r.queued_at), ms(r.started_at), ms(r.finished_at)]) };
    },
    /**
     * The `waits` scenario: per execution that finished, [wakeAt, wokeAt, finishedAt] in epoch ms
     * — the wait step's planned wake-up, when it woke, when the execution ended — plus status counts.
     */
    waits: async ({ integration, step }: { integration: string; step: string }) => {
      const list = await rows(integration, false, true);
      const counts: Record<string, number> = {};
      const out: Array<[number, number, number]> = [];
      for (const r of list) {
        counts[r.status] = (counts[r.status] ?? 0) + 1;
        if (r.status !== 'succeeded') continue;
        const rec = (typeof r.record === 'string' ? JSON.parse(r.record) : r.record) as {
          steps: Array<{ id: string; wakeAt?: string; results?: { wokeAt?: string } }>;
        };
        const s = rec.steps.find((x) => x.id === step);
        if (s?.wakeAt && s.results?.wokeAt) out.push([Date.parse(s.wakeAt), Date.parse(s.results.wokeAt), ms(r.finished_at)!]);
      }
      return { counts, rows: out };
    },
    triggers: async ({ integration }: { integration: string }) =>
      (await rows(integration, true)).map((r) => ({ status: r.status, trigger: typeof r.trigger === 'string' ? JSON.parse(r.trigger) : r.trigger })),
    /** Write-path counters of the store (commits, enqueue calls), when it has them. */
    stats: () => (server.runtime.store as unknown as { stats?: Record<string, number> }).stats ?? {},
    /** Statements sent to PostgreSQL so far (0 on SQLite). */
    pgQueries: () => pgQueries,
    /** CPU time used by this process so far, µs (user + system). */
    cpu: () => {
      const u = process.cpuUsage();
      return u.user + u.system;
    },
    /** CPU time of the main thread (the event loop) alone, µs; null where /proc is not there. */
    mainThreadCpu: () => mainThreadCpuUs(),
    memory: () => {
      globalThis.gc?.();
      return process.memoryUsage();
    },
    stop: async () => {
      await server.close(5000);
      process.exit(0);
    },
  },
);
