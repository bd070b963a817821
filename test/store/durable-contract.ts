/**
 * The durable-execution part of the store contract (store-contract.ts runs it on SQLite and
 * PostgreSQL): waiting rows and their wake-ups, callback tokens, cancel, retries. Each test's
 * waiting rows wake at times of their own year and are cancelled or woken before it ends, so the
 * waker's global answers (wakeDue, nextWakeAt) see only the rows of the test that asks.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { CallbackRequest } from '../../src/engine/durable.js';
import type { ExecutionRecord, StepRecord } from '../../src/engine/record.js';
import type { NewExecution, Store } from '../../src/store/types.js';

let seq = 0;
const name = (prefix: string) => `${prefix}-${++seq}-${randomUUID().slice(0, 8)}`;
const exec = (integration: string, extra: Partial<NewExecution> = {}): NewExecution => ({
  id: randomUUID(),
  integration,
  trigger: { body: { n: seq } },
  test: false,
  ...extra,
});
/** `seconds` after the start of `year` (UTC), as ISO text. */
const time = (year: number, seconds: number) => new Date(Date.UTC(year, 0, 1) + seconds * 1000).toISOString();
const token = () => randomBytes(32).toString('base64url');
const request = (body: unknown): CallbackRequest => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  queryParameters: { a: ['1', '2'] },
  body,
  receivedAt: new Date().toISOString(),
});
const waitStep = (wakeAt?: string, callback?: string): StepRecord => ({
  id: 'pause',
  action: 'core.wait',
  status: 'waiting',
  startedAt: new Date().toISOString(),
  ...(wakeAt ? { wakeAt } : {}),
  ...(callback ? { callback } : {}),
});
const done: StepRecord = { id: 'first', action: 'hcm.update', status: 'succeeded', results: { ok: true }, startedAt: time(2000, 0) };

/** Enqueued, run (attempt 1 unless given), and saved `waiting` as the runtime does at a core.wait. */
async function waiting(
  store: Store,
  integration: string,
  wakeAt: string | undefined,
  callback?: string,
  attempt = 1,
  id: string = randomUUID(),
): Promise<ExecutionRecord> {
  const e = exec(integration, { attempt, id });
  await store.enqueue([e]);
  const r = (await store.markRunning(e.id, attempt))!;
  const record: ExecutionRecord = {
    ...r,
    status: 'waiting',
    steps: [done, waitStep(wakeAt, callback)],
    ...(wakeAt ? { wakeAt } : {}),
    waitingFor: { step: 'pause', kind: callback ? 'callback' : 'time' },
  };
  await store.saveExecution(record, { stored: true });
  return record;
}

