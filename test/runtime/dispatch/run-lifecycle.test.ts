/**
 * One run's lifecycle on its own, over a real SQLite store, a registry loaded from YAML and a
 * loopback gate for the step's call: the ordinary run, poison, a vanished row, an integration no
 * longer loaded, a record too large to save, a synchronous run from memory, and abandonment.
 */
import { EventEmitter } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../../src/engine/record.js';
import { DEFAULT_LIMITS } from '../../../src/runtime/dispatch/limits.js';
import { LiveRuns } from '../../../src/runtime/dispatch/live-runs.js';
import { type DispatcherEvents, RunLifecycle } from '../../../src/runtime/dispatch/run-lifecycle.js';
import { SyncWaiters } from '../../../src/runtime/dispatch/sync-waiters.js';
import type { IntegrationRegistry } from '../../../src/runtime/registry.js';
import type { QueuedJob } from '../../../src/store/queue.js';
import type { NewExecution } from '../../../src/store/types.js';
import { testServices } from '../../helpers/engine.js';
import { callingIntegration, execution, type Gate, registryOf, startGate, type TempStore, tempStore, until } from './helpers.js';

let gate: Gate;
let registry: IntegrationRegistry;
let removeDir: () => void;
let t: TempStore | undefined;

beforeAll(async () => {
  gate = await startGate();
  ({ registry, remove: removeDir } = await registryOf({ calls: callingIntegration('calls') }));
});
afterAll(async () => {
  await gate.close();
  removeDir();
});
afterEach(async () => {
  gate.release();
  await t?.close();
  t = undefined;
});

async function setup() {
  t = await tempStore();
  const store = t.store;
  const live = new LiveRuns(store);
  const waiters = new SyncWaiters((id) => live.makeDurable(id));
  const events = new EventEmitter<DispatcherEvents>();
  const seen: string[] = [];
  events.on('started', (job) => seen.push(`started ${job.id}`));
  events.on('finished', (r) => seen.push(`finished ${r.id} ${r.status}`));
  let abandoned = false;
  const lifecycle = new RunLifecycle({
    store,
    registry,
    services: testServices(),
    env: {},
    live,
    waiters,
    events,
    limits: { ...DEFAULT_LIMITS, maxInterruptions: 3 },
    abandoned: () => abandoned,
  });
  const job = (e: NewExecution, extra: Partial<QueuedJob> = {}): QueuedJob => ({ id: e.id, integration: e.integration, attempt: 1, ...extra });
  return { store, live, waiters, lifecycle, seen, job, abandon: () => (abandoned = true) };
}

const signal = () => new AbortController().signal;

