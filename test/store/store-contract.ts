/**
 * The one behavioural suite every Store implementation must pass (SQLite and PostgreSQL).
 * Each implementation's test file calls `describeStoreContract` with a harness that opens
 * instances on ONE location (a data dir / a schema): opening again = a restart or a replica.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../src/engine/record.js';
import type { StoreStats } from '../../src/store/stats.js';
import type { NewExecution, Store } from '../../src/store/types.js';
import { describeDurableContract } from './durable-contract.js';

export type TestStore = Store & { readonly stats: StoreStats };

export interface StoreHarness {
  /** Opens a new instance on the suite's location (same data every time). */
  open(): Promise<TestStore>;
  /** Everything stored in the tokens table, as raw text. */
  rawTokens(store: TestStore): Promise<string>;
  /** Whether TokenStore.withLock also excludes other instances (PostgreSQL). */
  crossInstanceLock: boolean;
}

let seq = 0;
const name = (prefix: string) => `${prefix}-${++seq}-${randomUUID().slice(0, 8)}`;
const exec = (integration: string, extra: Partial<NewExecution> = {}): NewExecution => ({
  id: randomUUID(),
  integration,
  trigger: { body: { n: seq }, headers: { 'content-type': 'application/json' } },
  test: false,
  ...extra,
});
const at = (ms: number) => new Date(Date.UTC(2024, 0, 1) + ms).toISOString();