export function describeDurableContract(store: () => Store, second: () => Promise<Store>): void {
  it('wakes waiting executions whose time came, oldest wake-up first, at most the limit, each once; counts and lists them', async () => {
    const integ = name('wait');
    const y = 2001;
    // Ids in the reverse order of the wake-ups: the order is the time's.
    const later = await waiting(store(), integ, time(y, 3), undefined, 1, `${integ}-a`);
    const first = await waiting(store(), integ, time(y, 1), undefined, 1, `${integ}-c`);
    const middle = await waiting(store(), integ, time(y, 2), undefined, 1, `${integ}-b`);
    const far = await waiting(store(), integ, time(y, 100));
    const onCallback = await waiting(store(), integ, undefined, token());

    expect(await store().countWaiting(integ)).toBe(5);
    expect(await store().countWaiting(name('none'))).toBe(0);
    expect((await store().countByStatus()).waiting).toBeGreaterThanOrEqual(5);
    expect(await store().nextWakeAt()).toBe(time(y, 1));
    const listed = await store().listExecutions({ integration: integ, status: 'waiting' });
    expect(listed.map((s) => s.id).sort()).toEqual([later, first, middle, far, onCallback].map((r) => r.id).sort());
    expect(listed.find((s) => s.id === far.id)!.wakeAt).toBe(time(y, 100));
    expect((await store().getExecution(first.id))!).toMatchObject({ status: 'waiting', wakeAt: time(y, 1) });
    // Not a crash's leftover: recovery leaves waiting executions to the waker.
    expect((await store().unfinishedExecutions()).some((r) => r.integration === integ)).toBe(false);

    expect(await store().wakeDue(new Date(time(y, 0)), 10)).toEqual([]);
    const one = await store().wakeDue(new Date(time(y, 2.5)), 1);
    expect(one.map((r) => r.id)).toEqual([first.id]);
    // Queued again, same attempt, its steps kept for the resume, no wake-up any more.
    expect(one[0]).toMatchObject({
      status: 'queued',
      attempt: 1,
      steps: [done, { id: 'pause', status: 'waiting', wakeAt: time(y, 1) }],
      waitingFor: { step: 'pause', kind: 'time' },
    });
    expect(one[0]!.wakeAt).toBeUndefined();
    expect((await store().wakeDue(new Date(time(y, 5)), 10)).map((r) => r.id)).toEqual([middle.id, later.id]);
    expect(await store().wakeDue(new Date(time(y, 5)), 10)).toEqual([]);
    expect(await store().nextWakeAt()).toBe(time(y, 100));
    expect(await store().countWaiting(integ)).toBe(2);
    expect((await store().getExecution(first.id))!).toMatchObject({ status: 'queued' });
    expect((await store().getExecution(first.id))!.wakeAt).toBeUndefined();

    // The woken one runs on: markRunning keeps its steps and drops what only a waiting record has.
    const running = (await store().markRunning(first.id, 1))!;
    expect(running).toMatchObject({ status: 'running', attempt: 1, steps: [{ id: 'first', status: 'succeeded' }, { id: 'pause' }] });
    expect(running.wakeAt).toBeUndefined();
    expect(running.waitingFor).toBeUndefined();
    // Saving it in any other status clears the wake-up column: the waker never picks it.
    await store().saveExecution({ ...running, wakeAt: time(y, 1) }, { stored: true });
    expect(await store().wakeDue(new Date(time(y, 5)), 10)).toEqual([]);
    expect((await store().getExecution(first.id))!.wakeAt).toBeUndefined();

    for (const r of [far, onCallback]) expect((await store().cancelExecution(r.id, new Date())).outcome).toBe('cancelled');
    expect(await store().countWaiting(integ)).toBe(0);
    expect(await store().nextWakeAt()).toBeUndefined();
  });

  it('wakes each due execution exactly once when two instances sweep at the same time', async () => {
    const integ = name('wake-race');
    const y = 2002;
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => waiting(store(), integ, time(y, i))));
    const other = await second();
    const woken: string[] = [];
    // Sweeps until nothing is due: concurrent wakers may each come back short while the other holds rows.
    for (let round = 0; round < 20; round++) {
      const got = await Promise.all([store(), other, store(), other].map((s) => s.wakeDue(new Date(time(y, 60)), 4)));
      const ids = got.flat().map((r) => r.id);
      woken.push(...ids);
      if (ids.length === 0) break;
    }
    expect(woken).toHaveLength(20);
    expect(new Set(woken).size).toBe(20);
    expect(woken.sort()).toEqual(all.map((r) => r.id).sort());
    expect(await store().countWaiting(integ)).toBe(0);
  });

  it('callbacks: the first request is accepted and wakes its waiting execution; then used; unknown and expired tokens are unknown', async () => {
    const integ = name('callback');
    const t = token();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 7 * 86_400_000).toISOString();
    const w = await waiting(store(), integ, undefined, t);
    await store().createCallback({ token: t, executionId: w.id, integration: integ, step: 'wait-here', test: true, expiresAt });
    expect(await store().getCallback(t)).toEqual({ token: t, executionId: w.id, integration: integ, step: 'wait-here', test: true, expiresAt });
    // Waiting for a callback only: no time wakes it.
    expect((await store().wakeDue(now, 100)).some((r) => r.id === w.id)).toBe(false);

    const req = request({ approved: true, note: 'ż "q"' });
    expect(await store().receiveCallback(t, req, now)).toEqual({ outcome: 'accepted', executionId: w.id });
    expect(await store().getCallback(t)).toEqual({
      token: t,
      executionId: w.id,
      integration: integ,
      step: 'wait-here',
      test: true,
      expiresAt,
      request: req,
      receivedAt: now.toISOString(),
    });
    // In the same commit the execution became due now.
    expect((await store().getExecution(w.id))!).toMatchObject({ status: 'waiting', wakeAt: now.toISOString() });
    expect(await store().receiveCallback(t, request({ again: true }), new Date(now.getTime() + 1000))).toEqual({
      outcome: 'used',
      executionId: w.id,
    });
    expect((await store().getCallback(t))!.request).toEqual(req);
    expect(await store().receiveCallback(token(), req, now)).toEqual({ outcome: 'unknown' });
    // Past its expiry a token is unknown, used or not.
    expect(await store().receiveCallback(t, req, new Date(Date.parse(expiresAt) + 1))).toEqual({ outcome: 'unknown' });
    const old = token();
    const w2 = await waiting(store(), integ, undefined, old);
    await store().createCallback({ token: old, executionId: w2.id, integration: integ, step: 's', test: false, expiresAt: now.toISOString() });
    expect(await store().receiveCallback(old, req, now)).toEqual({ outcome: 'unknown' });
    expect((await store().getCallback(old))!.request).toBeUndefined();

    const woke = await store().wakeDue(now, 100);
    expect(woke.filter((r) => r.integration === integ).map((r) => r.id)).toEqual([w.id]);
    expect(await store().wakeDue(now, 100)).toEqual([]);

    // Pruned once expired, with their requests.
    expect(await store().pruneCallbacks(now)).toBeGreaterThanOrEqual(1);
    expect(await store().getCallback(old)).toBeUndefined();
    expect(await store().getCallback(t)).toBeDefined();
    expect(await store().pruneCallbacks(new Date(Date.parse(expiresAt) + 1))).toBeGreaterThanOrEqual(1);
    expect(await store().getCallback(t)).toBeUndefined();
    expect((await store().cancelExecution(w2.id, now)).outcome).toBe('cancelled');
  });

  it('a request that came while the execution still ran toward its wait is kept, and wakes it once it waits', async () => {
    const integ = name('callback-race');
    const t = token();
    const now = new Date();
    const e = exec(integ);
    await store().enqueue([e]);
    const running = (await store().markRunning(e.id, 1))!;
    const expiresAt = new Date(now.getTime() + 86_400_000).toISOString();
    await store().createCallback({ token: t, executionId: e.id, integration: integ, step: 'cb', test: false, expiresAt });
    const req = request({ early: true });
    expect(await store().receiveCallback(t, req, now)).toEqual({ outcome: 'accepted', executionId: e.id });
    // Running: nothing to wake, and the request waits for it.
    expect((await store().getExecution(e.id))!.status).toBe('running');
    expect(await store().wakeDue(now, 100)).toEqual([]);

    // It reaches its wait after the request came: the waker's safety net wakes it at once, even
    // though its own wake-up (the wait's timeout) is far away.
    const far = new Date(now.getTime() + 3_600_000).toISOString();
    await store().saveExecution({ ...running, status: 'waiting', wakeAt: far, steps: [waitStep(far, t)] }, { stored: true });
    expect(await store().nextWakeAt()).toBe(far);
    const woke = await store().wakeDue(now, 100);
    expect(woke.map((r) => r.id)).toEqual([e.id]);
    expect((await store().getCallback(t))!.request).toEqual(req);

    // That request has woken it: waiting again (for something else), it is not woken for it again.
    const again = (await store().markRunning(e.id, 1))!;
    await store().saveExecution({ ...again, status: 'waiting', wakeAt: far, steps: [waitStep(far)] }, { stored: true });
    expect(await store().wakeDue(now, 100)).toEqual([]);
    expect((await store().wakeDue(new Date(Date.parse(far) + 1), 100)).map((r) => r.id)).toEqual([e.id]);
  });

  it('concurrent requests to one callback, on two instances: exactly one is accepted', async () => {
    const integ = name('callback-many');
    const t = token();
    const w = await waiting(store(), integ, undefined, t);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    await store().createCallback({ token: t, executionId: w.id, integration: integ, step: 'cb', test: false, expiresAt });
    const other = await second();
    const receipts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store()).receiveCallback(t, request({ i }), new Date())),
    );
    expect(receipts.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
    expect(receipts.filter((r) => r.outcome === 'used')).toHaveLength(19);
    const accepted = receipts.findIndex((r) => r.outcome === 'accepted');
    expect((await store().getCallback(t))!.request!.body).toEqual({ i: accepted });
    expect((await store().wakeDue(new Date(), 100)).map((r) => r.id)).toEqual([w.id]);
  });

  it('cancel: queued and waiting are cancelled at once and never run; running gets the flag a save keeps; finished and unknown say so', async () => {
    const integ = name('cancel');
    const past = new Date(Date.now() - 3 * 86_400_000);
    const queued = exec(integ);
    await store().enqueue([queued]);
    const w = await waiting(store(), integ, time(2003, 1));
    const run = exec(integ);
    await store().enqueue([run]);
    const running = (await store().markRunning(run.id, 1))!;

    const c1 = await store().cancelExecution(queued.id, past);
    expect(c1).toMatchObject({ outcome: 'cancelled', record: { id: queued.id, status: 'cancelled', finishedAt: past.toISOString() } });
    expect(await store().markRunning(queued.id, 1)).toBeUndefined();
    expect((await store().unfinishedExecutions()).some((r) => r.id === queued.id)).toBe(false);

    const c2 = await store().cancelExecution(w.id, past);
    expect(c2).toMatchObject({ outcome: 'cancelled', record: { id: w.id, status: 'cancelled' } });
    expect(c2.outcome === 'cancelled' && c2.record.wakeAt).toBeUndefined();
    expect(await store().wakeDue(new Date(time(2003, 10)), 100)).toEqual([]);

    const c3 = await store().cancelExecution(run.id, new Date());
    expect(c3).toMatchObject({ outcome: 'requested', record: { id: run.id, status: 'running', cancelRequested: true } });
    expect((await store().cancelRequested([run.id, queued.id, w.id, 'no-such-id'])).sort()).toEqual([run.id]);
    expect(await store().cancelRequested([])).toEqual([]);
    // The running process's checkpoint does not know of the cancel: it must not clear the flag.
    await store().saveExecution({ ...running, steps: [done] }, { stored: true });
    await store().saveExecution({ ...running, steps: [done] });
    expect(await store().cancelRequested([run.id])).toEqual([run.id]);
    expect((await store().getExecution(run.id))!.cancelRequested).toBe(true);
    // Its own final save decides how it ended.
    await store().saveExecution({ ...running, status: 'cancelled', finishedAt: past.toISOString() }, { stored: true });
    expect((await store().cancelExecution(run.id, new Date())).outcome).toBe('finished');
    expect((await store().cancelExecution(queued.id, new Date())).outcome).toBe('finished');
    expect(await store().cancelExecution('no-such-id', new Date())).toEqual({ outcome: 'unknown' });

    expect((await store().listExecutions({ integration: integ, status: 'cancelled' })).map((s) => s.id).sort()).toEqual(
      [queued.id, w.id, run.id].sort(),
    );
    expect((await store().countByStatus()).cancelled).toBeGreaterThanOrEqual(3);
    // Cancelled executions are finished: retention prunes them.
    expect(await store().pruneExecutions(new Date(Date.now() - 86_400_000))).toBeGreaterThanOrEqual(3);
    for (const id of [queued.id, w.id, run.id]) expect(await store().getExecution(id)).toBeUndefined();
  });

  it('a retry keeps what it retries and the steps it resumes from, through enqueue, markRunning and saves; lists filter by since', async () => {
    const integ = name('retry');
    const original = randomUUID();
    const r1 = exec(integ, { retryOf: original, steps: [done], queuedAt: time(2004, 10) });
    const r2 = exec(integ, { queuedAt: time(2004, 20) });
    await store().enqueue([r1, r2]);
    expect((await store().getExecution(r1.id))!).toMatchObject({ status: 'queued', attempt: 1, retryOf: original, steps: [done] });
    expect((await store().getExecution(r2.id))!.retryOf).toBeUndefined();
    const once = exec(integ, { retryOf: original, queuedAt: time(2004, 30) });
    await store().enqueueOnce(once, { key: `k-${randomUUID()}`, windowMs: 60_000 });
    expect((await store().getExecution(once.id))!.retryOf).toBe(original);

    const running = (await store().markRunning(r1.id, 1))!;
    expect(running).toMatchObject({ retryOf: original, steps: [done] });
    // Saves write what a run changes; what it retries was set when it was created.
    const { retryOf: _r, ...without } = running;
    await store().saveExecution({ ...without, status: 'succeeded', finishedAt: new Date().toISOString() }, { stored: true });
    expect((await store().getExecution(r1.id))!.retryOf).toBe(original);

    const summaries = await store().listExecutions({ integration: integ });
    expect(summaries.find((s) => s.id === r1.id)!.retryOf).toBe(original);
    expect(summaries.find((s) => s.id === r2.id)!.retryOf).toBeUndefined();
    expect((await store().listExecutions({ integration: integ, since: time(2004, 20) })).map((s) => s.id)).toEqual([once.id, r2.id]);
    expect((await store().listExecutions({ integration: integ, since: time(2004, 11), before: time(2004, 30) })).map((s) => s.id)).toEqual([r2.id]);
  });
  it('retriesOf: each original with its retries, oldest first; originals without any are absent; many ids at once', async () => {
    const integ = name('retries-of');
    const a = randomUUID();
    const b = randomUUID();
    const never = randomUUID();
    const a2 = exec(integ, { retryOf: a, queuedAt: time(2005, 20) });
    const a1 = exec(integ, { retryOf: a, queuedAt: time(2005, 10) });
    const b1 = exec(integ, { retryOf: b, queuedAt: time(2005, 30) });
    const plain = exec(integ, { queuedAt: time(2005, 40) });
    await store().enqueue([a2, a1, b1, plain]);
    const got = await store().retriesOf([a, b, never, a, plain.id]);
    expect([...got.entries()].sort()).toEqual(
      [
        [a, [a1.id, a2.id]],
        [b, [b1.id]],
      ].sort(),
    );
    expect(await store().retriesOf([])).toEqual(new Map());
    // More ids than one statement takes: every chunk is asked.
    const many = Array.from({ length: 1200 }, () => randomUUID());
    const late = exec(integ, { retryOf: many[1100]!, queuedAt: time(2005, 50) });
    await store().enqueue([late]);
    expect(await store().retriesOf(many)).toEqual(new Map([[many[1100]!, [late.id]]]));
  });
}
