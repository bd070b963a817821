/**
 * The runtime's DurableHost (src/runtime/durable-host.ts) over a real SQLite store: callback URLs
 * (256-bit tokens under the public URL, kept in the store), reading the token back from a URL,
 * what a wait finds (received, pending, unknown — another execution's token too) and the cap on
 * waiting executions with its error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ActionError } from '../../src/common/errors.js';
import { createDurableHost } from '../../src/runtime/durable-host.js';
import { execution, type TempStore, tempStore } from './dispatch/helpers.js';

const open: TempStore[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

async function setup(maxWaiting = 10) {
  const t = await tempStore();
  open.push(t);
  const durable: string[] = [];
  const host = createDurableHost({
    store: t.store,
    publicUrl: 'https://runner.example.com/base/',
    maxWaiting,
    makeDurable: async (id) => {
      durable.push(id);
    },
  });
  return { t, host, durable };
}

const expiresAt = () => new Date(Date.now() + 3_600_000).toISOString();

describe('the runtime DurableHost', () => {
  it('makes unguessable callback URLs under the public URL, kept in the store, the run made durable first', async () => {
    const { t, host, durable } = await setup();
    const e = execution('w');
    await t.store.enqueue([e]);
    const req = { executionId: e.id, integration: 'w', step: 'cb', expiresAt: expiresAt(), test: false };
    const a = await host.createCallback(req);
    const b = await host.createCallback(req);
    expect(a.url).toMatch(/^https:\/\/runner\.example\.com\/base\/callbacks\/[A-Za-z0-9_-]{43}$/);
    expect(a.url).not.toBe(b.url);
    expect(durable).toEqual([e.id, e.id]);
    const token = host.tokenOf(a.url)!;
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(await t.store.getCallback(token)).toMatchObject({ executionId: e.id, integration: 'w', step: 'cb' });
    // A URL of the same token under another public URL still names it; anything else names none.
    expect(host.tokenOf(`http://old-name:8080/callbacks/${token}`)).toBe(token);
    expect(host.tokenOf('https://runner.example.com/base/callbacks/short')).toBeUndefined();
    expect(host.tokenOf('https://elsewhere.example.com/hook')).toBeUndefined();
    expect(host.tokenOf('not a url')).toBeUndefined();
  });

  it("a wait finds its request, or that it is pending; another execution's token is unknown", async () => {
    const { t, host } = await setup();
    const [e, other] = [execution('w'), execution('w')];
    await t.store.enqueue([e, other]);
    const expires = expiresAt();
    const { url } = await host.createCallback({ executionId: e.id, integration: 'w', step: 'cb', expiresAt: expires, test: false });
    const token = host.tokenOf(url)!;
    expect(await host.lookupCallback(token, e.id, 'wait')).toEqual({ state: 'pending', expiresAt: expires });
    expect(await host.lookupCallback(token, other.id, 'wait')).toEqual({ state: 'unknown' });
    expect(await host.lookupCallback('x'.repeat(43), e.id, 'wait')).toEqual({ state: 'unknown' });
    const request = { method: 'POST', headers: {}, queryParameters: {}, body: { approved: true }, receivedAt: new Date().toISOString() };
    expect(await t.store.receiveCallback(token, request, new Date())).toEqual({ outcome: 'accepted', executionId: e.id });
    expect(await host.lookupCallback(token, e.id, 'wait')).toEqual({ state: 'received', request });
  });

  it('admits waits up to the cap, then refuses with code waiting_limit naming the integration, the limit and the setting', async () => {
    const { t, host, durable } = await setup(1);
    const [a, b] = [execution('w'), execution('w')];
    await t.store.enqueue([a, b]);
    await host.admitWait('w', a.id);
    expect(durable).toEqual([a.id]);
    const record = (await t.store.markRunning(a.id, 1))!;
    await t.store.saveExecution({ ...record, status: 'waiting', wakeAt: expiresAt(), waitingFor: { step: 'pause', kind: 'time' } }, { stored: true });
    const refused = await host.admitWait('w', b.id).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ActionError);
    expect((refused as ActionError).details.code).toBe('waiting_limit');
    expect((refused as Error).message).toMatch(
      /^integration w has 1 waiting executions, the most it may have \(1\);.*--max-waiting \/ HCM_RUNNER_MAX_WAITING/,
    );
    expect(durable).toEqual([a.id]);
    // Another integration has its own count.
    await host.admitWait('v', b.id);
  });
});
