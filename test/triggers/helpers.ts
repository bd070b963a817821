/** Helpers for the trigger tests: runtimes on a ManualClock, temp folders, gated and fake upstreams. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime, type RuntimeOptions } from '../../src/runtime/runtime.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { ManualClock } from '../../src/triggers/schedule/clock.js';

export { poll } from '../server/helpers.js';

export function tempDir(prefix = 'hcm-triggers-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function write(dir: string, file: string, text: string): string {
  const path = join(dir, file);
  writeFileSync(path, text.replace(/^\n/, ''));
  return path;
}

export interface TestRuntime {
  runtime: Runtime;
  store: Store;
  clock: ManualClock;
  /** Stops the runtime and closes its store (the data directory stays). */
  stop(): Promise<void>;
  /** Executions of an integration, oldest first, as full records. */
  executions(name: string): Promise<any[]>;
  /** Waits until fired ticks, polls and subscription calls are done. */
  settle(): Promise<void>;
}

/** A Runtime (no HTTP) over SQLite in `dataDir`, driven by a ManualClock starting at `start`. */
export async function startRuntime(dir: string, dataDir: string, start: string | Date, opts: Partial<RuntimeOptions> = {}): Promise<TestRuntime> {
  const store = opts.store ?? (await openStore({ dataDir, secret: 'trigger-tests' }));
  const clock = (opts.clock as ManualClock | undefined) ?? new ManualClock(start);
  // allowPrivateNetwork: the third-party fakes of these tests listen on loopback.
  const runtime = new Runtime({
    dir,
    store,
    publicUrl: 'http://runner.test',
    watch: false,
    retentionDays: 0,
    allowPrivateNetwork: true,
    ...opts,
    clock,
  });
  await runtime.start();
  const settle = async () => {
    await runtime.triggers.idle();
  };
  return {
    runtime,
    store,
    clock,
    settle,
    stop: async () => {
      await runtime.stop(2000);
      if (!opts.store) await store.close();
    },
    executions: async (name) => {
      const list = await store.listExecutions({ integration: name, limit: 500 });
      const full = await Promise.all(list.map((e) => store.getExecution(e.id)));
      return full.sort((a, b) => (a!.queuedAt! < b!.queuedAt! ? -1 : a!.queuedAt! > b!.queuedAt! ? 1 : 0));
    },
  };
}

/** Advances the clock and waits for what the ticks started (claims, submits, polls). */
export async function advance(t: TestRuntime, ms: number): Promise<void> {
  t.clock.advance(ms);
  await t.settle();
}

export interface Gate {
  url: string;
  /** Requests that arrived (answered or waiting). */
  hits: number;
  waiting: number;
  /** Answers the oldest waiting request (or every one). */
  release(all?: boolean): void;
  close(): Promise<void>;
}

/** An upstream whose requests wait until the test releases them: a "slow step" without timing. */
export async function gate(): Promise<Gate> {
  const waiting: ServerResponse[] = [];
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    waiting.push(res);
  });
  await listen(server);
  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gate`,
    get hits() {
      return hits;
    },
    get waiting() {
      return waiting.length;
    },
    release(all = false) {
      if (all) while (waiting.length) answer(waiting.shift()!);
      else if (waiting.length) answer(waiting.shift()!);
    },
    close: () => close(server, () => waiting.splice(0).forEach(answer)),
  };
}

export interface ThirdPartyRequest {
  method: string;
  path: string;
  body: any;
}

export interface ThirdParty {
  url: string;
  requests: ThirdPartyRequest[];
  /** Hooks currently registered: id → body. */
  hooks: Map<string, any>;
  /** Makes the next `n` requests fail with 503. */
  failNext(n: number): void;
  close(): Promise<void>;
}

/** A third-party API with webhook subscriptions: POST /hooks → 201 {id}, DELETE /hooks/{id} → 204. */
export async function thirdParty(): Promise<ThirdParty> {
  const requests: ThirdPartyRequest[] = [];
  const hooks = new Map<string, any>();
  let seq = 0;
  let failing = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = text ? JSON.parse(text) : undefined;
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path, body });
    const json = (status: number, value?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(value === undefined ? '' : JSON.stringify(value));
    };
    if (failing > 0) {
      failing--;
      return json(503, { error: 'try later' });
    }
    if (req.method === 'POST' && path === '/hooks') {
      const id = `hook-${++seq}`;
      hooks.set(id, body);
      return json(201, { id, ...body });
    }
    const m = /^\/hooks\/([^/]+)$/.exec(path);
    if (req.method === 'DELETE' && m) {
      if (!hooks.delete(m[1]!)) return json(404, { error: 'no such hook' });
      res.writeHead(204);
      return res.end();
    }
    json(404, { error: 'not found' });
  });
  await listen(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    hooks,
    failNext: (n) => (failing = n),
    close: () => close(server),
  };
}

function listen(server: Server): Promise<void> {
  return new Promise((r) => server.listen(0, '127.0.0.1', r));
}

function close(server: Server, before?: () => void): Promise<void> {
  before?.();
  return new Promise((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await listen(s);
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
