/**
 * appEvent triggers over real HTTP: a fake third-party API (started here) receives the subscribe
 * and unsubscribe calls; events posted to the live URL run with `$state.subscribe`. Covers start,
 * restart with an unchanged definition (no calls), disable / enable / removal through hot reload,
 * listening mode of a disabled integration, and a failed subscribe tried again.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch, type RequestInit } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { freePort, poll, tempDir, thirdParty, write, type ThirdParty } from './helpers.js';

const ADMIN = 'trigger-admin';
// No keep-alive: a restarted server on the same port must not meet connections of the old one.
const agent = new Agent({ pipelining: 0 });
const fetch = (url: string, init: RequestInit = {}) => undiciFetch(url, { ...init, dispatcher: agent });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const file = (opts: { enabled?: boolean; event?: string } = {}) => `
name: contacts
enabled: ${opts.enabled ?? true}
config:
  api: { env: THIRD_PARTY_URL }
trigger:
  type: appEvent
  subscribe:
    - id: create
      action: core.http
      inputs:
        url: "{% $config.api & '/hooks' %}"
        method: POST
        data: "{% {'url': $trigger.webhookUrl, 'live': $trigger.webhookUrls.live, 'mode': $trigger.mode, 'event': '${opts.event ?? 'contact.changed'}'} %}"
  unsubscribe:
    - id: remove
      action: core.http
      inputs:
        url: "{% $config.api & '/hooks/' & $state.subscribe.create.body.id %}"
        method: DELETE
  response: { mode: sync }
steps:
  - id: handle
    action: core.transform
    inputs:
      value: "{% {'hook': $state.subscribe.create.body.id, 'contact': $trigger.body.data.contact} %}"
`;

interface Env {
  dir: string;
  data: string;
  port: number;
  api: ThirdParty;
  start(): Promise<RunningServer>;
}

async function setup(): Promise<Env> {
  const dir = tempDir('hcm-appevent-dir-');
  const data = tempDir('hcm-appevent-data-');
  const api = await thirdParty();
  cleanups.push(dir.remove, data.remove, () => api.close());
  const port = await freePort();
  return {
    dir: dir.path,
    data: data.path,
    port,
    api,
    start: async () => {
      const server = await startServer({
        dir: dir.path,
        dataDir: data.path,
        port,
        publicUrl: `http://127.0.0.1:${port}`,
        adminToken: ADMIN,
        logLevel: 'silent',
        retentionDays: 0,
        shutdownGraceMs: 1000,
        allowPrivateNetwork: true, // the third-party fake listens on loopback
        env: { ...process.env, THIRD_PARTY_URL: api.url },
      });
      let closed = false;
      const close = server.close;
      server.close = async (g) => {
        closed = true;
        await close(g);
      };
      cleanups.push(() => (closed ? undefined : server.close(500)));
      return server;
    },
  };
}

async function admin(server: RunningServer, method: string, path: string): Promise<any> {
  const res = await fetch(`${server.url}/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const calls = (api: ThirdParty) => api.requests.map((r) => `${r.method} ${r.path}`);
const waitCalls = (api: ThirdParty, n: number) => poll(async () => (api.requests.length >= n ? calls(api) : undefined));

describe('appEvent trigger', () => {
  it('subscribes on start with the live URL, runs events with $state, does not re-subscribe on restart, unsubscribes on disable and removal', async () => {
    const env = await setup();
    write(env.dir, 'contacts.yaml', file());
    let server = await env.start();
    const live = server.runtime.webhookUrls('contacts')!.live;

    expect(await waitCalls(env.api, 1)).toEqual(['POST /hooks']);
    expect(env.api.requests[0]!.body).toEqual({ url: live, live, mode: 'live', event: 'contact.changed' });
    await server.runtime.triggers.idle();
    const view = await admin(server, 'GET', '/integrations/contacts');
    expect(view.body.subscription).toMatchObject({ status: 'subscribed', mode: 'live', url: live });
    expect(await server.runtime.store.getState('contacts', 'subscribe')).toMatchObject({
      results: { create: { status: 201, body: { id: 'hook-1' } } },
    });

    // An event at the live URL runs the steps with $state.subscribe.
    const res = await fetch(live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contact: 'c-42' }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hook: 'hook-1', contact: 'c-42' });

    // Restart with the same definition: neither unsubscribe nor subscribe.
    await server.close(500);
    server = await env.start();
    await server.runtime.triggers.idle();
    expect(calls(env.api)).toEqual(['POST /hooks']);
    expect(server.runtime.webhookUrls('contacts')!.live).toBe(live);
    expect((await admin(server, 'GET', '/integrations/contacts')).body.subscription).toMatchObject({ status: 'subscribed' });
    const again = await fetch(live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contact: 'c-43' }) });
    expect(await again.json()).toEqual({ hook: 'hook-1', contact: 'c-43' });

    // Editing the steps only (not what the subscription depends on) keeps the subscription.
    write(env.dir, 'contacts.yaml', file().replace("'contact': $trigger.body.data.contact", "'contact': $trigger.body.data.contact, 'v': 2"));
    await poll(async () => {
      const r = await fetch(live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"contact":"c-44"}' });
      const body = (await r.json()) as any;
      return body.v === 2 ? body : undefined;
    });
    await server.runtime.triggers.idle();
    expect(calls(env.api)).toEqual(['POST /hooks']);

    // Disable: unsubscribe with $state, then the live URL is gone.
    write(env.dir, 'contacts.yaml', file({ enabled: false }));
    expect(await waitCalls(env.api, 2)).toEqual(['POST /hooks', 'DELETE /hooks/hook-1']);
    await server.runtime.triggers.idle();
    expect(await server.runtime.store.getState('contacts', 'subscribe')).toBeUndefined();
    expect((await fetch(live, { method: 'POST', body: '{}' })).status).toBe(404);

    // Enable again: a new subscription.
    write(env.dir, 'contacts.yaml', file());
    expect(await waitCalls(env.api, 3)).toEqual(['POST /hooks', 'DELETE /hooks/hook-1', 'POST /hooks']);
    await server.runtime.triggers.idle();

    // A change the subscription depends on (the event subscribed to): unsubscribe the old, subscribe the new.
    write(env.dir, 'contacts.yaml', file({ event: 'contact.created' }));
    expect(await waitCalls(env.api, 5)).toEqual(['POST /hooks', 'DELETE /hooks/hook-1', 'POST /hooks', 'DELETE /hooks/hook-2', 'POST /hooks']);
    expect(env.api.requests[4]!.body.event).toBe('contact.created');
    await server.runtime.triggers.idle();

    // Removal: unsubscribe; the live URL answers 404.
    rmSync(join(env.dir, 'contacts.yaml'));
    expect(await waitCalls(env.api, 6)).toEqual([
      'POST /hooks',
      'DELETE /hooks/hook-1',
      'POST /hooks',
      'DELETE /hooks/hook-2',
      'POST /hooks',
      'DELETE /hooks/hook-3',
    ]);
    expect(env.api.hooks.size).toBe(0);
    expect((await fetch(live, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('listening mode of a disabled integration subscribes the test URL and unsubscribes when it stops', async () => {
    const env = await setup();
    write(env.dir, 'contacts.yaml', file({ enabled: false }));
    const server = await env.start();
    await server.runtime.triggers.idle();
    expect(calls(env.api)).toEqual([]);
    const urls = server.runtime.webhookUrls('contacts')!;

    expect((await admin(server, 'POST', '/integrations/contacts/listen')).status).toBe(200);
    await waitCalls(env.api, 1);
    expect(env.api.requests[0]!.body).toMatchObject({ url: urls.test, live: urls.live, mode: 'test' });
    await server.runtime.triggers.idle();
    // Events to the test URL run (as test executions) with $state.
    const res = await fetch(urls.test, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"contact":"t-1"}' });
    expect(await res.json()).toEqual({ hook: 'hook-1', contact: 't-1' });

    expect((await admin(server, 'DELETE', '/integrations/contacts/listen')).status).toBe(200);
    expect(await waitCalls(env.api, 2)).toEqual(['POST /hooks', 'DELETE /hooks/hook-1']);
  });

  it('a failed subscribe is reported and tried again', async () => {
    const env = await setup();
    env.api.failNext(1);
    write(env.dir, 'contacts.yaml', file());
    const server = await env.start();
    await poll(async () => ((await admin(server, 'GET', '/integrations/contacts')).body.subscription?.status === 'failed' ? true : undefined));
    const view = (await admin(server, 'GET', '/integrations/contacts')).body;
    expect(view.subscription.error).toMatch(/503/);
    // The retry (reload, restart, or the retry timer) subscribes; SIGHUP/POST /api/reload re-sync too.
    await server.runtime.triggers.sync('contacts');
    expect(calls(env.api)).toEqual(['POST /hooks', 'POST /hooks']);
    expect((await admin(server, 'GET', '/integrations/contacts')).body.subscription).toMatchObject({ status: 'subscribed' });
  });
});
