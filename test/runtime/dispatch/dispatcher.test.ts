/**
 * The ExecutionDispatcher built as the runtime builds it — a real SQLite store and its queue, a
 * registry loaded from YAML, the engine (and, for the bounds, PostgreSQL's table queue too) —
 * running executions end to end: within its bounds,
 * synchronous callers answered early, refusals, recovery after a stopped process, and shutdown.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BusyError } from '../../../src/runtime/dispatch/admission.js';
import { type DispatcherOptions, ExecutionDispatcher } from '../../../src/runtime/dispatch/dispatcher.js';
import type { IntegrationRegistry } from '../../../src/runtime/registry.js';
import { testServices } from '../../helpers/engine.js';
import {
  callingIntegration,
  execution,
  type Gate,
  registryOf,
  respondingIntegration,
  startGate,
  type TempStore,
  tempPgStore,
  tempStore,
  until,
} from './helpers.js';

let gate: Gate;
let registry: IntegrationRegistry;
let removeDir: () => void;
const open: Array<{ dispatcher: ExecutionDispatcher; t: TempStore }> = [];

beforeAll(async () => {
  gate = await startGate();
  ({ registry, remove: removeDir } = await registryOf({
    a: callingIntegration('a'),
    b: callingIntegration('b'),
    c: callingIntegration('c'),
    early: respondingIntegration('early'),
  }));
});
afterAll(async () => {
  await gate.close();
  removeDir();
});
afterEach(async () => {
  gate.release();
  for (const { dispatcher, t } of open.splice(0)) {
    await dispatcher.stop(5000);
    await t.close();
  }
});

async function setup(limits: DispatcherOptions['limits'], t?: TempStore) {
  t ??= await tempStore();
  const dispatcher = new ExecutionDispatcher({ store: t.store, registry, services: testServices(), limits, env: {} });
  open.push({ dispatcher, t });
  const events = { queued: 0, started: 0, finished: 0 };
  dispatcher.on('queued', (list) => (events.queued += list.length));
  dispatcher.on('started', () => events.started++);
  dispatcher.on('finished', () => events.finished++);
  return { dispatcher, store: t.store, t, events };
}

const held = (integration: string) => execution(integration, { url: `${gate.base}/hold/${integration}` });

describe('ExecutionDispatcher', () => {
  it.each([
    ['SQLite (the in-process queue)', tempStore],
    ['PostgreSQL (the table queue, claimed within the free slots it is told of)', tempPgStore],
  ])('records, queues and runs executions end to end, never past its global and per-integration bounds: %s', async (_, open) => {
    const { dispatcher, store, events } = await setup({ concurrency: 4, perIntegration: 2, backlog: 100 }, await open());
    await dispatcher.recover(); // starts the queue (a shared queue claims from here on)
    gate.maxWaiting.all = 0;
    gate.maxWaiting.byKey.clear();
    const all = ['a', 'b', 'c'].flatMap((name) => Array.from({ length: 4 }, () => held(name)));
    await dispatcher.submit(all.slice(0, 6));
    await dispatcher.submit(all.slice(6));
    // Recorded before submit resolves (durable), queued or running now.
    for (const e of all) expect((await store.getExecution(e.id))?.status).toMatch(/queued|running/);
    await until(() => (gate.waiting() === 4 ? true : undefined), 'four runs at the gate');
    expect(dispatcher.runningCount).toBe(4);
    expect(dispatcher.depth).toBe(8);
    // Nothing marked running that does not run here (a shared queue claims only what fits).
    expect((await store.countByStatus()).running).toBe(4);
    for (const name of ['a', 'b', 'c']) expect(gate.waiting(name)).toBeLessThanOrEqual(2);
    // Release one call at a time until every execution finished.
    await until(async () => {
      gate.release(1);
      return events.finished === all.length ? true : undefined;
    }, 'every execution to finish');
    for (const e of all) expect((await store.getExecution(e.id))?.status).toBe('succeeded');
    expect(events).toEqual({ queued: 12, started: 12, finished: 12 });
    expect(gate.maxWaiting.all).toBeLessThanOrEqual(4);
    for (const name of ['a', 'b', 'c']) expect(gate.maxWaiting.byKey.get(name)).toBeLessThanOrEqual(2);
    expect(dispatcher.runningCount).toBe(0);
    expect(dispatcher.depth).toBe(0);
  });

  it('runs an execution someone waits for from memory: listed live, in the store only once it ends', async () => {
    const { dispatcher, store } = await setup({});
    const e = held('a');
    const watch = dispatcher.watch(e.id);
    await dispatcher.submit([e]);
    await until(() => (gate.waiting('a') === 1 ? true : undefined), 'the run to reach the gate');
    expect(await store.getExecution(e.id)).toBeUndefined();
    expect(dispatcher.liveSummaries({ integration: 'a' }).map((s) => s.id)).toEqual([e.id]);
    expect(dispatcher.liveRecord(e.id)?.status).toBe('running');
    gate.release();
    const outcome = await watch.outcome;
    expect(outcome.kind === 'done' && outcome.record.status).toBe('succeeded');
    expect((await store.getExecution(e.id))?.status).toBe('succeeded');
    expect(dispatcher.liveSummaries({})).toEqual([]);
  });

  it('answers a synchronous caller with the early response, commits the run then, and saves it at the end', async () => {
    const { dispatcher, store } = await setup({});
    const e = execution('early', { url: `${gate.base}/hold/early` });
    const watch = dispatcher.watch(e.id);
    await dispatcher.submit([e]);
    const outcome = await watch.outcome;
    expect(outcome).toEqual({ kind: 'response', response: expect.objectContaining({ statusCode: 201, body: { early: true } }), executionId: e.id });
    // Answered before the end: the run is in the store from now on (a crash resumes it).
    await until(async () => ((await store.getExecution(e.id))?.status === 'running' ? true : undefined), 'the early commit');
    expect(dispatcher.liveRecord(e.id)?.status).toBe('running');
    await until(() => (gate.waiting('early') === 1 ? true : undefined), 'the step after the response');
    gate.release();
    expect((await watch.done).status).toBe('succeeded');
    expect((await store.getExecution(e.id))?.status).toBe('succeeded');
    expect(dispatcher.liveRecord(e.id)).toBeUndefined();
  });

  it('refuses a batch past the backlog without recording any of it', async () => {
    const { dispatcher, store } = await setup({ backlog: 2 });
    const batch = [held('a'), held('b'), held('c')];
    await expect(dispatcher.submit(batch)).rejects.toBeInstanceOf(BusyError);
    for (const e of batch) expect(await store.getExecution(e.id)).toBeUndefined();
    expect(() => dispatcher.checkCapacity(3)).toThrow(BusyError);
    dispatcher.checkCapacity(2);
  });

  it('resumes what a stopped process left queued or running, as the next attempt', async () => {
    const t = await tempStore();
    const left = [execution('a', { url: `${gate.base}/ok` }), execution('b', { url: `${gate.base}/ok` })];
    await t.store.enqueue(left);
    await t.store.markRunning(left[1]!.id, 1); // the process stopped while this one ran
    const { dispatcher, store } = await setup({}, t);
    expect(await dispatcher.recover()).toBe(2);
    for (const e of left) {
      const r = await until(async () => {
        const s = await store.getExecution(e.id);
        return s?.status === 'succeeded' ? s : undefined;
      }, `${e.integration} to be resumed`);
      expect(r.attempt).toBe(2);
    }
  });

  it('stops: refuses new work with 503, leaves a run past the grace period running in the store', async () => {
    const { dispatcher, store } = await setup({});
    const e = held('a');
    await dispatcher.submit([e]);
    await until(() => (gate.waiting('a') === 1 ? true : undefined), 'the run to reach the gate');
    expect(await dispatcher.stop(50)).toEqual({ finished: 0, abandoned: 1 });
    expect((await store.getExecution(e.id))?.status).toBe('running');
    const err = await dispatcher.submit([held('b')]).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(BusyError);
    expect((err as BusyError).status).toBe(503);
  });
});
