/**
 * Per-key concurrency end to end through the dispatcher (docs/authoring.md "Per-key
 * concurrency"), on both stores: the in-process queue of SQLite (store/key-lines.ts) and
 * PostgreSQL's claim. The key is evaluated as intake evaluates it (engine/concurrency-key.ts);
 * each run holds a gate request named by its key, so the gate counts how many of one key run at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { concurrencyKeyOf } from '../../../src/engine/concurrency-key.js';
import { ExecutionDispatcher } from '../../../src/runtime/dispatch/dispatcher.js';
import type { IntegrationRegistry } from '../../../src/runtime/registry.js';
import type { NewExecution } from '../../../src/store/types.js';
import { testServices } from '../../helpers/engine.js';
import { execution, type Gate, registryOf, startGate, type TempStore, tempPgStore, tempStore, until } from './helpers.js';

const keyed = (name: string, concurrency: string) => `name: ${name}
concurrency: ${concurrency}
trigger:
  type: webhook
steps:
  - id: call
    action: core.http
    inputs:
      url: "{% $trigger.body.data.url %}"
      method: GET
`;

let gate: Gate;
let registry: IntegrationRegistry;
let removeDir: () => void;
const open: Array<{ dispatcher: ExecutionDispatcher; t: TempStore }> = [];

beforeAll(async () => {
  gate = await startGate();
  ({ registry, remove: removeDir } = await registryOf({
    workers: keyed('workers', '{ key: "{% $trigger.body.data.workerId %}" }'),
    pairs: keyed('pairs', '{ key: "{% $trigger.body.data.workerId %}", limit: 2 }'),
    whole: keyed('whole', '{ limit: 2 }'),
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

async function setup(t: TempStore) {
  const dispatcher = new ExecutionDispatcher({ store: t.store, registry, services: testServices(), limits: { perIntegration: 8 }, env: {} });
  open.push({ dispatcher, t });
  return dispatcher;
}

/** An execution of `integration` for `workerId`, its key evaluated as intake does; its run holds `/hold/<hold>`. */
async function event(integration: string, workerId: string | undefined, hold: string): Promise<NewExecution> {
  const e = execution(integration, { workerId, url: `${gate.base}/hold/${hold}` });
  const key = await concurrencyKeyOf(registry.get(integration)!, e.trigger, { executionId: e.id, env: {} });
  return key !== undefined ? { ...e, concurrencyKey: key } : e;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stores: Array<[string, () => Promise<TempStore>]> = [
  ['SQLite', () => tempStore()],
  ['PostgreSQL', () => tempPgStore()],
];

describe.each(stores)('per-key concurrency (%s)', (_name, makeStore) => {
  it('runs a worker’s transfer and termination in order, never together, while another worker runs', async () => {
    const t = await makeStore();
    const store = t.store;
    const dispatcher = await setup(t);
    await dispatcher.recover();
    const transfer = await event('workers', '21001', '21001');
    const termination = await event('workers', '21001', '21001');
    const other = await event('workers', '21002', '21002');
    await dispatcher.submit([transfer, termination, other]);
    await until(() => (gate.waiting('21001') === 1 && gate.waiting('21002') === 1 ? true : undefined), 'the first of each worker');
    await pause(300);
    expect(gate.waiting('21001')).toBe(1);
    expect((await store.getExecution(termination.id))?.status).toBe('queued');
    gate.release();
    const done = async (id: string) =>
      until(async () => {
        const r = await store.getExecution(id);
        gate.release();
        return r?.status === 'succeeded' ? r : undefined;
      }, `${id} to finish`);
    const [a, b] = [await done(transfer.id), await done(termination.id)];
    expect(gate.maxWaiting.byKey.get('21001')).toBe(1);
    expect(Date.parse(b.startedAt!)).toBeGreaterThanOrEqual(Date.parse(a.finishedAt!));
    expect(a.concurrencyKey).toBe('21001');
  });

  it('lets `limit` of one key run at once, and `{limit}` alone limits the whole integration', async () => {
    const t = await makeStore();
    const dispatcher = await setup(t);
    await dispatcher.recover();
    const pairs = await Promise.all([1, 2, 3, 4].map(() => event('pairs', 'p', 'pairs')));
    const whole = await Promise.all(['x', 'y', 'z', undefined].map((w) => event('whole', w, 'whole')));
    expect(whole.map((e) => e.concurrencyKey)).toEqual(['*', '*', '*', '*']);
    await dispatcher.submit([...pairs, ...whole]);
    await until(() => (gate.waiting('pairs') === 2 && gate.waiting('whole') === 2 ? true : undefined), 'two of each');
    await pause(300);
    expect([gate.waiting('pairs'), gate.waiting('whole')]).toEqual([2, 2]);
    for (const e of [...pairs, ...whole])
      await until(async () => {
        gate.release();
        return (await t.store.getExecution(e.id))?.status === 'succeeded' ? true : undefined;
      }, 'all to finish');
    expect(gate.maxWaiting.byKey.get('pairs')).toBe(2);
    expect(gate.maxWaiting.byKey.get('whole')).toBe(2);
  });

  // A real core.wait through the runner: test/server/key-concurrency-waits.test.ts. Here: a waiting
  // execution found at start (left by a previous process) holds its slot from recover().
  it('a waiting execution found at start keeps its key’s slot until it ends', async () => {
    const t = await makeStore();
    const sleeping = await event('workers', '30001', 'sleeping');
    await t.store.enqueue([sleeping]);
    // It waits (as a core.wait left it): recorded `waiting`, no worker holds it.
    const stored = (await t.store.getExecution(sleeping.id))!;
    await t.store.saveExecution({ ...stored, status: 'waiting', wakeAt: '2999-01-01T00:00:00.000Z' }, { stored: true });
    const dispatcher = await setup(t);
    await dispatcher.recover();
    const next = await event('workers', '30001', '30001');
    await dispatcher.submit([next]);
    await pause(1500);
    expect(gate.waiting('30001')).toBe(0);
    expect((await t.store.getExecution(next.id))?.status).toBe('queued');
    // It ends without running again (cancelled while waiting): the slot is free, the next one runs.
    expect((await t.store.cancelExecution(sleeping.id, new Date())).outcome).toBe('cancelled');
    await until(() => (gate.waiting('30001') === 1 ? true : undefined), 'the next one to start');
  });

  it('a waiting execution cancelled through the dispatcher frees its key’s slot at once', async () => {
    const t = await makeStore();
    const sleeping = await event('workers', '30002', 'sleeping');
    await t.store.enqueue([sleeping]);
    const stored = (await t.store.getExecution(sleeping.id))!;
    await t.store.saveExecution({ ...stored, status: 'waiting', wakeAt: '2999-01-01T00:00:00.000Z' }, { stored: true });
    const dispatcher = await setup(t);
    await dispatcher.recover();
    const next = await event('workers', '30002', '30002');
    await dispatcher.submit([next]);
    await pause(300);
    const lines = dispatcher.queue as unknown as { aheadInLine?(id: string): number | undefined };
    if (lines.aheadInLine) expect(lines.aheadInLine(next.id)).toBe(1);
    expect((await dispatcher.cancel(sleeping.id)).outcome).toBe('cancelled');
    // In one process the slot is freed by the cancel itself, not by the once-a-second check.
    if (lines.aheadInLine) expect(lines.aheadInLine(next.id)).toBeUndefined();
    await until(() => (gate.waiting('30002') === 1 ? true : undefined), 'the next one to start');
  });
});
