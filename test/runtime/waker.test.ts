/**
 * The waker (src/runtime/waker.ts) over a real SQLite store and its queue: it sweeps at start
 * (waits that came due while no process ran), aims its timer at the next wakeAt (the store's, and
 * one this process saved since), sweeps at once when nudged, never holds the process open, and
 * does nothing after stop.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessQueue } from '../../src/store/queue.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Waker } from '../../src/runtime/waker.js';
import { execution, type TempStore, tempStore, until } from './dispatch/helpers.js';

const open: Array<{ t: TempStore; waker: Waker }> = [];
afterEach(async () => {
  for (const { t, waker } of open.splice(0)) {
    await waker.stop();
    await t.close();
  }
});

/** An execution saved `waiting` until `wakeAt` (as a run that reached core.wait saves it). */
async function waiting(t: TempStore, wakeAt: Date | undefined): Promise<string> {
  const e = execution('w');
  await t.store.enqueue([e]);
  const record = (await t.store.markRunning(e.id, 1))!;
  await t.store.saveExecution(
    { ...record, status: 'waiting', ...(wakeAt ? { wakeAt: wakeAt.toISOString() } : {}), waitingFor: { step: 'pause', kind: 'time' } },
    { stored: true },
  );
  return e.id;
}

async function setup(maxDelayMs: number) {
  const t = await tempStore();
  const queue = new InProcessQueue(t.store as SqliteStore);
  const waker = new Waker({ queue, store: t.store, maxDelayMs });
  open.push({ t, waker });
  const taken = () => {
    const ids: string[] = [];
    for (let job = queue.take(() => true); job; job = queue.take(() => true)) ids.push(job.id);
    return ids;
  };
  return { t, queue, waker, taken };
}

describe('Waker', () => {
  it('wakes at start what came due while no process ran, as the same attempt', async () => {
    const { t, waker, taken } = await setup(60_000);
    const id = await waiting(t, new Date(Date.now() - 5000));
    waker.start();
    const ids = await until(() => {
      const got = taken();
      return got.length ? got : undefined;
    }, 'the wake-up at start');
    expect(ids).toEqual([id]);
    expect((await t.store.getExecution(id))?.status).toBe('queued');
  });

  it('aims its timer at a wakeAt this process saved, far inside the longest delay', async () => {
    const { t, waker, taken } = await setup(60_000);
    waker.start();
    await new Promise((r) => setTimeout(r, 50));
    const wakeAt = new Date(Date.now() + 300);
    const id = await waiting(t, wakeAt);
    waker.noteWakeAt(wakeAt.toISOString());
    const ids = await until(() => {
      const got = taken();
      return got.length ? got : undefined;
    }, 'the wake-up');
    expect(ids).toEqual([id]);
    expect(Date.now()).toBeGreaterThanOrEqual(wakeAt.getTime());
    expect(Date.now() - wakeAt.getTime()).toBeLessThan(1000);
  });

  it('reads the next wakeAt from the store after a sweep (waits other processes saved)', async () => {
    const { t, waker, taken } = await setup(60_000);
    const id = await waiting(t, new Date(Date.now() + 400));
    waker.start();
    const ids = await until(() => {
      const got = taken();
      return got.length ? got : undefined;
    }, 'the wake-up');
    expect(ids).toEqual([id]);
  });

  it('sweeps at once when nudged (a callback request made its execution due)', async () => {
    const { t, waker, taken } = await setup(60_000);
    waker.start();
    await new Promise((r) => setTimeout(r, 50));
    const id = await waiting(t, new Date(Date.now() - 1));
    waker.nudge();
    const ids = await until(() => {
      const got = taken();
      return got.length ? got : undefined;
    }, 'the nudged sweep');
    expect(ids).toEqual([id]);
  });

  it('does not hold the process open, and wakes nothing after stop', async () => {
    const { t, waker, taken } = await setup(100);
    waker.start();
    await new Promise((r) => setTimeout(r, 50));
    const timer = (waker as unknown as { timer?: NodeJS.Timeout }).timer;
    expect(timer?.hasRef()).toBe(false);
    await waker.stop();
    const id = await waiting(t, new Date(Date.now() + 50));
    waker.noteWakeAt(new Date(Date.now() + 50).toISOString());
    waker.nudge();
    await new Promise((r) => setTimeout(r, 400));
    expect(taken()).toEqual([]);
    expect((await t.store.getExecution(id))?.status).toBe('waiting');
  });
});
