/**
 * Schedule triggers on a ManualClock: each form fires on its ticks with $trigger {scheduledAt,
 * firedAt}; overlap skip/queue/allow with a step that waits until the test releases it; catch-up
 * across a restart; one execution per tick with two runtimes on one store (replicas).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { advance, gate, poll, startRuntime, tempDir, write, type Gate, type TestRuntime } from './helpers.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

function folders() {
  const dir = tempDir('hcm-sched-dir-');
  const data = tempDir('hcm-sched-data-');
  cleanups.push(dir.remove, data.remove);
  return { dir: dir.path, data: data.path };
}

async function started(dir: string, data: string, start: string, env: Record<string, string> = {}, extra = {}): Promise<TestRuntime> {
  const t = await startRuntime(dir, data, start, { env: { ...process.env, ...env }, ...extra });
  cleanups.push(() => t.stop());
  return t;
}

const transform = (name: string, trigger: string) => `
name: ${name}
trigger: ${trigger}
steps:
  - id: t
    action: core.transform
    inputs: { value: "{% $trigger %}" }
`;

describe('schedule forms', () => {
  it('every: fires on the aligned ticks with {scheduledAt, firedAt}; nextRunAt is the armed tick', async () => {
    const { dir, data } = folders();
    write(dir, 'every.yaml', transform('every10', '{ type: schedule, every: 10s }'));
    const t = await started(dir, data, '2026-05-01T10:00:03Z');
    expect(t.runtime.triggers.detail('every10')).toEqual({ nextRunAt: '2026-05-01T10:00:10.000Z' });
    await advance(t, 6_000); // 10:00:09: not yet
    expect(await t.executions('every10')).toHaveLength(0);
    await advance(t, 1_000); // 10:00:10
    await advance(t, 20_000); // 10:00:20, 10:00:30
    const runs = await poll(async () => {
      const list = await t.executions('every10');
      return list.length === 3 && list.every((e) => e.status === 'succeeded') ? list : undefined;
    });
    expect(runs.map((e) => e.trigger)).toEqual([
      { scheduledAt: '2026-05-01T10:00:10.000Z', firedAt: '2026-05-01T10:00:10.000Z' },
      { scheduledAt: '2026-05-01T10:00:20.000Z', firedAt: '2026-05-01T10:00:20.000Z' },
      { scheduledAt: '2026-05-01T10:00:30.000Z', firedAt: '2026-05-01T10:00:30.000Z' },
    ]);
    expect(runs[0].result).toEqual(runs[0].trigger);
    expect(t.runtime.triggers.detail('every10')).toEqual({ nextRunAt: '2026-05-01T10:00:40.000Z' });
  });

  it('cron with seconds (6 fields)', async () => {
    const { dir, data } = folders();
    write(dir, 'cron.yaml', transform('cron-sec', '{ type: schedule, cron: "*/15 * * * * *" }'));
    const t = await started(dir, data, '2026-05-01T10:00:01Z');
    await advance(t, 60_000);
    const list = await poll(async () => {
      const l = await t.executions('cron-sec');
      return l.length === 4 ? l : undefined;
    });
    expect(list.map((e) => e.trigger.scheduledAt)).toEqual([
      '2026-05-01T10:00:15.000Z',
      '2026-05-01T10:00:30.000Z',
      '2026-05-01T10:00:45.000Z',
      '2026-05-01T10:01:00.000Z',
    ]);
  });

  it('at with a time zone; a disabled schedule never fires and has no next run', async () => {
    const { dir, data } = folders();
    write(dir, 'at.yaml', transform('morning', '{ type: schedule, at: "08:30", timezone: Europe/Berlin }'));
    write(dir, 'off.yaml', `enabled: false\n${transform('off', '{ type: schedule, every: 1m }')}`);
    const t = await started(dir, data, '2026-05-01T06:00:00Z');
    expect(t.runtime.triggers.detail('morning')).toEqual({ nextRunAt: '2026-05-01T06:30:00.000Z' }); // 08:30 CEST
    expect(t.runtime.triggers.detail('off')).toEqual({ nextRunAt: null });
    await advance(t, 24 * 3_600_000);
    const list = await poll(async () => {
      const l = await t.executions('morning');
      return l.length === 1 ? l : undefined;
    });
    expect(list[0].trigger.scheduledAt).toBe('2026-05-01T06:30:00.000Z');
    expect(await t.executions('off')).toHaveLength(0);
    expect(t.runtime.triggers.detail('morning')).toEqual({ nextRunAt: '2026-05-02T06:30:00.000Z' });
  });
});

