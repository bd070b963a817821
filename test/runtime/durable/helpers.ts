/**
 * Real parts for the durable-execution tests of the runtime: a loopback counter server (every
 * request counted by path; `/hold/...` paths answer only when the test releases them, so a test
 * knows a step is in flight) and the integrations they run, written to a temp folder. The
 * integrations call the counter at `$trigger.body.data.base` (each request names it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Counter {
  url: string;
  /** Requests seen per path (without the query). */
  hits(path: string): number;
  /** Resolves once a request to `path` is being held (a step is in flight). */
  held(path: string): Promise<void>;
  /** Answers every held request (and those that come later) of `path`. */
  release(path: string): void;
  /** Holds `path` again (after a release) and forgets its count. */
  reset(path: string): void;
  close(): Promise<void>;
}

export async function counterServer(): Promise<Counter> {
  const hits = new Map<string, number>();
  const holding = new Map<string, ServerResponse[]>();
  const released = new Set<string>();
  const waiters = new Map<string, Array<() => void>>();
  const answer = (res: ServerResponse, path: string) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path, n: hits.get(path) }));
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    req.resume();
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path.startsWith('/hold/') && !released.has(path)) {
      holding.set(path, [...(holding.get(path) ?? []), res]);
      for (const w of waiters.get(path)?.splice(0) ?? []) w();
      return;
    }
    answer(res, path);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits: (path) => hits.get(path) ?? 0,
    held: (path) => (holding.get(path)?.length ? Promise.resolve() : new Promise<void>((r) => waiters.set(path, [...(waiters.get(path) ?? []), r]))),
    release(path) {
      released.add(path);
      for (const res of holding.get(path)?.splice(0) ?? []) answer(res, path);
    },
    reset(path) {
      released.delete(path);
      hits.delete(path);
      for (const res of holding.get(path)?.splice(0) ?? []) res.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A folder of integrations (name → YAML); `remove` deletes it. */
export function integrationsDir(files: Record<string, string>): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'hcm-durable-dir-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, `${name}.yaml`), text);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

const http = (id: string, path: string) => `  - id: ${id}
    action: core.http
    inputs:
      url: "{% $trigger.body.data.base & '${path}' %}"
      method: POST
      data: { step: ${id} }
`;

/** Four calls in a row; the third is held by the counter server until released. */
export const CHAIN = `name: chain
trigger:
  type: webhook
steps:
${http('one', '/one')}${http('two', '/two')}${http('three', '/hold/three')}${http('four', '/four')}`;

/** Waits `for` (then calls /after). */
export const waitFor = (name: string, duration: string, sync = false) => `name: ${name}
trigger:
  type: webhook${sync ? '\n  response: { mode: sync }' : ''}
steps:
${http('before', `/${name}/before`)}  - id: pause
    action: core.wait
    inputs:
      for: ${duration}
${http('after', `/${name}/after`)}`;

/** Makes a callback URL, hands it out (a call to /handout carrying it), then waits for its request. */
export const waitForCallback = (name: string, timeout: string) => `name: ${name}
trigger:
  type: webhook
steps:
  - id: cb
    action: core.callback
  - id: handout
    action: core.http
    inputs:
      url: "{% $trigger.body.data.base & '/${name}/handout' %}"
      method: POST
      data: { url: "{% $steps.cb.url %}" }
  - id: approval
    action: core.wait
    inputs:
      callback: "{% $steps.cb.url %}"
      timeout: ${timeout}
${http('after', `/${name}/after`)}`;
