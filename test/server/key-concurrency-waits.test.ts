/**
 * Per-key concurrency meets durable execution (docs/authoring.md "Per-key concurrency": a waiting
 * execution keeps its slot), through the runner over HTTP on SQLite (the in-process queue's key
 * lines, store/key-lines.ts) and on PostgreSQL (the claim counts `waiting` rows of the key): an
 * execution paused by `core.wait` keeps its key's slot — the next one of the key does not start
 * while it waits — it wakes without being held up by its own slot, and the next one starts once it
 * has finished; cancelling a waiting execution frees its slot. A loopback counter server is the
 * outside world (`/hold/...` requests answer when the test releases them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSchema } from '../helpers/pg-schema.js';
import { type Counter, counterServer, integrationsDir } from '../runtime/durable/helpers.js';
import { poll, startTestServer, type TestServer } from './helpers.js';

/** One line per worker: calls /kn/<tag>/before, waits `duration`, then calls `after` (held or not). */
const keyedWait = (name: string, duration: string, after: string) => `name: ${name}
concurrency: { key: "{% $trigger.body.data.worker %}" }
trigger:
  type: webhook
steps:
  - id: before
    action: core.http
    inputs:
      url: "{% $trigger.body.data.base & '/kn/' & $trigger.body.data.tag & '/before' %}"
      method: POST
      data: { step: before }
  - id: pause
    action: core.wait
    inputs:
      for: ${duration}
  - id: after
    action: core.http
    inputs:
      url: "{% $trigger.body.data.base & '${after}' & $trigger.body.data.tag & '/after' %}"
      method: POST
      data: { step: after }
`;

let counter: Counter;
let dir: ReturnType<typeof integrationsDir>;
let server: TestServer;

async function start(name: string, worker: string, tag: string): Promise<string> {
  const res = await fetch(server.urls(name).live, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ base: counter.url, worker, tag }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { executionId: string }).executionId;
}

const get = async (id: string) => (await server.api('GET', `/executions/${id}`)).body;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(['sqlite', 'postgres'] as const)('per-key concurrency with core.wait (%s)', (kind) => {
  const schema = testSchema('keywait');
  beforeAll(async () => {
    counter = await counterServer();
    dir = integrationsDir({
      napper: keyedWait('napper', '2s', '/hold/kn/'),
      sleeper: keyedWait('sleeper', '1h', '/kn/'),
    });
    const databaseUrl = kind === 'postgres' ? schema.url : undefined;
    server = await startTestServer({ dir: dir.path, databaseUrl });
    expect(server.runtime.store.kind).toBe(kind);
  });

  afterAll(async () => {
    await server?.stop();
    await counter?.close();
    dir?.remove();
    if (kind === 'postgres') await schema.drop();
  });

  it('a waiting execution keeps its key’s slot; it wakes past its own slot, and the next starts after it finishes', { timeout: 40_000 }, async () => {
    const a = await start('napper', 'w1', `${kind}-a`);
    const waiting = await server.waitForExecution(a, ['waiting']);
    expect(waiting.concurrencyKey).toBe('w1');
    const b = await start('napper', 'w1', `${kind}-b`);
    // Another key is not held up: it runs to its own wait meanwhile.
    const c = await start('napper', 'w2', `${kind}-c`);
    await server.waitForExecution(c, ['waiting']);
    await pause(500);
    // A waits (holding no worker) and B has not started: A's slot is still A's.
    expect((await get(a)).status).toBe('waiting');
    expect((await get(b)).status).toBe('queued');
    expect(counter.hits(`/kn/${kind}-b/before`)).toBe(0);

    // A wakes (its own slot does not hold it back) and runs its last step, held here…
    await poll(async () => (counter.hits(`/hold/kn/${kind}-a/after`) === 1 ? true : undefined), 10_000);
    expect((await get(a)).status).toBe('running');
    await pause(300);
    // …while B still waits its turn.
    expect((await get(b)).status).toBe('queued');
    expect(counter.hits(`/kn/${kind}-b/before`)).toBe(0);

    counter.release(`/hold/kn/${kind}-a/after`);
    const doneA = await server.waitForExecution(a);
    expect(doneA.status).toBe('succeeded');
    const startedB = await server.waitForExecution(b, ['running', 'waiting', 'succeeded', 'failed']);
    expect(Date.parse(startedB.startedAt)).toBeGreaterThanOrEqual(Date.parse(doneA.finishedAt));
    expect(counter.hits(`/kn/${kind}-b/before`)).toBe(1);

    counter.release(`/hold/kn/${kind}-b/after`);
    counter.release(`/hold/kn/${kind}-c/after`);
    expect((await server.waitForExecution(b)).status).toBe('succeeded');
    expect((await server.waitForExecution(c)).status).toBe('succeeded');
    expect(counter.hits(`/kn/${kind}-a/before`)).toBe(1);
  });

  it('cancelling a waiting execution frees its key’s slot', { timeout: 30_000 }, async () => {
    const a = await start('sleeper', 'w9', `${kind}-la`);
    await server.waitForExecution(a, ['waiting']);
    const b = await start('sleeper', 'w9', `${kind}-lb`);
    // Longer than the in-process queue's check of held slots and PostgreSQL's claim poll.
    await pause(1500);
    expect((await get(b)).status).toBe('queued');
    expect(counter.hits(`/kn/${kind}-lb/before`)).toBe(0);

    const cancelled = await server.api('POST', `/executions/${a}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    // B gets the slot: it runs to its own wait.
    await poll(async () => (counter.hits(`/kn/${kind}-lb/before`) === 1 ? true : undefined), 10_000);
    expect((await server.waitForExecution(b, ['waiting'])).concurrencyKey).toBe('w9');
    expect((await server.api('POST', `/executions/${b}/cancel`)).body.status).toBe('cancelled');
  });
});