export function describeStoreContract(label: string, h: StoreHarness): void {
  describe(`Store contract: ${label}`, () => {
    let store: TestStore;
    const others: TestStore[] = [];
    const second = async () => {
      const s = await h.open();
      others.push(s);
      return s;
    };
    const reopen = async () => {
      await store.close();
      store = await h.open();
    };

    beforeAll(async () => {
      store = await h.open();
    });
    afterAll(async () => {
      await Promise.allSettled(others.map((s) => s.close()));
      await store?.close();
    });

    it('runs an execution through queued → running → progress → final', async () => {
      const integ = name('life');
      const e = exec(integ, { test: true });
      await store.enqueue([e]);
      const queued = await store.getExecution(e.id);
      expect(queued).toMatchObject({
        id: e.id,
        integration: integ,
        status: 'queued',
        test: true,
        attempt: 1,
        trigger: e.trigger,
        steps: [],
        log: [],
      });
      expect(queued!.queuedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

      const running = await store.markRunning(e.id, 1);
      expect(running).toMatchObject({ id: e.id, status: 'running', attempt: 1, trigger: e.trigger });
      expect(running!.startedAt).toBeTruthy();
      expect((await store.getExecution(e.id))!.status).toBe('running');

      const progress: ExecutionRecord = {
        ...running!,
        steps: [{ id: 's1', action: 'core.transform', status: 'running', startedAt: new Date().toISOString() }],
        log: [{ at: new Date().toISOString(), level: 'info', message: 'hello' }],
      };
      await store.saveExecution(progress);
      expect((await store.getExecution(e.id))!.steps).toEqual(progress.steps);

      const finishedAt = new Date(Date.parse(running!.startedAt!) + 42).toISOString();
      const final: ExecutionRecord = {
        ...progress,
        status: 'succeeded',
        steps: [{ ...progress.steps[0]!, status: 'succeeded', results: { ok: 1 }, finishedAt, durationMs: 42 }],
        result: { ok: 1 },
        finishedAt,
        durationMs: 42,
      };
      await store.saveExecution(final);
      const got = await store.getExecution(e.id);
      expect(got).toEqual({ ...final, queuedAt: queued!.queuedAt });

      const [summary] = await store.listExecutions({ integration: integ });
      expect(summary).toEqual({
        id: e.id,
        integration: integ,
        status: 'succeeded',
        test: true,
        attempt: 1,
        queuedAt: queued!.queuedAt,
        startedAt: running!.startedAt,
        finishedAt,
        durationMs: 42,
      });
      // A finished execution is not started again.
      expect(await store.markRunning(e.id, 2)).toBeUndefined();
      expect(await store.markRunning('no-such-id', 1)).toBeUndefined();
      expect(await store.getExecution('no-such-id')).toBeUndefined();
    });

    it('keeps a failed execution’s error in the list', async () => {
      const integ = name('fail');
      const e = exec(integ);
      await store.enqueue([e]);
      const r = (await store.markRunning(e.id, 1))!;
      await store.saveExecution({ ...r, status: 'failed', error: { message: 'boom in step s1' }, finishedAt: new Date().toISOString() });
      const [s] = await store.listExecutions({ integration: integ });
      expect(s!.error).toEqual({ message: 'boom in step s1' });
      expect((await store.getExecution(e.id))!.error).toEqual({ message: 'boom in step s1' });
    });

    it('group-commits 500 concurrent enqueues, all durable after reopening', async () => {
      const integ = name('bulk');
      const before = { ...store.stats };
      const all = Array.from({ length: 500 }, () => exec(integ));
      await Promise.all(all.map((e) => store.enqueue([e])));
      const calls = store.stats.enqueueCalls - before.enqueueCalls;
      const commits = store.stats.enqueueCommits - before.enqueueCommits;
      expect(calls).toBe(500);
      expect(commits).toBeGreaterThan(0);
      expect(commits).toBeLessThan(calls);

      await reopen();
      const listed = await store.listExecutions({ integration: integ, limit: 10_000 });
      expect(listed).toHaveLength(500);
      expect(new Set(listed.map((s) => s.id))).toEqual(new Set(all.map((e) => e.id)));
      expect((await store.countByStatus()).queued).toBeGreaterThanOrEqual(500);
    });

    it('rejects only the bad caller of a batch', async () => {
      const integ = name('dup');
      const first = exec(integ);
      await store.enqueue([first]);
      const good = [exec(integ), exec(integ)];
      const results = await Promise.allSettled([
        store.enqueue([good[0]!]),
        store.enqueue([{ ...first }]), // duplicate id
        store.enqueue([good[1]!]),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await store.listExecutions({ integration: integ })).toHaveLength(3);
    });

    it('keeps nothing of a failing write made of several statements, and all of the writes batched with it', async () => {
      const integ = name('dup-poll');
      const first = exec(integ);
      await store.enqueue([first]);
      const good = [exec(integ), exec(integ)];
      const fresh = exec(integ);
      const results = await Promise.allSettled([
        store.enqueue([good[0]!]),
        // Seen keys and a new execution are written, then the duplicate id fails the poll commit.
        store.commitPoll(integ, ['q1', 'q2'], 100, [fresh, { ...first }]),
        store.enqueue([good[1]!]),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const seen = await store.seenKeys(integ);
      expect(seen.has('q1') || seen.has('q2')).toBe(false);
      expect(await store.getExecution(fresh.id)).toBeUndefined();
      expect((await store.listExecutions({ integration: integ })).map((s) => s.id).sort()).toEqual([first.id, good[0]!.id, good[1]!.id].sort());
    });

    it('lists newest first with filters, paging and limits', async () => {
      const integ = name('list');
      const other = name('list-other');
      const es = Array.from({ length: 60 }, (_, i) => exec(integ, { id: `${integ}-${String(i).padStart(3, '0')}`, queuedAt: at(i * 1000) }));
      await store.enqueue(es);
      await store.enqueue([exec(other, { queuedAt: at(5) })]);
      // Two with the same queuedAt: ordered by id, descending.
      await store.enqueue([exec(integ, { id: `${integ}-zz`, queuedAt: at(59_000) })]);

      const page = await store.listExecutions({ integration: integ });
      expect(page).toHaveLength(50);
      expect(page[0]!.id).toBe(`${integ}-zz`);
      expect(page[1]!.id).toBe(`${integ}-059`);
      expect(page.map((s) => s.queuedAt)).toEqual([...page.map((s) => s.queuedAt!)].sort().reverse());
      expect(page.every((s) => s.integration === integ)).toBe(true);

      expect((await store.listExecutions({ integration: integ, limit: 3 })).map((s) => s.id)).toEqual([
        `${integ}-zz`,
        `${integ}-059`,
        `${integ}-058`,
      ]);
      expect(await store.listExecutions({ integration: integ, limit: 1000 })).toHaveLength(61);
      expect(await store.listExecutions({ integration: integ, limit: 0 })).toHaveLength(1);
      const older = await store.listExecutions({ integration: integ, before: at(10_000), limit: 500 });
      expect(older.map((s) => s.id)).toEqual(Array.from({ length: 10 }, (_, i) => `${integ}-${String(9 - i).padStart(3, '0')}`));

      const r = (await store.markRunning(`${integ}-003`, 1))!;
      await store.saveExecution({ ...r, status: 'succeeded', finishedAt: new Date().toISOString() });
      await store.markRunning(`${integ}-004`, 1);
      expect((await store.listExecutions({ integration: integ, status: 'succeeded' })).map((s) => s.id)).toEqual([`${integ}-003`]);
      expect((await store.listExecutions({ integration: integ, status: 'running' })).map((s) => s.id)).toEqual([`${integ}-004`]);
      expect((await store.listExecutions({ status: 'queued', limit: 500 })).every((s) => s.status === 'queued')).toBe(true);
      expect(await store.listExecutions({ limit: 100_000 })).toHaveLength(500);
      await expect(store.listExecutions({ status: 'bogus' as never })).rejects.toThrow(/status/);
    });

    it('keeps the correlation key and the version that ran as columns: filtered by key, shown in summaries, kept by every save', async () => {
      const a = name('corr-a');
      const b = name('corr-b');
      const key = `W-${randomUUID()}`;
      const v1 = { sha256: 'a'.repeat(64), commit: 'c'.repeat(40) };
      const first = exec(a, { correlationKey: key, queuedAt: at(1000) });
      const second = exec(b, { correlationKey: key, queuedAt: at(2000) });
      const otherKey = exec(a, { correlationKey: `${key}-other`, queuedAt: at(3000) });
      const none = exec(a, { queuedAt: at(4000) });
      await store.enqueue([first, second, otherKey, none]);

      // Exact match, across integrations, newest first; combined with the other filters.
      expect((await store.listExecutions({ correlation: key })).map((s) => s.id)).toEqual([second.id, first.id]);
      expect((await store.listExecutions({ correlation: key, integration: a })).map((s) => s.id)).toEqual([first.id]);
      expect(await store.listExecutions({ correlation: key.slice(0, -1) })).toEqual([]);
      expect((await store.listExecutions({ integration: a })).find((s) => s.id === none.id)!.correlationKey).toBeUndefined();
      expect((await store.getExecution(first.id))!.correlationKey).toBe(key);

      // A run (markRunning, then a save of the stored row, as the dispatcher does) records its version.
      const running = (await store.markRunning(first.id, 1))!;
      expect(running.correlationKey).toBe(key);
      await store.saveExecution({ ...running, version: v1, status: 'succeeded', finishedAt: new Date().toISOString() }, { stored: true });
      const [summary] = await store.listExecutions({ correlation: key, integration: a });
      expect(summary).toMatchObject({ id: first.id, status: 'succeeded', correlationKey: key, version: v1 });
      expect((await store.getExecution(first.id))!.version).toEqual(v1);

      // Saves of several runs at once (group-committed) and a run saved without a row (a synchronous run).
      const v2 = { sha256: 'b'.repeat(64) };
      const runs = await Promise.all([second, otherKey].map((e) => store.markRunning(e.id, 1)));
      const sync = { ...(await store.getExecution(none.id))!, id: randomUUID(), correlationKey: key, queuedAt: at(5000) };
      await Promise.all([
        ...runs.map((r) => store.saveExecution({ ...r!, version: v2, status: 'failed', finishedAt: new Date().toISOString() }, { stored: true })),
        store.saveExecution({ ...sync, version: v2, status: 'succeeded', finishedAt: new Date().toISOString() }),
      ]);
      const byKey = await store.listExecutions({ correlation: key });
      expect(byKey.map((s) => [s.id, s.status, s.version])).toEqual([
        [sync.id, 'succeeded', v2],
        [second.id, 'failed', v2],
        [first.id, 'succeeded', v1],
      ]);
      // After a restart (the columns, not a cache).
      await reopen();
      expect((await store.listExecutions({ correlation: `${key}-other` })).map((s) => [s.id, s.version])).toEqual([[otherKey.id, v2]]);
    });

    it('finds unfinished executions after a crash, oldest first, and resumes them', async () => {
      const integ = name('crash');
      const [a, b, c] = [exec(integ, { queuedAt: at(1) }), exec(integ, { queuedAt: at(2) }), exec(integ, { queuedAt: at(3) })];
      await store.enqueue([c, a, b]);
      await store.markRunning(b.id, 1);
      const rc = (await store.markRunning(c.id, 1))!;
      await store.saveExecution({ ...rc, steps: [{ id: 'x', action: 'a', status: 'running', startedAt: rc.startedAt! }] });
      const done = exec(integ, { queuedAt: at(0) });
      await store.enqueue([done]);
      const rd = (await store.markRunning(done.id, 1))!;
      await store.saveExecution({ ...rd, status: 'succeeded', finishedAt: new Date().toISOString() });

      await reopen(); // "crash": nothing finished them
      const left = (await store.unfinishedExecutions()).filter((r) => r.integration === integ);
      expect(left.map((r) => [r.id, r.status])).toEqual([
        [a.id, 'queued'],
        [b.id, 'running'],
        [c.id, 'running'],
      ]);
      expect(left[2]!.trigger).toEqual(c.trigger);
      // The next attempt resumes from the stored steps (the engine runs the one that was running again).
      const again = (await store.markRunning(c.id, 2))!;
      expect(again).toMatchObject({ status: 'running', attempt: 2, steps: [{ id: 'x', status: 'running' }] });
      expect((await store.getExecution(c.id))!.attempt).toBe(2);
    });

    it('prunes finished executions older than a date', async () => {
      const integ = name('prune');
      const old = exec(integ);
      const recent = exec(integ);
      const running = exec(integ);
      await store.enqueue([old, recent, running]);
      for (const [e, finishedAt, status] of [
        [old, new Date(Date.now() - 3 * 86_400_000), 'failed'],
        [recent, new Date(), 'succeeded'],
      ] as const) {
        const r = (await store.markRunning(e.id, 1))!;
        await store.saveExecution({ ...r, status, finishedAt: finishedAt.toISOString(), error: status === 'failed' ? { message: 'x' } : undefined });
      }
      await store.markRunning(running.id, 1);
      const n = await store.pruneExecutions(new Date(Date.now() - 86_400_000));
      expect(n).toBeGreaterThanOrEqual(1);
      expect(await store.getExecution(old.id)).toBeUndefined();
      expect(await store.getExecution(recent.id)).toBeDefined();
      expect(await store.getExecution(running.id)).toBeDefined();
      expect(await store.pruneExecutions(new Date(Date.now() - 86_400_000))).toBe(0);
    });

    it('keeps webhook tokens stable across restarts and rotates them', async () => {
      const integ = name('hook');
      const [t1, t1b] = await Promise.all([store.webhookToken(integ), store.webhookToken(integ)]);
      expect(t1).toBe(t1b);
      expect(t1).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
      expect(await store.webhookToken(name('hook'))).not.toBe(t1);
      await reopen();
      expect(await store.webhookToken(integ)).toBe(t1);
      expect(await store.integrationForToken(t1)).toBe(integ);
      const t2 = await store.rotateWebhookToken(integ);
      expect(t2).not.toBe(t1);
      expect(await store.webhookToken(integ)).toBe(t2);
      expect(await store.integrationForToken(t2)).toBe(integ);
      expect(await store.integrationForToken(t1)).toBeUndefined();
      expect(await store.integrationForToken('nope')).toBeUndefined();
    });

    it('tracks listening mode and keeps a bounded list of captures', async () => {
      const integ = name('listen');
      expect(await store.isListening(integ)).toBe(false);
      await store.setListening(integ, true);
      await store.setListening(integ, true);
      expect(await store.isListening(integ)).toBe(true);
      expect(await store.listeningIntegrations()).toContain(integ);
      await store.setListening(integ, false);
      expect(await store.isListening(integ)).toBe(false);
      expect(await store.listeningIntegrations()).not.toContain(integ);

      for (let i = 0; i < 7; i++) {
        await store.addCapture({ id: `c${i}`, integration: integ, receivedAt: at(i), trigger: { i } }, { keep: 5 });
      }
      const caps = await store.listCaptures(integ);
      expect(caps.map((c) => c.id)).toEqual(['c6', 'c5', 'c4', 'c3', 'c2']);
      expect(caps[0]).toEqual({ id: 'c6', integration: integ, receivedAt: at(6), trigger: { i: 6 }, size: 7, truncated: false });
      expect((await store.listCaptures(integ, 2)).map((c) => c.id)).toEqual(['c6', 'c5']);
      expect(await store.getCapture(integ, 'c4')).toEqual({
        id: 'c4',
        integration: integ,
        receivedAt: at(4),
        trigger: { i: 4 },
        size: 7,
        truncated: false,
      });
      expect(await store.getCapture(integ, 'c0')).toBeUndefined();
      expect(await store.getCapture(name('x'), 'c4')).toBeUndefined();

      const integ2 = name('listen-default');
      await Promise.all(Array.from({ length: 55 }, (_, i) => store.addCapture({ id: `d${i}`, integration: integ2, receivedAt: at(i), trigger: i })));
      expect(await store.listCaptures(integ2, 500)).toHaveLength(50);
    });

    it('stores a large capture cut to maxBytes with its full size; lists carry at most 64 KiB; summaries carry no body', async () => {
      const integ = name('big');
      const data = { text: 'x'.repeat(600 * 1024), n: 1 };
      const trigger = {
        method: 'POST',
        pathFragment: 'orders',
        queryParameters: { a: '1' },
        headers: { 'content-type': 'application/json' },
        body: { data, contentType: 'application/json' },
      };
      const fullSize = Buffer.byteLength(JSON.stringify(trigger));
      const announced = await store.addCapture({ id: 'big', integration: integ, receivedAt: at(1), trigger }, { maxBytes: 256 * 1024 });
      expect(announced).toMatchObject({
        id: 'big',
        integration: integ,
        receivedAt: at(1),
        size: fullSize,
        truncated: true,
        method: 'POST',
        path: '/orders?a=1',
        contentType: 'application/json',
      });
      expect(announced.preview.length).toBeLessThanOrEqual(200);
      expect(announced.preview).toMatch(/^\{"text":"xxx/);

      const stored = (await store.getCapture(integ, 'big'))!;
      expect(stored).toMatchObject({ size: fullSize, truncated: true });
      const storedBytes = Buffer.byteLength(JSON.stringify(stored.trigger));
      expect(storedBytes).toBeLessThanOrEqual(256 * 1024);
      expect(storedBytes).toBeGreaterThan(250 * 1024);
      const t = stored.trigger as typeof trigger & { body: { truncated: boolean; size: number; preview: string } };
      expect(t.method).toBe('POST');
      expect(t.headers).toEqual(trigger.headers);
      expect(t.body).toMatchObject({ contentType: 'application/json', truncated: true, size: Buffer.byteLength(JSON.stringify(data)) });
      expect(JSON.stringify(data).startsWith(t.body.preview)).toBe(true);

      const [listed] = await store.listCaptures(integ);
      expect(Buffer.byteLength(JSON.stringify(listed!.trigger))).toBeLessThanOrEqual(64 * 1024);
      expect(listed).toMatchObject({ id: 'big', size: fullSize, truncated: true });

      const [summary] = await store.captureSummaries(integ);
      expect(summary).toEqual(announced);
      expect(summary).not.toHaveProperty('trigger');

      // A small one is kept whole, and a multi-byte body is cut on a character boundary.
      await store.addCapture({
        id: 'small',
        integration: integ,
        receivedAt: at(2),
        trigger: { method: 'GET', pathFragment: '', body: { data: 'ż', contentType: 'text/plain' } },
      });
      expect((await store.getCapture(integ, 'small'))!.trigger).toEqual({
        method: 'GET',
        pathFragment: '',
        body: { data: 'ż', contentType: 'text/plain' },
      });
      await store.addCapture(
        {
          id: 'wide',
          integration: integ,
          receivedAt: at(3),
          trigger: { method: 'POST', pathFragment: '', rawBody: { data: 'ż😀'.repeat(400), contentType: 'text/plain' } },
        },
        { maxBytes: 1000 },
      );
      const wide = (await store.getCapture(integ, 'wide'))!;
      expect(Buffer.byteLength(JSON.stringify(wide.trigger))).toBeLessThanOrEqual(1000);
      expect((wide.trigger as { rawBody: { preview: string } }).rawBody.preview).toMatch(/^(ż😀)+(ż)?$/u);
    });

    it('lists summaries newest first, after a given capture (all of them when that one is gone)', async () => {
      const integ = name('after');
      for (let i = 0; i < 6; i++)
        await store.addCapture(
          { id: `s${i}`, integration: integ, receivedAt: at(i), trigger: { method: 'POST', pathFragment: `p${i}` } },
          { keep: 4 },
        );
      const ids = async (q: Parameters<Store['captureSummaries']>[1]) => (await store.captureSummaries(integ, q)).map((c) => c.id);
      expect(await ids({})).toEqual(['s5', 's4', 's3', 's2']);
      expect(await ids({ after: 's3' })).toEqual(['s5', 's4']);
      expect(await ids({ after: 's5' })).toEqual([]);
      expect(await ids({ after: 's3', limit: 1 })).toEqual(['s5']);
      expect(await ids({ after: 's0' })).toEqual(['s5', 's4', 's3', 's2']);
      expect((await store.captureSummaries(integ, { limit: 1 }))[0]).toMatchObject({
        method: 'POST',
        path: '/p5',
        size: expect.any(Number),
        truncated: false,
      });
    });

    it('latestExecutions: the newest execution of each named integration in one call', async () => {
      const a = name('latest-a');
      const b = name('latest-b');
      const none = name('latest-none');
      const ea = [exec(a, { queuedAt: at(1) }), exec(a, { queuedAt: at(3) }), exec(a, { queuedAt: at(2) })];
      const eb = [exec(b, { queuedAt: at(5) })];
      await store.enqueue([...ea, ...eb]);
      const latest = await store.latestExecutions([a, b, none, a]);
      expect([...latest.keys()].sort()).toEqual([a, b].sort());
      expect(latest.get(a)).toMatchObject({ id: ea[1]!.id, integration: a, status: 'queued', queuedAt: at(3) });
      expect(latest.get(b)).toMatchObject({ id: eb[0]!.id, queuedAt: at(5) });
      expect((await store.latestExecutions([])).size).toBe(0);
      // Many names at once (more than one statement's chunk).
      const many = Array.from({ length: 1200 }, (_, i) => `${none}-${i}`);
      expect((await store.latestExecutions([...many, b])).get(b)!.id).toBe(eb[0]!.id);
    });

    it('saves, edits, lists and deletes payloads', async () => {
      const integ = name('payload');
      const p1 = await store.savePayload(integ, 'b-sample', { body: { a: 1 } });
      expect(p1).toMatchObject({ integration: integ, name: 'b-sample', trigger: { body: { a: 1 } } });
      expect(p1.createdAt).toBe(p1.updatedAt);
      await store.savePayload(integ, 'a-sample', [1, 'two']);
      await sleep(5);
      const edited = await store.savePayload(integ, 'b-sample', { body: { a: 2 } });
      expect(edited.createdAt).toBe(p1.createdAt);
      expect(edited.updatedAt > p1.updatedAt).toBe(true);
      expect(await store.getPayload(integ, 'b-sample')).toEqual(edited);
      expect((await store.listPayloads(integ)).map((p) => [p.name, p.trigger])).toEqual([
        ['a-sample', [1, 'two']],
        ['b-sample', { body: { a: 2 } }],
      ]);
      expect(await store.deletePayload(integ, 'a-sample')).toBe(true);
      expect(await store.deletePayload(integ, 'a-sample')).toBe(false);
      expect(await store.getPayload(integ, 'a-sample')).toBeUndefined();
      expect(await store.listPayloads(integ)).toHaveLength(1);
    });

    it('keeps console sessions across restarts; a deleted or expired one stays gone', async () => {
      const [a, b, c] = [name('session'), name('session'), name('session')];
      const later = new Date(Date.now() + 3_600_000).toISOString();
      await store.addConsoleSession(a, later);
      await store.addConsoleSession(b, later);
      await store.addConsoleSession(c, new Date(Date.now() - 1000).toISOString());
      expect(await store.hasConsoleSession(a)).toBe(true);
      expect(await store.hasConsoleSession(c)).toBe(false);
      expect(await store.hasConsoleSession(name('never'))).toBe(false);
      expect(await store.deleteConsoleSession(a)).toBe(true);
      expect(await store.deleteConsoleSession(a)).toBe(false);
      await reopen();
      // Sign-out holds after a restart, and on another instance (a replica).
      expect(await store.hasConsoleSession(a)).toBe(false);
      expect(await store.hasConsoleSession(b)).toBe(true);
      expect(await (await second()).hasConsoleSession(b)).toBe(true);
      expect(await store.deleteConsoleSessions()).toBeGreaterThanOrEqual(1);
      expect(await store.hasConsoleSession(b)).toBe(false);
    });

    it('gets, sets and deletes trigger state', async () => {
      const integ = name('state');
      expect(await store.getState(integ, 'cursor')).toBeUndefined();
      await store.setState(integ, 'cursor', { since: '2024-01-01', page: 2 });
      await store.setState(integ, 'count', 3);
      await store.setState(integ, 'flag', false);
      expect(await store.getState(integ, 'cursor')).toEqual({ since: '2024-01-01', page: 2 });
      expect(await store.getState(integ, 'flag')).toBe(false);
      await store.setState(integ, 'cursor', 'next');
      expect(await store.getState(integ, 'cursor')).toBe('next');
      await reopen();
      expect(await store.getState(integ, 'count')).toBe(3);
      await store.deleteState(integ, 'count');
      expect(await store.getState(integ, 'count')).toBeUndefined();
      expect(await store.getState(integ, 'cursor')).toBe('next');
      await store.deleteState(integ);
      expect(await store.getState(integ, 'cursor')).toBeUndefined();
      expect(await store.getState(integ, 'flag')).toBeUndefined();
    });

    it('commits a poll atomically and keeps the newest maxSeen keys', async () => {
      const integ = name('poll');
      const keys = Array.from({ length: 250 }, (_, i) => `k${i}`);
      const es = [exec(integ), exec(integ)];
      await store.commitPoll(integ, keys, 100, es);
      const seen = await store.seenKeys(integ);
      expect(seen.size).toBe(100);
      expect(seen).toEqual(new Set(keys.slice(150)));
      expect((await store.listExecutions({ integration: integ })).map((s) => s.id).sort()).toEqual(es.map((e) => e.id).sort());

      // Seen again → newest; new ones push the oldest out.
      await store.commitPoll(integ, ['k150', 'n1', 'n1', 'n2'], 100, []);
      const seen2 = await store.seenKeys(integ);
      expect(seen2.size).toBe(100);
      expect(seen2.has('k150')).toBe(true);
      expect(seen2.has('n1') && seen2.has('n2')).toBe(true);
      expect(seen2.has('k151') || seen2.has('k152')).toBe(false);

      // A failing poll commit (an execution id that exists) leaves neither keys nor executions.
      const fresh = exec(integ);
      await expect(store.commitPoll(integ, ['z1', 'z2'], 100, [fresh, { ...es[0]! }])).rejects.toThrow();
      const seen3 = await store.seenKeys(integ);
      expect(seen3.has('z1') || seen3.has('z2')).toBe(false);
      expect(seen3).toEqual(seen2);
      expect(await store.getExecution(fresh.id)).toBeUndefined();
      expect(await store.seenKeys(name('none'))).toEqual(new Set());
    });

    it('claims a tick exactly once, also across instances', async () => {
      const integ = name('tick');
      const tick = at(60_000);
      const results = await Promise.all(Array.from({ length: 10 }, () => store.claimTick(integ, tick)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.claimTick(integ, at(120_000))).toBe(true);
      expect(await store.claimTick(name('tick'), tick)).toBe(true);

      const other = await second();
      expect(await other.claimTick(integ, tick)).toBe(false);
      const tick3 = at(180_000);
      const both = await Promise.all([
        ...Array.from({ length: 10 }, () => store.claimTick(integ, tick3)),
        ...Array.from({ length: 10 }, () => other.claimTick(integ, tick3)),
      ]);
      expect(both.filter(Boolean)).toHaveLength(1);
    });

    it('encrypts tokens at rest', async () => {
      const key = `conn:${name('tok')}`;
      const access = `access-${randomUUID()}`;
      const refresh = `refresh-${randomUUID()}`;
      expect(await store.tokens.get(key)).toBeUndefined();
      await store.tokens.set(key, { accessToken: access, refreshToken: refresh, expiresAt: 1_700_000_000_000, tokenType: 'Bearer' });
      expect(await store.tokens.get(key)).toEqual({ accessToken: access, refreshToken: refresh, expiresAt: 1_700_000_000_000, tokenType: 'Bearer' });
      const raw = await h.rawTokens(store);
      expect(raw.length).toBeGreaterThan(0);
      expect(raw).not.toContain(access);
      expect(raw).not.toContain(refresh);
      await reopen();
      expect((await store.tokens.get(key))!.accessToken).toBe(access);
      await store.tokens.set(key, { accessToken: 'rotated' });
      expect(await store.tokens.get(key)).toEqual({ accessToken: 'rotated' });
      await store.tokens.delete(key);
      expect(await store.tokens.get(key)).toBeUndefined();
    });

    it('peek: the tokens this instance last read or wrote, no older than asked; nothing after delete', async () => {
      const key = `conn:${name('peek')}`;
      const peek = (maxAgeMs: number) => store.tokens.peek?.(key, maxAgeMs);
      expect(peek(60_000)).toBeUndefined();
      await store.tokens.set(key, { accessToken: 'first', refreshToken: 'r1' });
      expect(peek(60_000)).toEqual({ accessToken: 'first', refreshToken: 'r1' });
      expect(peek(0)).toBeUndefined();
      await store.tokens.set(key, { accessToken: 'second' });
      expect(peek(60_000)).toEqual({ accessToken: 'second' });
      await store.tokens.delete(key);
      expect(peek(60_000)).toBeUndefined();
      // Another instance's write is seen here only through get (which then refreshes peek).
      const other = await second();
      await other.tokens.set(key, { accessToken: 'elsewhere' });
      expect(peek(60_000)).toBeUndefined();
      expect(await store.tokens.get(key)).toEqual({ accessToken: 'elsewhere' });
      expect(peek(60_000)).toEqual({ accessToken: 'elsewhere' });
    });

    it('serialises withLock per key', async () => {
      const key = `conn:${name('lock')}`;
      let active = 0;
      let max = 0;
      const order: number[] = [];
      const body = (i: number) => async () => {
        active++;
        max = Math.max(max, active);
        await sleep(15);
        order.push(i);
        active--;
        return i;
      };
      const stores = h.crossInstanceLock ? [store, await second()] : [store];
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => stores[i % stores.length]!.tokens.withLock(key, body(i))));
      expect(results).toEqual([0, 1, 2, 3, 4, 5]);
      expect(max).toBe(1);
      expect(order).toHaveLength(6);

      // A throwing fn releases the lock; other keys are not blocked.
      await expect(store.tokens.withLock(key, async () => Promise.reject(new Error('refresh failed')))).rejects.toThrow('refresh failed');
      expect(await store.tokens.withLock(key, async () => 'after')).toBe('after');
      let otherRan = false;
      await store.tokens.withLock(key, async () => {
        await store.tokens.withLock(`${key}:other`, async () => {
          otherRan = true;
        });
      });
      expect(otherRan).toBe(true);
    });

    it('lock(key) is exclusive across instances, released on throw, and aborts a waiter', async () => {
      const key = `poll:${name('lock')}`;
      let active = 0;
      let max = 0;
      const body = (i: number) => async () => {
        active++;
        max = Math.max(max, active);
        await sleep(15);
        active--;
        return i;
      };
      const stores = h.crossInstanceLock ? [store, await second()] : [store];
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => stores[i % stores.length]!.lock(key, body(i))));
      expect(results.sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(max).toBe(1);

      await expect(store.lock(key, async () => Promise.reject(new Error('poll failed')))).rejects.toThrow('poll failed');
      expect(await store.lock(key, async () => 'after')).toBe('after');

      // A waiter whose signal aborts stops waiting; the holder is not disturbed.
      let releaseHolder!: () => void;
      const holder = stores[stores.length - 1]!.lock(key, () => new Promise<string>((r) => (releaseHolder = () => r('held'))));
      await sleep(50);
      const ac = new AbortController();
      const waiter = store.lock(key, async () => 'never', ac.signal);
      ac.abort(new Error('trigger stopped'));
      await expect(waiter).rejects.toThrow('trigger stopped');
      releaseHolder();
      expect(await holder).toBe('held');
    });

    describe('durable execution', () => {
      describeDurableContract(() => store, second);
    });
  });
}
