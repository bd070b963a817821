/**
 * Poll triggers against the HCM sandbox (real HTTP, OAuth), on a ManualClock: baseline, new
 * items, duplicates, mode each vs batch, failures (sandbox fault injection) and recovery at the
 * next tick, and a restart between polls (no loss, no repeat).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import type { PollTrigger } from '../../src/triggers/poll/index.js';
import { advance, poll, startRuntime, tempDir, write, type TestRuntime } from './helpers.js';

let sandbox: Sandbox;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true });
  env = {
    ...process.env,
    HCM_API_URL: sandbox.apiUrl,
    HCM_TOKEN_URL: sandbox.tokenUrl,
    HCM_AUTHORIZE_URL: sandbox.authorizeUrl,
    HCM_CLIENT_SECRET: 'sandbox-secret',
    HCM_REFRESH_TOKEN: sandbox.issueRefreshToken(),
  };
});
afterAll(() => sandbox?.close());

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  sandbox.clearFaults();
  for (const f of cleanups.splice(0).reverse()) await f();
});

let tagSeq = 0;
/** A poll over the sandbox workers of worker type `tag` (each test its own tag, so only its own hires). */
function pollFile(name: string, tag: string, mode: 'each' | 'batch'): string {
  return `
name: ${name}
connections:
  hcm:
    type: hcm-oauth2
    authorizeUrl: { env: HCM_AUTHORIZE_URL }
    tokenUrl: { env: HCM_TOKEN_URL }
    apiUrl: { env: HCM_API_URL }
    tenantId: acme
    clientId: sandbox-client
    clientSecret: { env: HCM_CLIENT_SECRET }
    refreshToken: { env: HCM_REFRESH_TOKEN }
trigger:
  type: poll
  every: 1m
  action: hcm.listWorkers
  connection: hcm
  inputs: { limit: 100, queryParams: { workerType: ${tag} } }
  items: "{% data %}"
  key: "{% id %}"
  mode: ${mode}
steps:
  - id: seen
    action: core.transform
    inputs:
      value: "{% $trigger %}"
`;
}

function hire(tag: string, n: number): string {
  return sandbox.state.db.workers.create({
    descriptor: `${tag} Hire${n}`,
    workerId: `${tag}-${n}`,
    workerType: { id: tag, descriptor: tag },
    primaryJob: { id: `${tag}-job-${n}`, descriptor: 'New hire', businessTitle: 'New hire' },
  }).id;
}

async function setup(mode: 'each' | 'batch', extra: Record<string, unknown> = {}) {
  const dir = tempDir('hcm-poll-dir-');
  const data = tempDir('hcm-poll-data-');
  cleanups.push(dir.remove, data.remove);
  const tag = `Ptag${++tagSeq}x${Date.now() % 100000}`;
  write(dir.path, 'poll.yaml', pollFile('poller', tag, mode));
  // The sandbox rotates refresh tokens: each test's data directory starts from a fresh one.
  const testEnv = { ...env, HCM_REFRESH_TOKEN: sandbox.issueRefreshToken() };
  const start = async (at: string, more: Record<string, unknown> = {}) => {
    const t = await startRuntime(dir.path, data.path, at, { env: testEnv, ...extra, ...more });
    cleanups.push(() => t.stop());
    return t;
  };
  return { tag, start, dir: dir.path, data: data.path };
}

const lastPoll = (t: TestRuntime) => (t.runtime.triggers.instance('poller') as PollTrigger).last;
const finished = (t: TestRuntime, n: number) =>
  poll(async () => {
    const l = await t.executions('poller');
    return l.length === n && l.every((e) => e.status === 'succeeded') ? l : undefined;
  });

