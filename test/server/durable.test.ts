/**
 * Durable execution through the runner over HTTP (docs/server.md "Waiting executions and
 * callbacks"): core.wait suspends an execution as `waiting` and the waker resumes it on time;
 * callback URLs accept one request (202 once it is committed, 409 after, 404 unknown); the cap on
 * waiting executions; cancel of a waiting and of a running execution; a synchronous caller of a
 * run that starts waiting. Real server, on SQLite and on PostgreSQL (the shared table queue:
 * wake-ups claimed with SKIP LOCKED, cancel flags read back), a loopback counter server as the
 * outside world.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSchema } from '../helpers/pg-schema.js';
import { type Counter, CHAIN, counterServer, integrationsDir, waitFor, waitForCallback } from '../runtime/durable/helpers.js';
import { poll, startTestServer, type TestServer } from './helpers.js';

let counter: Counter;
let dir: ReturnType<typeof integrationsDir>;
let server: TestServer;

async function start(name: string): Promise<string> {
  const res = await fetch(server.urls(name).live, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ base: counter.url }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { executionId: string }).executionId;
}

const get = async (id: string) => (await server.api('GET', `/executions/${id}`)).body;

describe.each(['sqlite', 'postgres'] as const)('%s', (kind) => {
  const schema = testSchema('durable');
  beforeAll(async () => {
    counter = await counterServer();
    dir = integrationsDir({
      chain: CHAIN,
      syncchain: CHAIN.replace('name: chain\ntrigger:\n  type: webhook', 'name: syncchain\ntrigger:\n  type: webhook\n  response: { mode: sync }'),
      nap: waitFor('nap', '1s'),
      long: waitFor('long', '1h'),
      syncnap: waitFor('syncnap', '1h', true),
      keyednap: waitFor('keyednap', '1h', true).replace(
        '  response: { mode: sync }',
        `  response: { mode: sync, timeoutMs: 15000 }\n  idempotencyKey: "{% $trigger.headers.'x-key' %}"`,
      ),
      approve: waitForCallback('approve', '1h'),
      hurry: waitForCallback('hurry', '1s'),
    });
    const databaseUrl = kind === 'postgres' ? schema.url : undefined;
    server = await startTestServer({ dir: dir.path, databaseUrl, env: { HCM_RUNNER_MAX_WAITING: '2' } });
    expect(server.runtime.store.kind).toBe(kind);
  });

  afterAll(async () => {
    await server?.stop();
    await counter?.close();
    dir?.remove();
    if (kind === 'postgres') await schema.drop();
  });

  describe('core.wait', () => {
    it('an execution waits as `waiting` with its wakeAt, holds no worker, and succeeds after it with wokeAt', { timeout: 20_000 }, async () => {
      const t0 = Date.now();
      const id = await start('nap');
      const waiting = await server.waitForExecution(id, ['waiting']);
      expect(waiting.wakeAt).toBeDefined();
      expect(Date.parse(waiting.wakeAt)).toBeGreaterThan(t0);
      expect(waiting.waitingFor).toMatchObject({ step: 'pause', kind: 'time' });
      expect(server.runtime.dispatcher.runningCount).toBe(0);
      const done = await server.waitForExecution(id);
      expect(done.status).toBe('succeeded');
      expect(done.attempt).toBe(1);
      const pause = done.steps.find((s: { id: string }) => s.id === 'pause');
      expect(pause.status).toBe('succeeded');
      expect(Date.parse(pause.results.wokeAt)).toBeGreaterThanOrEqual(Date.parse(waiting.wakeAt));
      // Woken within the promised second, and the step before the wait ran once.
      expect(Date.parse(pause.results.wokeAt) - Date.parse(waiting.wakeAt)).toBeLessThan(1500);
      expect(counter.hits('/nap/before')).toBe(1);
      expect(counter.hits('/nap/after')).toBe(1);
    });

    it('a synchronous caller of a run that starts waiting gets 202 {executionId, status: waiting, wakeAt} at once', { timeout: 20_000 }, async () => {
      const res = await fetch(server.urls('syncnap').live, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ base: counter.url }),
      });
      expect(res.status).toBe(202);
      const body = (await res.json()) as { executionId: string; status: string; wakeAt: string };
      expect(body).toMatchObject({ status: 'waiting', waitingFor: { step: 'pause', kind: 'time' } });
      expect(res.headers.get('x-execution-id')).toBe(body.executionId);
      // Durable: the store has it, waiting.
      expect(await get(body.executionId)).toMatchObject({ status: 'waiting', wakeAt: body.wakeAt });
      expect((await server.runtime.cancel(body.executionId)).outcome).toBe('cancelled');
    });

    it("a synchronous duplicate (same idempotency key) of a waiting run gets the original's 202 at once, not a 504 after timeoutMs", {
      timeout: 30_000,
    }, async () => {
      const send = () =>
        fetch(server.urls('keyednap').live, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-key': `k-${kind}` },
          body: JSON.stringify({ base: counter.url }),
        });
      const first = await send();
      expect(first.status).toBe(202);
      const body = (await first.json()) as { executionId: string };
      const t0 = Date.now();
      const again = await send();
      expect(Date.now() - t0).toBeLessThan(5000); // timeoutMs is 15 s
      expect(again.status).toBe(202);
      expect(again.headers.get('x-idempotent-replay')).toBe('true');
      expect(await again.json()).toMatchObject({ executionId: body.executionId, status: 'waiting', waitingFor: { step: 'pause', kind: 'time' } });
      // Cancelled, a duplicate is told so, like the original's caller would have been.
      expect((await server.runtime.cancel(body.executionId)).outcome).toBe('cancelled');
      const late = await send();
      expect(late.status).toBe(500);
      expect(await late.json()).toMatchObject({ executionId: body.executionId, error: expect.stringContaining('cancelled by an operator') });
    });
  });

  describe('callbacks', () => {
    it('the first request resumes the execution (202), a second is 409, an unknown token 404', { timeout: 20_000 }, async () => {
      const id = await start('approve');
      const waiting = await server.waitForExecution(id, ['waiting']);
      const url: string = waiting.waitingFor.callbackUrl;
      expect(url.startsWith(`${server.publicUrl}/callbacks/`)).toBe(true);
      expect(waiting.steps.find((s: { id: string }) => s.id === 'cb').results.url).toBe(url);

      // Probes do not take the URL's one request.
      expect((await fetch(url, { method: 'HEAD' })).status).toBe(405);
      expect((await fetch(url, { method: 'OPTIONS' })).status).toBe(405);
      const first = await fetch(`${url}?decision=yes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer secret-of-the-approver' },
        body: JSON.stringify({ approved: true }),
      });
      expect(first.status).toBe(202);
      expect(await first.json()).toEqual({ executionId: id });
      // Public edge answers carry the edge's headers.
      expect(first.headers.get('content-security-policy')).toContain('sandbox');

      const second = await fetch(url, { method: 'POST', body: 'again' });
      expect(second.status).toBe(409);
      expect(((await second.json()) as { error: string }).error).toMatch(/used already/);

      const unknown = await fetch(`${server.publicUrl}/callbacks/${'A'.repeat(43)}`, { method: 'POST', body: '{}' });
      expect(unknown.status).toBe(404);
      expect((await fetch(`${server.publicUrl}/callbacks/not-a-token`)).status).toBe(404);

      const done = await server.waitForExecution(id);
      expect(done.status).toBe('succeeded');
      const approval = done.steps.find((s: { id: string }) => s.id === 'approval');
      expect(approval.results).toMatchObject({
        method: 'POST',
        body: { approved: true },
        queryParameters: { decision: 'yes' },
        headers: { authorization: '[redacted]' },
      });
      expect(approval.results.receivedAt).toBeDefined();
      expect(counter.hits('/approve/after')).toBe(1);
    });

    it('a callback body past the limit is 413 and records nothing (the URL still accepts a request)', { timeout: 20_000 }, async () => {
      const id = await start('approve');
      const url: string = (await server.waitForExecution(id, ['waiting'])).waitingFor.callbackUrl;
      const big = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(6 * 1024 * 1024 + 1) });
      expect(big.status).toBe(413);
      expect((await get(id)).status).toBe('waiting');
      expect((await fetch(url, { method: 'POST', body: 'ok' })).status).toBe(202);
      expect((await server.waitForExecution(id)).status).toBe('succeeded');
    });

    it('without a request before its timeout the wait step fails with code timeout', { timeout: 20_000 }, async () => {
      const id = await start('hurry');
      await server.waitForExecution(id, ['waiting']);
      const done = await server.waitForExecution(id);
      expect(done.status).toBe('failed');
      const approval = done.steps.find((s: { id: string }) => s.id === 'approval');
      expect(approval.error.code).toBe('timeout');
      expect(counter.hits('/hurry/after')).toBe(0);
    });
  });

  describe('the cap on waiting executions (HCM_RUNNER_MAX_WAITING=2 here)', () => {
    it('at the cap the wait step fails with code waiting_limit, naming the integration, the limit and the setting', { timeout: 20_000 }, async () => {
      const a = await start('long');
      const b = await start('long');
      await server.waitForExecution(a, ['waiting']);
      await server.waitForExecution(b, ['waiting']);
      const c = await start('long');
      const failed = await server.waitForExecution(c);
      expect(failed.status).toBe('failed');
      const pause = failed.steps.find((s: { id: string }) => s.id === 'pause');
      expect(pause.error.code).toBe('waiting_limit');
      expect(pause.error.message).toMatch(/integration long .*2 waiting executions.*--max-waiting \/ HCM_RUNNER_MAX_WAITING/);
      for (const id of [a, b]) expect((await server.runtime.cancel(id)).outcome).toBe('cancelled');
    });
  });

  describe('cancel', () => {
    it('a waiting execution is cancelled at once and never wakes', { timeout: 20_000 }, async () => {
      const id = await start('long');
      await server.waitForExecution(id, ['waiting']);
      const outcome = await server.runtime.cancel(id);
      expect(outcome.outcome).toBe('cancelled');
      expect((await get(id)).status).toBe('cancelled');
      expect((await server.runtime.cancel(id)).outcome).toBe('finished');
      expect((await server.runtime.cancel('no-such-execution')).outcome).toBe('unknown');
    });

    it('a running execution stops at once: its running request is aborted, the steps after it never run', { timeout: 20_000 }, async () => {
      const id = await start('chain');
      await counter.held('/hold/three');
      const t0 = Date.now();
      const outcome = await server.runtime.cancel(id);
      expect(outcome.outcome).toBe('requested');
      // Aborted by the cancel itself, not a second later by the check for other replicas' cancels.
      const live = (server.runtime.dispatcher as unknown as { live: { get(id: string): { cancel: AbortController } | undefined } }).live;
      expect(live.get(id)?.cancel.signal.aborted).toBe(true);
      const done = await server.waitForExecution(id, ['cancelled', 'succeeded', 'failed']);
      expect(done.status).toBe('cancelled');
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(counter.hits('/four')).toBe(0);
      expect(done.steps.map((s: { id: string }) => s.id)).toEqual(['one', 'two', 'three']);
      counter.release('/hold/three');
    });
  });

  describe('cancel of a synchronous run', () => {
    it('its caller gets 500 saying it was cancelled', { timeout: 20_000 }, async () => {
      counter.reset('/hold/three');
      const answer = fetch(server.urls('syncchain').live, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ base: counter.url }),
      });
      await counter.held('/hold/three');
      const [run] = server.runtime.dispatcher.liveSummaries({ integration: 'syncchain' });
      expect((await server.runtime.cancel(run!.id)).outcome).toBe('requested');
      const res = await answer;
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'integration syncchain: the execution was cancelled by an operator', executionId: run!.id });
      expect((await server.waitForExecution(run!.id, ['cancelled'])).status).toBe('cancelled');
      counter.release('/hold/three');
    });
  });

  describe('cancel requested by another replica', () => {
    it('the process running the execution sees the flag within a second and stops it', { timeout: 20_000 }, async () => {
      counter.reset('/hold/three');
      const id = await start('chain');
      await counter.held('/hold/three');
      // What another replica's cancel does: the store flags the running row; this process is not told.
      expect((await server.runtime.store.cancelExecution(id, new Date())).outcome).toBe('requested');
      const done = await server.waitForExecution(id, ['cancelled', 'succeeded', 'failed']);
      expect(done.status).toBe('cancelled');
      expect(counter.hits('/four')).toBe(0);
    });
  });

  describe('the waker', () => {
    it('stops with the runtime: nothing fires after stop, and it does not hold the process', async () => {
      const waker = server.runtime.waker;
      await poll(async () => ((waker as unknown as { timer?: NodeJS.Timeout }).timer ? true : undefined));
      const timer = (waker as unknown as { timer: NodeJS.Timeout }).timer;
      expect(timer.hasRef()).toBe(false);
    });
  });
});
