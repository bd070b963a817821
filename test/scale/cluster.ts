/**
 * A cluster of real `hcm-runner serve` child processes sharing one PostgreSQL schema (a fresh one
 * per test file), each on its own port, for the scale-out tests. Logs are collected per replica
 * (JSON lines), so tests can see which replica ran which execution.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { ADMIN, poll, root } from '../server/helpers.js';
import { freePort } from '../helpers/net.js';
export { freePort };

export { ADMIN, poll, root };
export const scaleFixtures = join(root, 'test', 'fixtures', 'scale');
export const SECRET = 'scale-test-secret';

export function databaseUrl(): string {
  const url = process.env.HCM_TEST_DATABASE_URL;
  if (!url) throw new Error('HCM_TEST_DATABASE_URL is not set: PostgreSQL is needed (scripts/ensure-postgres.sh)');
  return url;
}

export interface Replica {
  id: string;
  base: string;
  child: ChildProcess;
  output(): string;
  /** Execution ids this replica logged as finished. */
  finished(): Set<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface Cluster {
  schema: string;
  replicas: Replica[];
  /** The public URL all replicas print (the "load balancer"): replica 0's address. */
  publicUrl: string;
  api<T = any>(replica: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** A webhook URL (as printed with the public URL) re-pointed at one replica. */
  at(url: string, replica: number): string;
  /** Waits until every id is finished (from any live replica) and returns the records. */
  waitFinished(ids: string[], timeoutMs?: number): Promise<any[]>;
  stop(): Promise<void>;
}

export async function startCluster(opts: {
  dir: string;
  replicas: number;
  env?: Record<string, string> | ((i: number) => Record<string, string>);
  args?: string[];
}): Promise<Cluster> {
  const schema = `scale_${randomBytes(5).toString('hex')}`;
  const url = `${databaseUrl()}?schema=${schema}`;
  const ports = await Promise.all(Array.from({ length: opts.replicas }, () => freePort()));
  const publicUrl = `http://127.0.0.1:${ports[0]}`;
  const replicas: Replica[] = ports.map((port, i) => {
    const id = `r${i}`;
    let out = '';
    const done = new Set<string>();
    const extra = typeof opts.env === 'function' ? opts.env(i) : opts.env;
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'hcm-runner.js'), 'serve', '--dir', opts.dir, '--port', String(port), '--database-url', url, ...(opts.args ?? [])],
      {
        cwd: root,
        env: {
          ...process.env,
          HCM_RUNNER_ADMIN_TOKEN: ADMIN,
          HCM_RUNNER_SECRET: SECRET,
          HCM_RUNNER_PUBLIC_URL: publicUrl,
          HCM_RUNNER_REPLICA_ID: id,
          HCM_RUNNER_LOG_LEVEL: 'info',
          HCM_RUNNER_LEASE_SECONDS: '3',
          HCM_RUNNER_SHUTDOWN_GRACE_MS: '1000',
          HCM_RUNNER_ALLOW_PRIVATE_NETWORK: '1', // core.http steps call fakes on loopback
          ...extra,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        try {
          const entry = JSON.parse(line) as { msg?: string; executionId?: string };
          if (entry.executionId && /^execution (succeeded|failed)$/.test(entry.msg ?? '')) done.add(entry.executionId);
        } catch {
          /* not a log line */
        }
      }
    });
    child.stderr!.on('data', (d) => (out += d));
    return {
      id,
      base: `http://127.0.0.1:${port}`,
      child,
      output: () => out,
      finished: () => done,
      kill: async (signal = 'SIGKILL') => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill(signal);
        await exited;
      },
    };
  });
  const alive = (r: Replica) => r.child.exitCode === null && r.child.signalCode === null;

  const cluster: Cluster = {
    schema,
    replicas,
    publicUrl,
    api: async (i, method, path, body) => {
      const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${replicas[i]!.base}/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    at: (u, i) => replicas[i]!.base + u.slice(publicUrl.length),
    waitFinished: async (ids, timeoutMs = 30_000) => {
      const records = new Map<string, any>();
      return poll(
        async () => {
          const i = replicas.findIndex(alive);
          for (const id of ids) {
            if (records.has(id)) continue;
            const r = await cluster.api(i, 'GET', `/executions/${id}`);
            if (r.status === 200 && (r.body.status === 'succeeded' || r.body.status === 'failed')) records.set(id, r.body);
            else return undefined;
          }
          return ids.map((id) => records.get(id));
        },
        timeoutMs,
        200,
      );
    },
    stop: async () => {
      await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
      await dropSchemas(schema);
    },
  };
  try {
    await Promise.all(
      replicas.map((r) =>
        poll(
          async () => {
            if (!alive(r)) throw new Error(`replica ${r.id} exited`);
            const res = await fetch(`${r.base}/healthz`).catch(() => undefined);
            return res?.status === 200 ? true : undefined;
          },
          45_000,
          100,
        ).catch((err) => {
          throw new Error(`replica ${r.id} did not become healthy: ${(err as Error).message}\n--- output ---\n${r.output()}`);
        }),
      ),
    );
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** Drops the store's schema and the pg-boss one next to it. */
export async function dropSchemas(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.query(`DROP SCHEMA IF EXISTS "${schema}_boss" CASCADE`);
  } catch {
    /* best effort */
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
