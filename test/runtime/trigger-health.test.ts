/**
 * Trigger health (src/runtime/trigger-health.ts) on a ManualClock: a poll whose request fails
 * three times in a row is failing (and recovers with the next good poll), a schedule whose
 * executions fail is failing, and a schedule that stops running (its one execution hangs with
 * `overlap: skip`) is stalled once three periods pass without a run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { advance, gate, poll, startRuntime, tempDir, write, type TestRuntime } from '../triggers/helpers.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function start(files: Record<string, string>, at: string, env: Record<string, string> = {}): Promise<TestRuntime> {
  const dir = tempDir('hcm-health-dir-');
  const data = tempDir('hcm-health-data-');
  cleanups.push(dir.remove, data.remove);
  for (const [name, text] of Object.entries(files)) write(dir.path, name, text);
  const t = await startRuntime(dir.path, data.path, at, { env: { ...process.env, ...env } });
  cleanups.push(() => t.stop());
  return t;
}

/** An upstream answering 503 while `failing`, else an empty list of items. */
async function flakyUpstream(): Promise<{ url: string; failing: boolean; close(): Promise<void> }> {
  const state = { failing: true };
  const server: Server = createServer((_req, res) => {
    res.writeHead(state.failing ? 503 : 200, { 'content-type': 'application/json' });
    res.end(state.failing ? '{"error":"credentials expired"}' : '{"items":[]}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

const health = async (t: TestRuntime, name: string) => {
  await t.settle();
  await t.runtime.health.idle();
  return t.runtime.triggerHealth(name);
};

describe('trigger health', () => {
  it('a poll that fails three times in a row is failing, with its last error; a good poll resets it', async () => {
    const up = await flakyUpstream();
    cleanups.push(() => up.close());
    const t = await start(
      {
        'poller.yaml': `
name: poller
trigger:
  type: poll
  every: 1m
  action: core.http
  inputs: { url: "${up.url}" }
  items: "{% items %}"
  key: "{% id %}"
steps:
  - id: noop
    action: core.log
    inputs: { message: new }
`,
      },
      '2026-05-01T10:00:10Z',
    );
    expect(await health(t, 'poller')).toMatchObject({ status: 'ok', consecutiveFailures: 0, lastRunAt: null, nextRunAt: '2026-05-01T10:01:00.000Z' });

    await advance(t, 60_000);
    await advance(t, 60_000);
    expect(await health(t, 'poller')).toMatchObject({ status: 'ok', consecutiveFailures: 2 });
    await advance(t, 60_000);
    const failing = await health(t, 'poller');
    expect(failing).toMatchObject({
      status: 'failing',
      consecutiveFailures: 3,
      lastRunAt: '2026-05-01T10:03:00.000Z',
      lastSuccessAt: null,
      nextRunAt: '2026-05-01T10:04:00.000Z',
    });
    expect(failing!.lastError).toMatchObject({ at: '2026-05-01T10:03:00.000Z' });
    expect(failing!.lastError!.message).toMatch(/503/);

    up.failing = false;
    await advance(t, 60_000);
    expect(await health(t, 'poller')).toMatchObject({ status: 'ok', consecutiveFailures: 0, lastSuccessAt: '2026-05-01T10:04:00.000Z' });
    // Kept in the store: another process (a replica, a restart) reads the same.
    expect(await t.store.getState('poller', 'health')).toMatchObject({ consecutiveFailures: 0, lastSuccessAt: '2026-05-01T10:04:00.000Z' });
  });

  it('a schedule fails with its executions; webhooks have no health', async () => {
    const t = await start(
      {
        'nightly.yaml': `
name: nightly
trigger: { type: schedule, every: 1m }
steps:
  - id: boom
    action: core.fail
    inputs: { message: the upstream renamed a field }
`,
        'hook.yaml': `
name: hook
trigger: { type: webhook }
steps:
  - id: noop
    action: core.log
    inputs: { message: hi }
`,
      },
      '2026-05-01T10:00:10Z',
    );
    for (let i = 0; i < 3; i++) {
      await advance(t, 60_000);
      await poll(async () => ((await t.executions('nightly')).filter((e) => e.status === 'failed').length === i + 1 ? true : undefined));
    }
    const h = await health(t, 'nightly');
    expect(h).toMatchObject({ status: 'failing', consecutiveFailures: 3, lastRunAt: '2026-05-01T10:03:00.000Z' });
    expect(h!.lastError!.message).toContain('the upstream renamed a field');
    expect(h!.lastError!.executionId).toBeTruthy();
    expect(await t.runtime.triggerHealth('hook')).toBeUndefined();
  });

  it('a schedule that has not run for three periods is stalled', async () => {
    const g = await gate();
    cleanups.push(() => g.close());
    const t = await start(
      {
        'stuck.yaml': `
name: stuck
trigger: { type: schedule, every: 1m, overlap: skip }
steps:
  - id: hang
    action: core.http
    inputs: { url: "${g.url}" }
`,
      },
      '2026-05-01T10:00:10Z',
    );
    await advance(t, 60_000); // 10:01 fires; its execution waits at the gate
    await poll(async () => (g.waiting === 1 ? true : undefined));
    expect(await health(t, 'stuck')).toMatchObject({ status: 'ok', lastRunAt: '2026-05-01T10:01:00.000Z' });
    // 10:02 … 10:04 are skipped (overlap: skip): three periods without a run, plus one minute's slack.
    await advance(t, 3 * 60_000);
    expect((await health(t, 'stuck'))!.status).toBe('ok');
    await advance(t, 60_000 + 1000);
    expect(await health(t, 'stuck')).toMatchObject({ status: 'stalled', lastRunAt: '2026-05-01T10:01:00.000Z' });
    g.release(true);
  });
});
