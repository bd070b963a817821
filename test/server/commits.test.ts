/**
 * How often an execution is written (issue: fewer commits per execution, one source of truth).
 * A synchronous webhook's run is not in the store while it runs — the API shows it from memory —
 * and is committed once, when it ends; answered early (core.respond, or the 504 of its timeout), it
 * is committed before the answer leaves. An async execution is written at accept, when it starts and when it ends, never
 * in between (its progress is shown from memory).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { gate, tempDir, write, type Gate } from '../triggers/helpers.js';
import { poll, startTestServer, type TestServer } from './helpers.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

let g: Gate;
let s: TestServer;
const commits = () => (s.runtime.store as unknown as { stats: { commits: number } }).stats.commits;

async function setup(): Promise<void> {
  if (s) return;
  g = await gate();
  cleanups.push(() => g.close());
  const dir = tempDir('hcm-commits-');
  cleanups.push(dir.remove);
  write(
    dir.path,
    'held.yaml',
    `name: held\ntrigger:\n  type: webhook\n  response: { mode: sync, timeoutMs: 20000 }\nsteps:\n  - id: wait\n    action: core.http\n    inputs: { url: "${g.url}", method: GET }\n`,
  );
  write(
    dir.path,
    'early.yaml',
    `name: early\ntrigger:\n  type: webhook\n  response: { mode: sync, timeoutMs: 20000 }\nsteps:\n  - id: reply\n    action: core.respond\n    inputs: { statusCode: 202, body: "{% {'early': true} %}" }\n  - id: wait\n    action: core.http\n    inputs: { url: "${g.url}", method: GET }\n`,
  );
  write(
    dir.path,
    'late.yaml',
    `name: late\ntrigger:\n  type: webhook\n  response: { mode: sync, timeoutMs: 100 }\nsteps:\n  - id: wait\n    action: core.http\n    inputs: { url: "${g.url}", method: GET }\n`,
  );
  write(
    dir.path,
    'steps.yaml',
    `name: steps\ntrigger:\n  type: webhook\nsteps:\n  - id: a\n    action: core.transform\n    inputs: { value: 1 }\n  - id: b\n    action: core.transform\n    inputs: { value: 2 }\n  - id: c\n    action: core.transform\n    inputs: { value: 3 }\n`,
  );
  s = await startTestServer({ dir: dir.path });
  cleanups.push(() => s.stop());
}

describe('commits per execution', () => {
  it('a synchronous run is shown running from memory and committed once, when it ends', async () => {
    await setup();
    const before = commits();
    const answer = fetch(s.urls('held').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    const [row] = await poll(async () => {
      const r = await s.api('GET', '/executions?integration=held&status=running');
      return r.body.length ? r.body : undefined;
    });
    await poll(async () => (g.waiting > 0 ? true : undefined));
    const live = await s.api('GET', `/executions/${row.id}`);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ id: row.id, status: 'running', attempt: 1, integration: 'held' });
    // Nothing was written: nobody has been told anything about this run yet.
    expect(await s.runtime.store.getExecution(row.id)).toBeUndefined();
    expect(commits()).toBe(before);

    g.release();
    const res = await answer;
    expect(res.status).toBe(200);
    const stored = await s.runtime.store.getExecution(row.id);
    expect(stored).toMatchObject({ status: 'succeeded', attempt: 1, trigger: { body: { data: { n: 1 } } } });
    expect(commits()).toBe(before + 1);
  });

  it('a synchronous run answered early is committed before the answer', async () => {
    await setup();
    const res = await fetch(s.urls('early').live, { method: 'POST' });
    expect(res.status).toBe(202);
    const id = res.headers.get('x-execution-id')!;
    // The caller has its answer while the run still waits on the third party: it must survive a crash.
    expect(await s.runtime.store.getExecution(id)).toMatchObject({ id, status: 'running' });
    await poll(async () => (g.waiting > 0 ? true : undefined));
    g.release();
    expect((await s.waitForExecution(id)).status).toBe('succeeded');
  });

  it('a synchronous run past its timeout (504, "continues in the background") is committed before the 504', async () => {
    await setup();
    const res = await fetch(s.urls('late').live, { method: 'POST' });
    expect(res.status).toBe(504);
    const id = res.headers.get('x-execution-id')!;
    expect(await s.runtime.store.getExecution(id)).toMatchObject({ id, status: 'running' });
    await poll(async () => (g.waiting > 0 ? true : undefined));
    g.release();
    expect((await s.waitForExecution(id)).status).toBe('succeeded');
  });

  it('an async execution is written at accept, start and end — not after each step', async () => {
    await setup();
    const before = commits();
    const res = await fetch(s.urls('steps').live, { method: 'POST' });
    const { executionId } = (await res.json()) as { executionId: string };
    const done = await s.waitForExecution(executionId);
    expect(done.steps.map((x: { id: string }) => x.id)).toEqual(['a', 'b', 'c']);
    expect(commits() - before).toBe(3);
  });
});