describe('a trigger that changes type', () => {
  it('a schedule that becomes a webhook stops ticking; made a schedule again, it ticks again', async () => {
    const { dir, data } = folders();
    write(dir, 'switch.yaml', transform('switch', '{ type: schedule, every: 10s }'));
    const t = await started(dir, data, '2026-05-01T10:00:03Z');
    expect(t.runtime.triggers.instance('switch')).toBeDefined();

    write(dir, 'switch.yaml', transform('switch', '{ type: webhook }'));
    await t.runtime.reload();
    await t.settle();
    expect(t.runtime.triggers.instance('switch')).toBeUndefined();
    expect(t.runtime.triggers.detail('switch')).toBeUndefined();
    await advance(t, 30_000); // 10:00:33: three ticks of the old schedule
    expect(await t.executions('switch')).toHaveLength(0);

    write(dir, 'switch.yaml', transform('switch', '{ type: schedule, every: 10s }'));
    await t.runtime.reload();
    await t.settle();
    expect(t.runtime.triggers.detail('switch')).toEqual({ nextRunAt: '2026-05-01T10:00:40.000Z' });
    await advance(t, 7_000);
    const runs = await poll(async () => {
      const list = await t.executions('switch');
      return list.length === 1 && list[0].status === 'succeeded' ? list : undefined;
    });
    expect(runs[0].trigger.scheduledAt).toBe('2026-05-01T10:00:40.000Z');
  });
});

describe('overlap', () => {
  const slow = (name: string, overlap: string) => `
name: ${name}
trigger: { type: schedule, every: 1s, overlap: ${overlap} }
steps:
  - id: wait
    action: core.http
    inputs: { url: { env: GATE_URL }, method: GET, timeoutMs: 60000 }
`;
  async function setup(overlap: string): Promise<{ t: TestRuntime; g: Gate; name: string }> {
    const { dir, data } = folders();
    const g = await gate();
    cleanups.push(() => g.close());
    const name = `slow-${overlap}`;
    write(dir, 'slow.yaml', slow(name, overlap));
    const t = await started(dir, data, '2026-05-01T10:00:00.500Z', { GATE_URL: g.url });
    await advance(t, 1_000); // first tick: the execution starts and waits at the gate
    await poll(async () => (g.hits === 1 ? true : undefined));
    return { t, g, name };
  }

  it('skip: no execution is even queued while the previous one runs', async () => {
    const { t, g, name } = await setup('skip');
    await advance(t, 1_000);
    await advance(t, 1_000);
    expect((await t.executions(name)).map((e) => e.status)).toEqual(['running']);
    g.release();
    await poll(async () => ((await t.executions(name))[0].status === 'succeeded' ? true : undefined));
    await advance(t, 1_000);
    await poll(async () => (g.hits === 2 ? true : undefined));
    const list = await t.executions(name);
    expect(list).toHaveLength(2);
    expect(list[1].trigger.scheduledAt).toBe('2026-05-01T10:00:04.000Z');
    g.release(true);
  });

  it('queue: ticks are queued and run one at a time', async () => {
    const { t, g, name } = await setup('queue');
    await advance(t, 1_000);
    await advance(t, 1_000);
    expect((await t.executions(name)).map((e) => e.status)).toEqual(['running', 'queued', 'queued']);
    expect(g.hits).toBe(1);
    g.release();
    await poll(async () => (g.hits === 2 ? true : undefined));
    expect((await t.executions(name)).map((e) => e.status)).toEqual(['succeeded', 'running', 'queued']);
    g.release();
    await poll(async () => (g.hits === 3 ? true : undefined));
    g.release();
    const list = await poll(async () => {
      const l = await t.executions(name);
      return l.every((e) => e.status === 'succeeded') ? l : undefined;
    });
    for (let i = 1; i < list.length; i++) expect(list[i].startedAt >= list[i - 1].finishedAt).toBe(true);
  });

  it('allow: ticks run side by side', async () => {
    const { t, g, name } = await setup('allow');
    await advance(t, 1_000);
    await advance(t, 1_000);
    await poll(async () => (g.hits === 3 && g.waiting === 3 ? true : undefined));
    expect((await t.executions(name)).map((e) => e.status)).toEqual(['running', 'running', 'running']);
    g.release(true);
  });
});

