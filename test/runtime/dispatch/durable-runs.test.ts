/**
 * The run lifecycle's durable parts over a real SQLite store (run-lifecycle.ts, checkpoints.ts):
 * an accepted run checkpoints after each step that changes something, a synchronous run nobody was
 * answered about does not (it commits once at its end), checkpoints asked for while one is in
 * flight share one next save, and a resumed execution whose cancel was requested while no process
 * ran it is saved `cancelled` without running.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../../src/engine/record.js';
import { coalescedSave, savesSettled } from '../../../src/runtime/dispatch/checkpoints.js';
import { ExecutionDispatcher } from '../../../src/runtime/dispatch/dispatcher.js';
import { LiveRuns } from '../../../src/runtime/dispatch/live-runs.js';
import type { IntegrationRegistry } from '../../../src/runtime/registry.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { testServices } from '../../helpers/engine.js';
import { execution, type Gate, registryOf, startGate, type TempStore, tempStore, until } from './helpers.js';

let gate: Gate;
let registry: IntegrationRegistry;
let removeDir: () => void;
const open: Array<{ dispatcher?: ExecutionDispatcher; t: TempStore }> = [];

/** Calls `ok`, then the gate's `hold/<key>` (the run waits there until released). */
const twoCalls = (name: string) => `name: ${name}
trigger:
  type: webhook
steps:
  - id: first
    action: core.http
    inputs: { url: "{% $trigger.body.data.ok %}", method: POST }
  - id: second
    action: core.http
    inputs: { url: "{% $trigger.body.data.hold %}", method: POST }
`;

beforeAll(async () => {
  gate = await startGate();
  ({ registry, remove: removeDir } = await registryOf({ two: twoCalls('two') }));
});
afterAll(async () => {
  await gate.close();
  removeDir();
});
afterEach(async () => {
  gate.release();
  for (const { dispatcher, t } of open.splice(0)) {
    await dispatcher?.stop(5000);
    await t.close();
  }
});

async function setup(t?: TempStore) {
  t ??= await tempStore();
  const dispatcher = new ExecutionDispatcher({ store: t.store, registry, services: testServices(), env: {} });
  open.push({ dispatcher, t });
  await dispatcher.recover();
  return { dispatcher, store: t.store, t };
}

const run = () => execution('two', { ok: `${gate.base}/ok`, hold: `${gate.base}/hold/two` });

describe('checkpoints', () => {
  it('an accepted run is checkpointed after its first call, before its second ends', async () => {
    const { dispatcher, store } = await setup();
    const e = run();
    await dispatcher.submit([e]);
    await until(() => (gate.waiting('two') === 1 ? true : undefined), 'the second call');
    const stored = await until(async () => {
      const r = await store.getExecution(e.id);
      return r?.steps[0]?.status === 'succeeded' ? r : undefined;
    }, 'the checkpoint');
    expect(stored.status).toBe('running');
    expect(stored.steps.map((s) => s.id)).toEqual(['first']);
  });

  it('a synchronous run nobody was answered about commits nothing before its end', async () => {
    const { dispatcher, store } = await setup();
    const e = run();
    const watch = dispatcher.watch(e.id);
    const commits = (store as SqliteStore).stats.commits;
    await dispatcher.submit([e]);
    await until(() => (gate.waiting('two') === 1 ? true : undefined), 'the second call');
    expect(dispatcher.liveRecord(e.id)?.steps[0]?.status).toBe('succeeded');
    expect((store as SqliteStore).stats.commits).toBe(commits);
    expect(await store.getExecution(e.id)).toBeUndefined();
    gate.release();
    expect((await watch.done).status).toBe('succeeded');
    expect((await store.getExecution(e.id))?.status).toBe('succeeded');
  });

  it('checkpoints asked for while one is in flight share one next save, of the latest record', async () => {
    const t = await tempStore();
    open.push({ t });
    const e = run();
    await t.store.enqueue([e]);
    const record = (await t.store.markRunning(e.id, 1))!;
    const live = new LiveRuns(t.store);
    const entry = live.start(e.id, record, true);
    const saved: ExecutionRecord[] = [];
    const save = async (r: ExecutionRecord) => {
      saved.push(structuredClone(r));
      await t.store.saveExecution(r, { stored: true });
    };
    const step = (id: string) => ({ id, action: 'core.http', status: 'succeeded' as const, startedAt: new Date().toISOString(), results: id });
    record.steps.push(step('a'));
    const first = coalescedSave(entry, save);
    record.steps.push(step('b'));
    const second = coalescedSave(entry, save);
    record.steps.push(step('c'));
    const third = coalescedSave(entry, save);
    expect(third).toBe(second);
    await Promise.all([first, second, third]);
    await savesSettled(entry);
    expect(saved.map((r) => r.steps.map((s) => s.id))).toEqual([['a'], ['a', 'b', 'c']]);
    expect((await t.store.getExecution(e.id))?.steps.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(entry.inFlight).toBeUndefined();
  });
});

describe('cancel requested while no process ran it', () => {
  it('a resumed execution whose cancel was requested is saved cancelled and not run', async () => {
    const t = await tempStore();
    const e = execution('two', { ok: `${gate.base}/hold/never`, hold: `${gate.base}/hold/never` });
    await t.store.enqueue([e]);
    // A process marked it running, a cancel flagged it, and the process died before it saw the flag.
    await t.store.markRunning(e.id, 1);
    expect((await t.store.cancelExecution(e.id, new Date())).outcome).toBe('requested');
    const { dispatcher, store } = await setup(t);
    const done = await until(async () => {
      const r = await store.getExecution(e.id);
      return r?.status === 'cancelled' ? r : undefined;
    }, 'the cancelled save');
    expect(done.attempt).toBe(2);
    // Not started and stopped a moment later (the check for other replicas' cancels would do that): never run.
    expect(done.steps).toEqual([]);
    expect(gate.maxWaiting.byKey.get('never') ?? 0).toBe(0);
    expect(dispatcher.runningCount).toBe(0);
  });
});