describe('RunLifecycle', () => {
  it('marks a queued execution running, runs it, saves it and reports both ends', async () => {
    const { store, live, lifecycle, seen, job } = await setup();
    const e = execution('calls', { url: `${gate.base}/ok` });
    await store.enqueue([e]);
    expect(await lifecycle.run(job(e), signal())).toBe(true);
    const saved = await store.getExecution(e.id);
    expect(saved?.status).toBe('succeeded');
    expect(saved?.steps.map((s) => s.id)).toEqual(['call']);
    expect(seen).toEqual([`started ${e.id}`, `finished ${e.id} succeeded`]);
    expect(live.record(e.id)).toBeUndefined();
  });

  it('fails an execution the process stopped under too often instead of running it', async () => {
    const { store, lifecycle, seen, job } = await setup();
    const e = execution('calls', { url: `${gate.base}/hold/poison` });
    await store.enqueue([e]);
    await store.markRunning(e.id, 3); // the third process died under it
    const ok = await lifecycle.run(job(e, { attempt: 4, recovered: true, previous: { status: 'running', attempt: 3 } }), signal());
    expect(ok).toBe(true);
    const saved = await store.getExecution(e.id);
    expect(saved?.status).toBe('failed');
    expect(saved?.attempt).toBe(3);
    expect((saved?.error as { code?: string } | undefined)?.code).toBe('interrupted');
    expect(saved?.error?.message).toMatch(/the process stopped 3 times while this execution ran; not resumed \(limit 3/);
    expect(seen).toEqual([]); // never started
    expect(gate.waiting('poison')).toBe(0);
  });

  it('resumes an execution interrupted below the limit', async () => {
    const { store, lifecycle, job } = await setup();
    const e = execution('calls', { url: `${gate.base}/ok` });
    await store.enqueue([e]);
    await store.markRunning(e.id, 2);
    expect(await lifecycle.run(job(e, { attempt: 3, recovered: true, previous: { status: 'running', attempt: 2 } }), signal())).toBe(true);
    const saved = await store.getExecution(e.id);
    expect(saved?.status).toBe('succeeded');
    expect(saved?.attempt).toBe(3);
  });

  it('skips an execution whose row is gone', async () => {
    const { store, lifecycle, seen, job } = await setup();
    const e = execution('calls', { url: `${gate.base}/ok` });
    expect(await lifecycle.run(job(e), signal())).toBe(true);
    expect(await store.getExecution(e.id)).toBeUndefined();
    expect(seen).toEqual([]);
  });

  it('fails an execution whose integration is not loaded, naming it', async () => {
    const { store, lifecycle, job } = await setup();
    const e = execution('renamed-away');
    await store.enqueue([e]);
    expect(await lifecycle.run(job(e), signal())).toBe(true);
    const saved = await store.getExecution(e.id);
    expect(saved?.status).toBe('failed');
    expect(saved?.error?.message).toBe('integration renamed-away is not loaded (removed, renamed or never valid); the execution cannot run');
  });

  it('saves a record that cannot be saved as failed, without its step results', async () => {
    const { store, lifecycle, seen, job } = await setup();
    const e = execution('calls', { url: `${gate.base}/deep` });
    await store.enqueue([e]);
    expect(await lifecycle.run(job(e), signal())).toBe(true);
    const saved = await store.getExecution(e.id);
    expect(saved?.status).toBe('failed');
    expect((saved?.error as { code?: string } | undefined)?.code).toBe('record_not_saved');
    expect(saved?.steps[0]?.id).toBe('call');
    expect(saved?.steps[0]?.results).toBeUndefined();
    expect(seen).toEqual([`started ${e.id}`, `finished ${e.id} failed`]);
  });

  it('runs a synchronous execution from memory and commits it once, when it ends; its waiter gets the record', async () => {
    const { store, live, waiters, lifecycle, job } = await setup();
    const e = execution('calls', { url: `${gate.base}/hold/sync` });
    const watch = waiters.watch(e.id);
    const running = lifecycle.run(job(e, { local: e }), signal());
    await until(() => (gate.waiting('sync') === 1 ? true : undefined), 'the step to call the gate');
    expect(live.record(e.id)?.status).toBe('running');
    expect(live.summaries({}).map((s) => s.id)).toEqual([e.id]);
    expect(await store.getExecution(e.id)).toBeUndefined();
    gate.release();
    expect(await running).toBe(true);
    const outcome = await watch.outcome;
    expect(outcome.kind).toBe('done');
    expect((outcome as { record: ExecutionRecord }).record.status).toBe('succeeded');
    expect((await store.getExecution(e.id))?.status).toBe('succeeded');
  });

  it('once abandoned by shutdown, writes nothing and answers nobody: the row stays running for the next start', async () => {
    const { store, waiters, lifecycle, seen, job, abandon } = await setup();
    const e = execution('calls', { url: `${gate.base}/hold/abandon` });
    await store.enqueue([e]);
    const watch = waiters.watch(e.id);
    const controller = new AbortController();
    const running = lifecycle.run(job(e), controller.signal);
    await until(() => (gate.waiting('abandon') === 1 ? true : undefined), 'the step to call the gate');
    abandon();
    controller.abort(new Error('shutdown'));
    expect(await running).toBe(false);
    expect((await store.getExecution(e.id))?.status).toBe('running');
    expect(seen).toEqual([`started ${e.id}`]);
    let answered = false;
    void watch.done.then(() => (answered = true));
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
  });
});