describe('catch-up and replicas', () => {
  const minutely = (name: string, catchUp: string) => transform(name, `{ type: schedule, every: 1m, catchUp: ${catchUp} }`);

  it('catchUp latest runs the latest missed tick once after a restart; none replays nothing', async () => {
    const { dir, data } = folders();
    write(dir, 'latest.yaml', minutely('catch-latest', 'latest'));
    write(dir, 'none.yaml', minutely('catch-none', 'none'));
    const first = await started(dir, data, '2026-05-01T10:00:30Z');
    await advance(first, 60_000); // 10:01 fires for both
    await poll(async () =>
      (await first.executions('catch-latest')).length === 1 && (await first.executions('catch-none')).length === 1 ? true : undefined,
    );
    expect(await first.store.getState('catch-latest', 'schedule')).toEqual({ lastTick: '2026-05-01T10:01:00.000Z' });
    await first.stop();

    // Down from 10:01:30 to 10:06:30: ticks 10:02 … 10:06 were missed.
    const second = await started(dir, data, '2026-05-01T10:06:30Z');
    await second.settle();
    const latest = await poll(async () => {
      const l = await second.executions('catch-latest');
      return l.length === 2 ? l : undefined;
    });
    expect(latest[1].trigger).toEqual({ scheduledAt: '2026-05-01T10:06:00.000Z', firedAt: '2026-05-01T10:06:30.000Z' });
    expect(await second.executions('catch-none')).toHaveLength(1);
    // The loop goes on from the next tick; the caught-up tick is not fired again.
    await advance(second, 30_000);
    await poll(async () =>
      (await second.executions('catch-latest')).length === 3 && (await second.executions('catch-none')).length === 2 ? true : undefined,
    );
    expect((await second.executions('catch-latest'))[2].trigger.scheduledAt).toBe('2026-05-01T10:07:00.000Z');
  });

  it('two runtimes on one SQLite store fire each tick once', async () => {
    const { dir, data } = folders();
    write(dir, 'shared.yaml', transform('shared', '{ type: schedule, every: 1s, overlap: allow }'));
    const a = await started(dir, data, '2026-05-01T10:00:00.200Z');
    const b = await started(dir, join(data, 'unused'), '2026-05-01T10:00:00.200Z', {}, { store: a.store });
    await replicasFireOnce(a, b);
  });

  it('two replicas on PostgreSQL (two connection pools) fire each tick once', async () => {
    const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `trig_${randomBytes(5).toString('hex')}`;
    const storeA = await openStore({ databaseUrl: url, schema, secret: 'trigger-tests' });
    const storeB = await openStore({ databaseUrl: url, schema, secret: 'trigger-tests' });
    cleanups.push(async () => {
      await (storeA as PostgresStore).pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await storeA.close();
      await storeB.close();
    });
    const { dir, data } = folders();
    write(dir, 'shared.yaml', transform('shared', '{ type: schedule, every: 1s, overlap: allow }'));
    const a = await started(dir, data, '2026-05-01T10:00:00.200Z', {}, { store: storeA });
    const b = await started(dir, data, '2026-05-01T10:00:00.200Z', {}, { store: storeB });
    await replicasFireOnce(a, b);
  });

  async function replicasFireOnce(a: TestRuntime, b: TestRuntime): Promise<void> {
    for (let i = 0; i < 5; i++) {
      a.clock.advance(1_000);
      b.clock.advance(1_000);
      await Promise.all([a.settle(), b.settle()]);
    }
    const list = await poll(async () => {
      const l = await a.executions('shared');
      return l.length >= 5 && l.every((e) => e.status === 'succeeded') ? l : undefined;
    });
    expect(list.map((e) => e.trigger.scheduledAt)).toEqual(['01', '02', '03', '04', '05'].map((s) => `2026-05-01T10:00:${s}.000Z`));
  }
});
