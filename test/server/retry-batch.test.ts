/**
 * Which executions one bulk retry takes (src/server/retry.ts) against the real stores: at most
 * 1,000, newest first, read page by page; executions queued in the same millisecond never split
 * between two calls, so following `until` takes every match exactly once. And what a retry
 * resumes from, judged by the integration as loaded now (`onError: continue`, nested steps).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepRecord } from '../../src/engine/record.js';
import { chunksByTime, MAX_BULK_RETRY, resumeStepsFor, retryBatch, type RetryFilter } from '../../src/server/retry.js';
import type { ExecutionSummary, Store } from '../../src/store/types.js';
import { compile } from '../helpers/engine.js';
import { type TempStore, tempPgStore, tempStore } from '../runtime/dispatch/helpers.js';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');

/** `n` failed executions of `integration`, queued `msApart` apart from `from` on (0: all in one millisecond). */
async function failed(store: Store, integration: string, n: number, msApart: number, prefix: string, from = T0): Promise<void> {
  const executions = Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${String(i).padStart(5, '0')}`,
    integration,
    trigger: {},
    test: false,
    queuedAt: new Date(from + i * msApart).toISOString(),
  }));
  await store.enqueue(executions);
  for (const e of executions)
    await store.saveExecution({ ...e, status: 'failed', attempt: 1, steps: [], log: [], error: { message: 'boom' } }, { stored: true });
}

/** Follows `until` from call to call, as the CLI does; every batch's rows. */
async function drain(store: Store, filter: RetryFilter, cap?: number, pageSize?: number): Promise<ExecutionSummary[][]> {
  const batches: ExecutionSummary[][] = [];
  let until = filter.until;
  for (let i = 0; i < 500; i++) {
    const b = await retryBatch((f) => store.listExecutions(f), { ...filter, until }, cap, pageSize);
    batches.push(b.rows);
    if (!b.more) return batches;
    expect(b.until).toBeDefined();
    until = b.until;
  }
  throw new Error('did not end');
}

for (const [kind, open] of [
  ['SQLite', tempStore],
  ['PostgreSQL', tempPgStore],
] as const) {
  describe(`bulk retry batches (${kind})`, () => {
    let t: TempStore;
    beforeAll(async () => {
      t = await open();
      // 1,003 one millisecond apart, and 30 more of another integration in the millisecond of the 501st.
      await failed(t.store, 'many', 1003, 1, 'm');
      await failed(t.store, 'same-ms', 30, 0, 's', T0 + 500);
    }, 120_000);
    afterAll(async () => {
      await t?.close();
    });

    it('takes at most 1,000 (newest first) and says where the next call goes on; the two calls take each one once', async () => {
      const first = await retryBatch((f) => t.store.listExecutions(f), { integration: 'many', status: 'failed' });
      expect(first.rows).toHaveLength(MAX_BULK_RETRY);
      expect(first.more).toBe(true);
      expect(first.rows[0]!.id).toBe('m-01002');
      expect(first.until).toBe(first.rows[first.rows.length - 1]!.queuedAt);
      const rest = await retryBatch((f) => t.store.listExecutions(f), { integration: 'many', status: 'failed', until: first.until });
      expect(rest.more).toBe(false);
      expect(rest.rows.map((r) => r.id)).toEqual(['m-00002', 'm-00001', 'm-00000']);
    });

    it('small pages and caps: every match exactly once, and a millisecond is never split between calls', async () => {
      const batches = await drain(t.store, { integration: 'many', status: 'failed' }, 97, 10);
      const ids = batches.flat().map((r) => r.id);
      expect(new Set(ids).size).toBe(1003);
      expect(ids).toHaveLength(1003);

      // 30 in one millisecond (a poll's batch) come once each (as long as one page, 500, holds them).
      const same = await retryBatch((f) => t.store.listExecutions(f), { integration: 'same-ms', status: 'failed' }, 40, 30);
      expect(same.rows.map((r) => r.id).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `s-${String(i).padStart(5, '0')}`));
      expect(same.more).toBe(false);
      // Pages overlap on their last millisecond and repeats are dropped; a call's cap never splits a
      // millisecond (the call stops short of it): following `until`, each of 1,033 comes exactly once.
      for (const [cap, pageSize] of [
        [40, 45],
        [97, 33],
        [1000, 500],
      ]) {
        const capped = await drain(t.store, { status: 'failed' }, cap, pageSize);
        const all = capped.flat().map((r) => r.id);
        expect(all, `cap ${cap}, pages of ${pageSize}`).toHaveLength(1033);
        expect(new Set(all).size).toBe(1033);
      }
    });

    it('matches retried before are listed, not taken, each under its own cap: following `until`, every match considered once', async () => {
      // Every third of 'many' was retried (as r-<id>), plus all 30 of the same millisecond.
      const retriedIds = new Set([...Array.from({ length: 1003 }, (_, i) => `m-${String(i).padStart(5, '0')}`).filter((_, i) => i % 3 === 0)]);
      for (let i = 0; i < 30; i++) retriedIds.add(`s-${String(i).padStart(5, '0')}`);
      const retriesOf = async (ids: readonly string[]) =>
        new Map(ids.filter((id) => retriedIds.has(id)).map((id) => [id, [`r-old-${id}`, `r-${id}`]]));
      for (const [cap, pageSize] of [
        [40, 45],
        [97, 33],
        [1000, 500],
      ] as const) {
        const taken: string[] = [];
        const listed: string[] = [];
        let until: string | undefined;
        for (let i = 0; i < 500; i++) {
          const b = await retryBatch((f) => t.store.listExecutions(f), { status: 'failed', until }, cap, pageSize, retriesOf);
          expect(b.rows.length).toBeLessThanOrEqual(cap);
          // The 30 of one millisecond are never split; otherwise each kind stays within the cap.
          if (!b.alreadyRetried.some((a) => a.row.id.startsWith('s-'))) expect(b.alreadyRetried.length).toBeLessThanOrEqual(cap);
          taken.push(...b.rows.map((r) => r.id));
          for (const a of b.alreadyRetried) {
            expect(a.retriedAs).toBe(`r-${a.row.id}`); // the newest retry
            listed.push(a.row.id);
          }
          if (!b.more) break;
          until = b.until;
        }
        expect(new Set(listed), `cap ${cap}, pages of ${pageSize}`).toEqual(retriedIds);
        expect(listed).toHaveLength(retriedIds.size);
        expect(taken).toHaveLength(1033 - retriedIds.size);
        expect(taken.some((id) => retriedIds.has(id))).toBe(false);
        expect(new Set(taken).size).toBe(taken.length);
      }
      // With the 1,000 cap, one call takes 1,000 not yet retried (the retried ones do not use it up).
      const one = await retryBatch((f) => t.store.listExecutions(f), { integration: 'many', status: 'failed' }, 1000, 500, retriesOf);
      expect(one.rows.length + one.alreadyRetried.length).toBe(1003);
      expect(one.more).toBe(false);
    });

    it('since and status narrow it', async () => {
      const since = new Date(T0 + 1000).toISOString();
      const b = await retryBatch((f) => t.store.listExecutions(f), { integration: 'many', status: 'failed', since });
      expect(b.rows.map((r) => r.id).sort()).toEqual(['m-01000', 'm-01001', 'm-01002']);
      expect((await retryBatch((f) => t.store.listExecutions(f), { integration: 'many', status: 'cancelled' })).rows).toEqual([]);
    });
  });
}

describe('chunksByTime', () => {
  const row = (id: string, ms: number) => ({ id, queuedAt: new Date(T0 + ms).toISOString() }) as ExecutionSummary;
  it('cuts about every `size`, never inside one millisecond', () => {
    const rows = [row('a', 5), row('b', 4), row('c', 4), row('d', 4), row('e', 3), row('f', 2)];
    expect(chunksByTime(rows, 2).map((c) => c.map((r) => r.id).join(''))).toEqual(['abcd', 'ef']);
    expect(chunksByTime(rows, 1).map((c) => c.map((r) => r.id).join(''))).toEqual(['a', 'bcd', 'e', 'f']);
  });
});

describe('what a retry resumes from', () => {
  const integration = compile(
    `name: resumes
trigger: { type: webhook }
steps:
  - id: a
    action: core.transform
    inputs: { value: 1 }
  - id: g
    steps:
      - id: soft
        action: core.transform
        onError: continue
        inputs: { value: 2 }
      - id: hard
        action: core.transform
        inputs: { value: 3 }
  - id: z
    action: core.transform
    inputs: { value: 4 }
`,
  );
  const at = '2026-11-26T10:00:00.000Z';
  const rec = (id: string, status: StepRecord['status'], extra: Partial<StepRecord> = {}): StepRecord => ({
    id,
    action: 'core.transform',
    status,
    startedAt: at,
    ...extra,
  });

  it('keeps the steps before the failed one; a failed step the file now marks onError: continue counts as done', () => {
    const steps = [
      rec('a', 'succeeded', { results: 1 }),
      rec('g', 'failed', { action: 'group', steps: [rec('soft', 'failed', { error: { message: 'x' } as never }), rec('hard', 'failed')] }),
    ];
    const resumed = resumeStepsFor(integration, steps);
    expect(resumed.map((s) => `${s.id}:${s.status}`)).toEqual(['a:succeeded', 'g:running']);
    expect(resumed[1]!.steps!.map((s) => `${s.id}:${s.status}`)).toEqual(['soft:failed']);
  });
});
