/**
 * Synchronous waiters on their own (with the live runs they commit through, over a real SQLite
 * store): answered by an early response or by the end, cancelled, and — when the caller's timeout
 * passes — the run made durable so it survives a crash.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../../src/engine/record.js';
import { LiveRuns } from '../../../src/runtime/dispatch/live-runs.js';
import { type RunOutcome, SyncWaiters } from '../../../src/runtime/dispatch/sync-waiters.js';
import { queuedRecord, runningRecord } from '../../../src/store/execution-states.js';
import { execution, settle, type TempStore, tempStore } from './helpers.js';

let t: TempStore | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function setup() {
  t = await tempStore();
  const live = new LiveRuns(t.store);
  const waiters = new SyncWaiters((id) => live.makeDurable(id));
  return { store: t.store, live, waiters };
}

function running(integration = 'sync'): ExecutionRecord {
  const now = new Date().toISOString();
  return runningRecord(queuedRecord(execution(integration), now), 1, now);
}

/** What a promise has settled to so far (undefined while pending). */
async function peek<T>(p: Promise<T>): Promise<T | undefined> {
  let value: T | undefined;
  void p.then((v) => (value = v));
  await settle();
  return value;
}

describe('SyncWaiters', () => {
  it('an early response answers the caller; the end still delivers the final record', async () => {
    const { waiters } = await setup();
    const r = running();
    const watch = waiters.watch(r.id);
    expect(waiters.has(r.id)).toBe(true);
    waiters.get(r.id)!.resolveOutcome({ kind: 'response', response: { statusCode: 201, body: { early: true } }, executionId: r.id });
    const done = { ...r, status: 'succeeded' as const };
    waiters.finish(r.id, done);
    expect(await watch.outcome).toEqual({ kind: 'response', response: { statusCode: 201, body: { early: true } }, executionId: r.id });
    expect(await watch.done).toBe(done);
    expect(waiters.has(r.id)).toBe(false);
  });

  it('without an early response, the end answers the caller with the record', async () => {
    const { waiters } = await setup();
    const r = running();
    const watch = waiters.watch(r.id);
    const done = { ...r, status: 'failed' as const };
    waiters.finish(r.id, done);
    expect(await watch.outcome).toEqual<RunOutcome>({ kind: 'done', record: done });
    expect(await watch.done).toBe(done);
    // Answered once: a second end changes nothing and finds no waiter.
    waiters.finish(r.id, r);
    expect(await watch.done).toBe(done);
  });

  it('a cancelled waiter is forgotten: the run is no longer kept out of the store, and its end answers nobody', async () => {
    const { waiters } = await setup();
    const r = running();
    const watch = waiters.watch(r.id);
    watch.cancel();
    expect(waiters.has(r.id)).toBe(false);
    waiters.finish(r.id, r);
    expect(await peek(watch.outcome)).toBeUndefined();
    expect(await peek(watch.done)).toBeUndefined();
  });

  it('when the caller stops waiting (its timeout), the run is committed now and still ends for the waiter', async () => {
    const { store, live, waiters } = await setup();
    const r = running();
    const watch = waiters.watch(r.id);
    live.start(r.id, r, false);
    // Not in the store yet: listed from memory only.
    expect(await store.getExecution(r.id)).toBeUndefined();
    expect(live.summaries({}).map((s) => s.id)).toEqual([r.id]);
    await watch.continueInBackground();
    expect((await store.getExecution(r.id))?.status).toBe('running');
    expect(live.get(r.id)?.stored).toBe(true);
    expect(live.summaries({})).toEqual([]); // the store lists it now
    await watch.continueInBackground(); // again: harmless
    const done = { ...r, status: 'succeeded' as const };
    waiters.finish(r.id, done);
    expect(await watch.outcome).toEqual({ kind: 'done', record: done });
  });
});

describe('LiveRuns', () => {
  it("shows a run's progress until it ends, and lists only those not in the store, by filter", async () => {
    const { live } = await setup();
    const mem = running('a');
    const row = running('b');
    live.start(mem.id, mem, false);
    live.start(row.id, row, true);
    const progressed = { ...mem, steps: [{ id: 'x', action: 'core.log', status: 'succeeded' as const }] } as ExecutionRecord;
    live.update(mem.id, progressed);
    expect(live.record(mem.id)).toBe(progressed);
    expect(live.summaries({ integration: 'a' }).map((s) => s.id)).toEqual([mem.id]);
    expect(live.summaries({ integration: 'b' })).toEqual([]);
    expect(live.summaries({ status: 'succeeded' })).toEqual([]);
    live.end(mem.id);
    expect(live.record(mem.id)).toBeUndefined();
    await live.makeDurable(mem.id); // ended: nothing to commit
  });
});