describe('poll trigger', () => {
  it('mode each: baseline first, then one execution per new item, never twice', async () => {
    const { tag, start } = await setup('each');
    const existing = hire(tag, 0);
    const t = await start('2026-05-01T10:00:10Z');
    expect(t.runtime.triggers.detail('poller')).toMatchObject({ nextRunAt: '2026-05-01T10:01:00.000Z' });

    await advance(t, 60_000);
    expect(lastPoll(t)).toMatchObject({ status: 'baseline', items: 1, newItems: 0 });
    expect(await t.executions('poller')).toHaveLength(0);
    expect([...(await t.store.seenKeys('poller'))]).toEqual([existing]);

    const a = hire(tag, 1);
    const b = hire(tag, 2);
    await advance(t, 60_000);
    expect(lastPoll(t)).toMatchObject({ status: 'polled', items: 3, newItems: 2 });
    const runs = await finished(t, 2);
    expect(runs.map((e) => e.trigger.item.id).sort()).toEqual([a, b].sort());
    expect(runs[0].trigger.polledAt).toBe('2026-05-01T10:02:00.000Z');
    expect(runs[0].result).toEqual(runs[0].trigger);

    // Same items again: nothing new.
    await advance(t, 60_000);
    expect(lastPoll(t)).toMatchObject({ status: 'polled', items: 3, newItems: 0 });
    expect(await t.executions('poller')).toHaveLength(2);
  });

  it('mode batch: one execution with every new item', async () => {
    const { tag, start } = await setup('batch');
    hire(tag, 0);
    const t = await start('2026-05-01T10:00:10Z');
    await advance(t, 60_000);
    const ids = [hire(tag, 1), hire(tag, 2), hire(tag, 3)];
    await advance(t, 60_000);
    const [run] = await finished(t, 1);
    expect(run.trigger.items.map((i: any) => i.id).sort()).toEqual(ids.sort());
    expect(run.trigger.polledAt).toBe('2026-05-01T10:02:00.000Z');
    await advance(t, 60_000);
    expect(await t.executions('poller')).toHaveLength(1);
  });

  it('an empty first poll is still the baseline: items that appear later are new', async () => {
    const { tag, start } = await setup('each');
    const t = await start('2026-05-01T10:00:10Z');
    await advance(t, 60_000);
    expect(lastPoll(t)).toMatchObject({ status: 'baseline', items: 0 });
    const a = hire(tag, 1);
    await advance(t, 60_000);
    const [run] = await finished(t, 1);
    expect(run.trigger.item.id).toBe(a);
  });

  it('a failing poll commits nothing and is tried again at the next tick', async () => {
    const { tag, start } = await setup('each');
    hire(tag, 0);
    const t = await start('2026-05-01T10:00:10Z');
    await advance(t, 60_000); // baseline
    const a = hire(tag, 1);
    sandbox.addFault({ match: { pathIncludes: '/workers' }, status: 503, times: 1 });
    await advance(t, 60_000);
    expect(lastPoll(t)).toMatchObject({ status: 'failed' });
    expect(lastPoll(t)!.error).toMatch(/503|server_error|unavailable|injected/i);
    expect(t.runtime.triggers.detail('poller')).toMatchObject({ lastPoll: { status: 'failed' } });
    expect(await t.executions('poller')).toHaveLength(0);
    expect((await t.store.seenKeys('poller')).has(a)).toBe(false);

    await advance(t, 60_000); // recovers
    expect(lastPoll(t)).toMatchObject({ status: 'polled', newItems: 1 });
    const [run] = await finished(t, 1);
    expect(run.trigger.item.id).toBe(a);
  });

  it('a restart between polls neither loses nor repeats items', async () => {
    const { tag, start } = await setup('each');
    hire(tag, 0);
    // Workers that never run: the committed execution is still queued when the process stops.
    const first = await start('2026-05-01T10:00:10Z', { limits: { concurrency: 0 } });
    await advance(first, 60_000); // baseline
    const a = hire(tag, 1);
    await advance(first, 60_000); // commits the execution for `a`
    expect((await first.executions('poller')).map((e) => [e.status, e.trigger.item.id])).toEqual([['queued', a]]);
    await first.stop();

    const b = hire(tag, 2);
    const second = await start('2026-05-01T10:02:30Z');
    await advance(second, 30_000); // 10:03: only `b` is new; `a` resumes from the queue
    const runs = await finished(second, 2);
    expect(runs.map((e) => e.trigger.item.id).sort()).toEqual([a, b].sort());
    expect(lastPoll(second)).toMatchObject({ status: 'polled', newItems: 1 });
    await advance(second, 60_000);
    expect(await second.executions('poller')).toHaveLength(2);
  });
});
