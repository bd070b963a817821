/**
 * Real parts for the dispatcher's tests: a SQLite store in a temp folder (or PostgreSQL in a fresh
 * schema), a registry loaded from
 * YAML written to a temp folder, and a gate — a loopback HTTP server whose `/hold/<name>` requests
 * wait until the test releases them, so a test decides when each run's step ends and can count
 * how many run at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { newExecutionId } from '../../../src/common/ids.js';
import { IntegrationRegistry } from '../../../src/runtime/registry.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewExecution, Store } from '../../../src/store/types.js';

export interface TempStore {
  store: Store;
  close(): Promise<void>;
}

/** A SQLite store in a fresh temp folder; `close` closes it and removes the folder. */
export async function tempStore(dataDir = mkdtempSync(join(tmpdir(), 'hcm-dispatch-data-'))): Promise<TempStore> {
  const store = await SqliteStore.open(dataDir, { tokenKey: randomBytes(32) });
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL store in a fresh schema of the local test database; `close` drops the schema. */
export async function tempPgStore(): Promise<TempStore> {
  const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `dispatch_${randomBytes(5).toString('hex')}`;
  const store = await PostgresStore.open({ databaseUrl: url, schema, tokenKey: randomBytes(32) });
  return {
    store,
    close: async () => {
      await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await store.close();
    },
  };
}

/** A registry loaded from `files` (name → YAML) in a fresh temp folder. */
export async function registryOf(files: Record<string, string>): Promise<{ registry: IntegrationRegistry; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'hcm-dispatch-dir-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, `${name}.yaml`), text);
  const registry = new IntegrationRegistry(dir);
  const entries = await registry.loadAll();
  expect(entries.flatMap((e) => e.problems)).toEqual([]);
  return { registry, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A webhook integration whose one step calls `$trigger.body.data.url` (a gate path). */
export function callingIntegration(name: string, response = ''): string {
  return `name: ${name}
trigger:
  type: webhook${response}
steps:
  - id: call
    action: core.http
    inputs:
      url: "{% $trigger.body.data.url %}"
      method: GET
`;
}

/** A synchronous webhook integration that answers early, then calls the gate. */
export function respondingIntegration(name: string): string {
  return `name: ${name}
trigger:
  type: webhook
  response: { mode: sync }
steps:
  - id: reply
    action: core.respond
    inputs:
      statusCode: 201
      body: "{% {'early': true} %}"
  - id: call
    action: core.http
    inputs:
      url: "{% $trigger.body.data.url %}"
      method: GET
`;
}

/** A new execution of `integration` whose trigger body carries `data`. */
export function execution(integration: string, data: Record<string, unknown> = {}): NewExecution {
  return {
    id: newExecutionId(),
    integration,
    test: false,
    trigger: {
      body: { data, contentType: 'application/json' },
      headers: { 'content-type': 'application/json' },
      queryParameters: {},
      pathFragment: '',
      method: 'POST',
      webhookUrls: { live: '', test: '' },
      receivedAt: new Date().toISOString(),
    },
  };
}

export interface Gate {
  /** `${base}/hold/<key>` waits for `release`; `${base}/ok` answers at once; `${base}/deep` answers JSON too deep to serialise. */
  base: string;
  /** Requests waiting now, per key. */
  waiting(key?: string): number;
  /** The most requests that waited at once, overall and per key. */
  readonly maxWaiting: { all: number; byKey: Map<string, number> };
  /** Answers up to `n` waiting requests (oldest first; all when omitted). */
  release(n?: number): number;
  close(): Promise<void>;
}

export async function startGate(): Promise<Gate> {
  const held: Array<{ key: string; res: ServerResponse }> = [];
  const maxWaiting = { all: 0, byKey: new Map<string, number>() };
  const count = (key?: string) => held.filter((h) => key === undefined || h.key === key).length;
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/hold/')) {
      const key = url.slice('/hold/'.length);
      held.push({ key, res });
      maxWaiting.all = Math.max(maxWaiting.all, held.length);
      maxWaiting.byKey.set(key, Math.max(maxWaiting.byKey.get(key) ?? 0, count(key)));
      res.on('close', () => {
        const i = held.findIndex((h) => h.res === res);
        if (i >= 0) held.splice(i, 1);
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(url === '/deep' ? deep : '{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    waiting: count,
    maxWaiting,
    release(n = held.length) {
      const out = held.splice(0, n);
      for (const h of out) {
        h.res.writeHead(200, { 'content-type': 'application/json' });
        h.res.end(JSON.stringify({ released: h.key }));
      }
      return out.length;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Resolves once `fn` returns something other than undefined (checked every 10 ms, up to 20 s). */
export async function until<T>(fn: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
export const settle = () => new Promise<void>((r) => setImmediate(r));
