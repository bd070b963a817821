/**
 * A small client for the running server's admin API, shared by the client commands
 * (executions, listen, payloads, urls, connect). Server: `adminBaseUrl` (--server URL, else the
 * admin listener of HCM_RUNNER_ADMIN_PORT, else HCM_RUNNER_PUBLIC_URL, else http://127.0.0.1:8080); token: HCM_RUNNER_ADMIN_TOKEN, else the one `serve` stored in
 * `--data` (default ./data) — see `adminTokenFor`.
 */
import { request } from 'undici';
import { ADMIN_TOKEN_ENV, adminTokenPath, readStoredAdminToken } from '../server/admin-token.js';
import { resolveSetting, resolveSettings } from '../settings/resolve.js';

/** The flags every client command takes. */
export const serverFlag = { server: { type: 'string' as const }, data: { type: 'string' as const } };

export const clientHelp = `  --server URL     the running server's admin API (default: with $HCM_RUNNER_ADMIN_PORT set, that
                   port on $HCM_RUNNER_ADMIN_HOST or 127.0.0.1; else $HCM_RUNNER_PUBLIC_URL or
                   http://127.0.0.1:8080)
  --data DIR       the server's data directory, where \`serve\` stored the admin token (default ./data)
The admin token is HCM_RUNNER_ADMIN_TOKEN when set, else the one stored in --data.`;

export const DEFAULT_DATA_DIR = 'data';

/**
 * Where a client command finds the admin API: `--server URL`; else, when HCM_RUNNER_ADMIN_PORT is
 * set (the same variables `serve --admin-port` reads, so one environment serves both), that port on
 * HCM_RUNNER_ADMIN_HOST (all interfaces and unset: loopback); else HCM_RUNNER_PUBLIC_URL; else
 * http://127.0.0.1:8080. With an admin port, the public URL answers 404 under /api.
 */
export function adminBaseUrl(server: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  let base = server;
  if (base) return base.replace(/\/+$/, '');
  const { adminPort, adminHost, publicUrl } = resolveSettings(['adminPort', 'adminHost', 'publicUrl'], { env });
  if (adminPort !== undefined) {
    const host = adminHost ?? '127.0.0.1';
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    base = `http://${shown}:${adminPort}`;
  }
  return (base ?? publicUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
}

export interface AdminTokenSource {
  token?: string;
  /** Where it came from: the environment, the data directory's file, or nowhere. */
  from: 'env' | 'file' | 'none';
  /** The file looked at (for messages). */
  file: string;
}

/**
 * The admin token a client uses: HCM_RUNNER_ADMIN_TOKEN when set, else `<dataDir>/admin-token`
 * (written by `serve`). The one reader for every client command, `test --record` included.
 */
export async function adminTokenFor(dataDir: string = DEFAULT_DATA_DIR, env: NodeJS.ProcessEnv = process.env): Promise<AdminTokenSource> {
  const file = adminTokenPath(dataDir);
  const configured = resolveSetting('adminToken', { env });
  if (configured) return { token: configured, from: 'env', file };
  const token = await readStoredAdminToken(dataDir);
  return token ? { token, from: 'file', file } : { from: 'none', file };
}

export class AdminError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export class AdminClient {
  readonly base: string;
  private token?: Promise<AdminTokenSource>;

  constructor(
    server?: string,
    private readonly dataDir: string = DEFAULT_DATA_DIR,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.base = adminBaseUrl(server, env);
  }

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const source = await (this.token ??= adminTokenFor(this.dataDir, this.env));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (source.token) headers.authorization = `Bearer ${source.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await request(`${this.base}/api${path}`, {
        method: method as 'GET',
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new AdminError(`cannot reach the server at ${this.base}: ${(err as Error).message} (is \`hcm-runner serve\` running? use --server URL)`);
    }
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (res.statusCode >= 400) {
      const msg = parsed && typeof parsed === 'object' && 'error' in parsed ? String((parsed as { error: unknown }).error) : text;
      const hint = res.statusCode === 401 ? unauthorizedHint(source) : '';
      throw new AdminError(`${method} ${path}: ${res.statusCode} ${msg}${hint}`, res.statusCode);
    }
    return parsed as T;
  }
}

function unauthorizedHint(source: AdminTokenSource): string {
  if (source.from === 'env')
    return ` (the server does not accept ${ADMIN_TOKEN_ENV}; unset it to use the token in ${source.file}, or set the one the server printed)`;
  if (source.from === 'file')
    return ` (the server does not accept the token in ${source.file}: pass --data with the server's data directory, or set ${ADMIN_TOKEN_ENV})`;
  return ` (no admin token: ${ADMIN_TOKEN_ENV} is not set and ${source.file} does not exist — pass --data with the server's data directory, or set ${ADMIN_TOKEN_ENV} to the token the server printed)`;
}

/** Runs a client command: prints AdminErrors as one line and exits 1. */
export async function runClient(fn: () => Promise<void>): Promise<number> {
  try {
    await fn();
    return 0;
  } catch (err) {
    if (err instanceof AdminError) {
      process.stderr.write(`hcm-runner: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export const enc = encodeURIComponent;
