/**
 * OAuth across replicas (docs/promises.md "one refresh at a time per connection, also across
 * replicas"): three replicas share one HCM connection; under concurrent use from all of them the
 * sandbox sees one token request per needed refresh. The browser flow started on one replica
 * completes on another (pending state in the store).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { postJson, scaleFixtures, startCluster, type Cluster } from './cluster.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';

let sb: Sandbox;
let c: Cluster;
beforeAll(async () => {
  // Tokens live 12 s: their refresh margin is a fifth of that, so 10 s after issue they are inside
  // it (and still valid). The first burst must finish before that (it takes well under a second
  // on an idle machine).
  sb = await startSandbox({ port: 0, quiet: true, tokenLifetimeSec: 12 });
  c = await startCluster({
    dir: join(scaleFixtures, 'oauth'),
    replicas: 3,
    env: sandboxEnv(sb, { refreshToken: sb.issueRefreshToken() }),
  });
});
afterAll(async () => {
  await c?.stop();
  await sb?.close();
});

async function burst(live: string, n: number): Promise<void> {
  const ids = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await postJson(c.at(live, i % 3), { i });
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { executionId: string }).executionId;
    }),
  );
  const records = await c.waitFinished(ids);
  for (const r of records) expect({ id: r.id, status: r.status, error: r.error }).toEqual({ id: r.id, status: 'succeeded', error: undefined });
}

describe('OAuth connections shared by replicas', () => {
  it('one token request under concurrent use from all replicas, again when the token nears expiry', { timeout: 60_000 }, async () => {
    const live = (await c.api(0, 'GET', '/integrations/workers')).body.webhookUrls.live as string;
    sb.clearRequests();
    await burst(live, 18);
    expect(sb.tokenRequests.filter((r) => (r.body as { grant_type?: string } | undefined)?.grant_type === 'refresh_token')).toHaveLength(1);
    expect(sb.tokenRequests).toHaveLength(1);

    // Now inside the refresh margin: the next uses refresh once, cluster-wide, and all use the new token.
    await new Promise((r) => setTimeout(r, 10_000));
    sb.clearRequests();
    await burst(live, 18);
    expect(sb.tokenRequests).toHaveLength(1);
    const tokens = new Set(sb.requests.filter((r) => r.path.includes('/workers')).map((r) => r.headers.authorization));
    expect(tokens.size).toBe(1);
  });

  it('the browser flow started on one replica completes on another', async () => {
    const start = await c.api(1, 'POST', '/integrations/workers/connections/hcm/authorize');
    expect(start.status).toBe(200);
    expect(start.body.redirectUri).toBe(`${c.publicUrl}/oauth/callback`);
    const login = await fetch(start.body.url, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const callback = login.headers.get('location')!;
    expect(callback.startsWith(`${c.publicUrl}/oauth/callback?`)).toBe(true);
    const done = await fetch(c.at(callback, 2), { headers: { accept: 'application/json' } });
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ status: 'connected', integration: 'workers', connection: 'hcm' });
    // Single use, on any replica.
    expect((await fetch(c.at(callback, 0))).status).toBe(400);
  });
});
