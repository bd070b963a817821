/** Shared helpers for the server tests: real servers on loopback, a slow fake upstream, polling. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/index.js';

export const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..', '..');
export const fixtures = join(root, 'test', 'fixtures', 'server');
export const ADMIN = 'test-admin-token';
export const SIGNING_SECRET = 'whsec-test-1234';

export function tempDir(prefix = 'hcm-server-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface SlowUpstream {
  url: string;
  /** Requests seen so far. */
  hits: number;
  close(): Promise<void>;
}

/** A local HTTP server that answers `{ok: true}` after `delayMs` (a stand-in for a slow API). */
export async function slowUpstream(delayMs: number): Promise<SlowUpstream> {
  const state = { hits: 0 };
  const server: Server = createServer((req, res) => {
    state.hits++;
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, path: req.url }));
    }, delayMs);
    res.on('close', () => clearTimeout(t));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
  return {
    url,
    get hits() {
      return state.hits;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface TestServer extends RunningServer {
  data: { path: string; remove(): void };
  api<T = any>(method: string, path: string, body?: unknown, token?: string | null): Promise<{ status: number; body: T; headers: Headers }>;
  urls(name: string): { live: string; test: string };
  waitForExecution(id: string, statuses?: string[]): Promise<any>;
  stop(): Promise<void>;
}

export async function startTestServer(opts: Partial<ServerOptions> & { slowUrl?: string } = {}): Promise<TestServer> {
  const data = tempDir();
  const server = await startServer({
    dir: join(fixtures, 'main'),
    port: 0,
    dataDir: data.path,
    adminToken: ADMIN,
    logLevel: 'silent',
    retentionDays: 0,
    shutdownGraceMs: 2000,
    // core.http steps call fakes on loopback (tests of the outbound policy pass false).
    allowPrivateNetwork: true,
    ...opts,
    env: { ...process.env, SLOW_URL: opts.slowUrl ?? 'http://127.0.0.1:9/unused', TEST_SIGNING_SECRET: SIGNING_SECRET, ...opts.env },
  });
  const api: TestServer['api'] = async (method, path, body, token = ADMIN) => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.adminUrl}/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const urls = (name: string) => {
    const u = server.runtime.webhookUrls(name);
    if (!u) throw new Error(`no webhook URLs for ${name}`);
    return u;
  };
  const waitForExecution = async (id: string, statuses = ['succeeded', 'failed']) =>
    poll(async () => {
      const r = await api('GET', `/executions/${id}`);
      return r.status === 200 && statuses.includes(r.body.status) ? r.body : undefined;
    });
  return {
    ...server,
    data,
    api,
    urls,
    waitForExecution,
    stop: async () => {
      await server.close(500);
      data.remove();
    },
  };
}

/** Polls `fn` until it returns something other than undefined (or throws after `timeoutMs`). */
export async function poll<T>(fn: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const serveChildren: ChildProcess[] = [];

/**
 * A real `hcm-runner serve` child process (for SIGKILL tests), its stdout and stderr collected.
 * Loopback fakes are reachable (HCM_RUNNER_ALLOW_PRIVATE_NETWORK); `env` adds or overrides.
 */
export function spawnServe(args: string[], env: Record<string, string> = {}): { child: ChildProcess; output: () => string } {
  let out = '';
  const child = spawn(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'serve', ...args], {
    cwd: root,
    env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN, HCM_RUNNER_LOG_LEVEL: 'warn', HCM_RUNNER_ALLOW_PRIVATE_NETWORK: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  serveChildren.push(child);
  return { child, output: () => out };
}

/** SIGKILLs every spawnServe() child still alive (call in afterAll). */
export function killServeChildren(): void {
  for (const c of serveChildren.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/** A `serve` child's admin API (bearer ADMIN): the JSON of a 200 answer, else an error naming the call. */
export async function childApi(base: string, method: string, path: string): Promise<any> {
  const res = await fetch(`${base}/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status}`);
  return res.json();
}

/** Waits until a `serve` child answers /healthz (30 s); the error carries its output. */
export async function untilHealthy(base: string, output: () => string): Promise<void> {
  await poll(
    async () => {
      const res = await fetch(`${base}/healthz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    30_000,
    100,
  ).catch((err) => {
    throw new Error(`${(err as Error).message}\n--- server output ---\n${output()}`);
  });
}
