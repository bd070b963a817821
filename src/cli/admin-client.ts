/**
 * A small client for the running server's admin API, shared by the client commands
 * (executions, listen, payloads, urls). Server: --server URL, else HCM_RUNNER_PUBLIC_URL, else
 * http://127.0.0.1:8080; token: HCM_RUNNER_ADMIN_TOKEN.
 */
import { request } from 'undici';

export const serverFlag = { server: { type: 'string' as const } };

export const clientHelp = `  --server URL     the running server (default $HCM_RUNNER_PUBLIC_URL or http://127.0.0.1:8080)
The admin token is read from HCM_RUNNER_ADMIN_TOKEN.`;

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
  private readonly token?: string;

  constructor(server?: string, env: NodeJS.ProcessEnv = process.env) {
    this.base = (server ?? env.HCM_RUNNER_PUBLIC_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.token = env.HCM_RUNNER_ADMIN_TOKEN;
  }

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
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
      const hint = res.statusCode === 401 ? (this.token ? ' (check HCM_RUNNER_ADMIN_TOKEN)' : ' (set HCM_RUNNER_ADMIN_TOKEN to the token the server printed)') : '';
      throw new AdminError(`${method} ${path}: ${res.statusCode} ${msg}${hint}`, res.statusCode);
    }
    return parsed as T;
  }
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
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export const enc = encodeURIComponent;
