/**
 * Access tokens reused from memory (oauth/provider.ts, TokenStore.peek) with two replicas sharing
 * one PostgreSQL store: a call does not read the store for a token this replica just used; a
 * token the other replica refreshed is still found in the store when this replica's is rejected;
 * a deleted connection's token is not used again. Needs the local PostgreSQL (like
 * test/store/postgres.test.ts: scripts/ensure-postgres.sh).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hcmConnector } from '../../../src/connectors/hcm/index.js';
import { tokenStoreKey } from '../../../src/connectors/hcm/oauth/config.js';
import type { ActionContext, ResolvedConnection } from '../../../src/connectors/types.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { connectionFor, decl, failure } from './helpers.js';

const url = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `t_${randomBytes(6).toString('hex')}`;
const tokenKey = randomBytes(32);

let sb: Sandbox;
let a: PostgresStore;
let b: PostgresStore;
let conn: ResolvedConnection;
let key: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  a = await PostgresStore.open({ databaseUrl: url, schema, tokenKey });
  b = await PostgresStore.open({ databaseUrl: url, schema, tokenKey });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await sb?.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await c.end();
});
beforeEach(async () => {
  // A fresh start each test: nothing stored, nothing remembered by either replica.
  conn = connectionFor(sb, { refreshToken: sb.issueRefreshToken() });
  key = tokenStoreKey(conn);
  await a.tokens.delete(key);
  await b.tokens.delete(key);
  sb.clearRequests();
});

/** One HCM call from a replica (its store's tokens are the runtime's token store). */
function call(replica: PostgresStore, integration: string): Promise<unknown> {
  const ctx: ActionContext = {
    integration,
    stepId: 'step',
    action: decl('listWorkers'),
    executionId: 'exec-1',
    test: false,
    signal: new AbortController().signal,
    connection: conn,
    services: { tokens: replica.tokens, publicUrl: 'http://127.0.0.1:1' },
    log: () => undefined,
    respond: () => undefined,
  };
  return hcmConnector.invoke(decl('listWorkers'), { limit: 1 }, ctx);
}
const bearers = () => sb.requests.filter((r) => r.path.includes('/workers')).map((r) => r.headers.authorization);

describe('HCM access tokens reused from memory, replicas sharing PostgreSQL', () => {
  it('a second call takes the token from memory: no store read', async () => {
    await call(a, 'reuse');
    expect(sb.tokenRequests).toHaveLength(1);
    // Behind the store's back, the row becomes unreadable: a read would fail to decrypt it.
    const { rows } = await a.pool.query(`SELECT blob FROM ${schema}.tokens WHERE key = $1`, [key]);
    await a.pool.query(`UPDATE ${schema}.tokens SET blob = 'v1:AAAA:AAAA:AAAA' WHERE key = $1`, [key]);
    try {
      await expect(call(a, 'reuse')).resolves.toBeTruthy();
      expect(new Set(bearers()).size).toBe(1);
    } finally {
      await a.pool.query(`UPDATE ${schema}.tokens SET blob = $2 WHERE key = $1`, [key, rows[0].blob]);
    }
  });

  it('a token the other replica refreshed is found in the store when this one is rejected (401): no second refresh', async () => {
    await call(a, 'replica-a');
    await call(b, 'replica-b'); // both hold the first token now
    const [first] = bearers();
    sb.expireAllTokens();
    sb.clearRequests();
    await call(b, 'replica-b'); // 401, refresh (the refresh token rotates), retry
    expect(sb.tokenRequests).toHaveLength(1);
    const refreshed = bearers()[1];
    expect(refreshed).not.toBe(first);
    await call(a, 'replica-a'); // its remembered token gets a 401; the store has the refreshed one
    expect(sb.tokenRequests).toHaveLength(1);
    expect(bearers()).toEqual([first, refreshed, first, refreshed]);
  });

  it('after delete (disconnect) the remembered token is not used', async () => {
    await call(a, 'deleted');
    const used = await a.tokens.get(key);
    // The configured refresh token was rotated by the first refresh: nothing valid is left.
    await a.tokens.delete(key);
    sb.clearRequests();
    const err = await failure(call(a, 'deleted'));
    expect(err.details.code).toBe('needs_authorization');
    expect(bearers()).not.toContain(`Bearer ${used!.accessToken}`);
    expect(bearers()).toHaveLength(0);
  });
});
