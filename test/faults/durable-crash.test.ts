/**
 * Durable execution across kill -9 (docs/promises.md "Resume, not restart"): a real
 * `hcm-runner serve` child process is SIGKILLed while
 * - an execution of four core.http calls is in its third call: after a restart on the same
 *   storage the first two calls are not made again, the third is, and it succeeds as attempt 2;
 * - an execution waits (core.wait for 2s) and its wake-up comes while no process runs: it runs
 *   when the process is back, as the same attempt;
 * - a callback request was just answered 202: the request was committed before the answer, so the
 *   execution resumes with it after the restart.
 * On SQLite (one process owns the file) and PostgreSQL (the shared table queue; a short lease so
 * the restarted replica takes over the running execution).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { testSchema } from '../helpers/pg-schema.js';
import { type Counter, CHAIN, counterServer, integrationsDir, waitFor, waitForCallback } from '../runtime/durable/helpers.js';
import { childApi as api, killServeChildren, poll, spawnServe, tempDir, untilHealthy as healthy } from '../server/helpers.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  killServeChildren();
  for (const f of cleanups.reverse()) await f();
});

async function webhook(base: string, name: string, counter: Counter): Promise<string> {
  const view = (await api(base, 'GET', `/integrations/${name}`)) as { webhookUrls: { live: string } };
  const res = await fetch(view.webhookUrls.live, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ base: counter.url }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { executionId: string }).executionId;
}

const statusOf = (base: string, id: string, statuses: string[], timeoutMs = 30_000) =>
  poll(
    async () => {
      const r = await api(base, 'GET', `/executions/${id}`);
      return statuses.includes(r.status) ? r : undefined;
    },
    timeoutMs,
    50,
  );

async function storage(kind: 'sqlite' | 'postgres'): Promise<{ args: string[]; env: Record<string, string> }> {
  if (kind === 'sqlite') {
    const data = tempDir('hcm-durable-data-');
    cleanups.push(data.remove);
    return { args: ['--data', data.path], env: {} };
  }
  const schema = testSchema('durable');
  cleanups.push(schema.drop);
  // A killed replica's running executions are taken over once its lease ran out.
  return { args: ['--database-url', schema.url], env: { HCM_RUNNER_LEASE_SECONDS: '2' } };
}

describe.each(['sqlite', 'postgres'] as const)('kill -9 and restart (%s)', (kind) => {
  it('resumes at the interrupted step, wakes a wait that came due while down, keeps a callback answered 202', { timeout: 120_000 }, async () => {
    const counter = await counterServer();
    cleanups.push(() => counter.close());
    const dir = integrationsDir({ chain: CHAIN, nap: waitFor('nap', '2s'), approve: waitForCallback('approve', '1h') });
    cleanups.push(dir.remove);
    const store = await storage(kind);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const args = ['--dir', dir.path, '--port', String(port), ...store.args];
    const env = { HCM_RUNNER_PUBLIC_URL: base, ...store.env };

    const first = spawnServe(args, env);
    await healthy(base, first.output);
    const chain = await webhook(base, 'chain', counter);
    const nap = await webhook(base, 'nap', counter);
    const approve = await webhook(base, 'approve', counter);
    await counter.held('/hold/three');
    const napping = await statusOf(base, nap, ['waiting']);
    const url: string = (await statusOf(base, approve, ['waiting'])).waitingFor.callbackUrl;
    // The first two calls were checkpointed before the third began.
    const during = await api(base, 'GET', `/executions/${chain}`);
    expect(during.status).toBe('running');

    const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approved: 'yes' }) });
    expect(answer.status).toBe(202);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    // Down past the nap's wake-up; the third call answers from now on.
    counter.release('/hold/three');
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(napping.wakeAt) - Date.now()) + 300));

    const second = spawnServe(args, env);
    await healthy(base, second.output);
    const chained = await statusOf(base, chain, ['succeeded', 'failed']);
    expect(chained.status).toBe('succeeded');
    expect(chained.attempt).toBe(2);
    expect(counter.hits('/one')).toBe(1);
    expect(counter.hits('/two')).toBe(1);
    expect(counter.hits('/hold/three')).toBe(2);
    expect(counter.hits('/four')).toBe(1);

    const woke = await statusOf(base, nap, ['succeeded', 'failed']);
    expect(woke.status).toBe('succeeded');
    expect(woke.attempt).toBe(1);
    expect(Date.parse(woke.steps.find((s: { id: string }) => s.id === 'pause').results.wokeAt)).toBeGreaterThanOrEqual(Date.parse(napping.wakeAt));
    expect(counter.hits('/nap/before')).toBe(1);

    const approved = await statusOf(base, approve, ['succeeded', 'failed']);
    expect(approved.status).toBe('succeeded');
    expect(approved.steps.find((s: { id: string }) => s.id === 'approval').results.body).toEqual({ approved: 'yes' });
    expect(counter.hits('/approve/handout')).toBe(1);
    // The callback URL took its one request.
    expect((await fetch(url, { method: 'POST', body: 'again' })).status).toBe(409);

    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
  });
});
