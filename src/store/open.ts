/**
 * Opens the configured store: PostgreSQL when `databaseUrl` is a postgres:// or postgresql://
 * URL, else SQLite in `dataDir` (created if missing).
 *
 * Token encryption key: `secret` (or HCM_RUNNER_SECRET); on SQLite without either, a random
 * secret generated once into `<dataDir>/secret.key`. On PostgreSQL without either but with a
 * `dataDir`, that file is used too (replicas must then share it — prefer HCM_RUNNER_SECRET).
 */
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { deriveKey, loadTokenKey } from './token-crypto.js';
import type { Store } from './types.js';

export interface OpenStoreOptions {
  dataDir?: string;
  databaseUrl?: string;
  /** PostgreSQL schema (default `public`). */
  schema?: string;
  /** Token encryption secret (the HCM_RUNNER_SECRET setting). */
  secret?: string;
}

export function isPostgresUrl(url: string | undefined): url is string {
  return !!url && /^postgres(ql)?:\/\//i.test(url);
}

/**
 * `?schema=NAME` in a database URL selects the PostgreSQL schema (not a libpq parameter, so it is
 * taken off the URL before connecting). Without it: undefined (the store's default, `public`).
 */
export function splitSchema(databaseUrl: string): { url: string; schema?: string } {
  let u: URL;
  try {
    u = new URL(databaseUrl);
  } catch {
    return { url: databaseUrl };
  }
  const schema = u.searchParams.get('schema') ?? undefined;
  if (schema === undefined) return { url: databaseUrl };
  u.searchParams.delete('schema');
  return { url: u.toString(), schema };
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const secret = opts.secret;
  if (opts.databaseUrl && !isPostgresUrl(opts.databaseUrl)) {
    throw new Error('the database URL must start with postgres:// or postgresql://');
  }
  if (isPostgresUrl(opts.databaseUrl)) {
    let tokenKey: Buffer | undefined;
    if (secret) tokenKey = deriveKey(secret);
    else if (opts.dataDir) tokenKey = await loadTokenKey(opts.dataDir);
    const { url, schema } = splitSchema(opts.databaseUrl);
    return PostgresStore.open({ databaseUrl: url, schema: opts.schema ?? schema, tokenKey });
  }
  if (!opts.dataDir) throw new Error('no data directory given: pass --data DIR (SQLite) or --database-url postgres://… (PostgreSQL)');
  // Without a secret the key comes from `<dataDir>/secret.key`, loaded on first token use (after
  // the data directory was checked, so a bad --data gets the clearer error first).
  return SqliteStore.open(opts.dataDir, { tokenKey: secret ? deriveKey(secret) : undefined });
}
