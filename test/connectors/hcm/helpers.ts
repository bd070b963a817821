import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { hcmActions, hcmConnector } from '../../../src/connectors/hcm/index.js';
import { FileTokenStore } from '../../../src/store/file-token-store.js';
import type { ActionContext, LogLevel, ResolvedConnection } from '../../../src/connectors/types.js';

export interface Harness {
  sb: Sandbox;
  dir: string;
  tokens: FileTokenStore;
  connection: ResolvedConnection;
  integration: string;
  logs: Array<{ level: LogLevel; message: string }>;
  close(): Promise<void>;
}

let counter = 0;

export function connectionFor(sb: Sandbox, extra: Record<string, unknown> = {}): ResolvedConnection {
  return {
    name: 'hcm',
    type: 'hcm-oauth2',
    config: {
      authorizeUrl: sb.authorizeUrl,
      tokenUrl: sb.tokenUrl,
      apiUrl: sb.apiUrl,
      tenantId: 'acme',
      clientId: 'sandbox-client',
      clientSecret: 'sandbox-secret',
      ...extra,
    },
  };
}

/** A sandbox, a file token store in a temp dir, and a headless connection (sandbox-issued refresh token). */
export async function harness(opts: Parameters<typeof startSandbox>[0] = {}, headless = true): Promise<Harness> {
  const sb = await startSandbox({ port: 0, quiet: true, ...opts });
  const dir = await mkdtemp(join(tmpdir(), 'hcm-test-'));
  const tokens = new FileTokenStore(dir);
  const connection = connectionFor(sb, headless ? { refreshToken: sb.issueRefreshToken() } : {});
  return {
    sb,
    dir,
    tokens,
    connection,
    integration: `it-${process.pid}-${++counter}`,
    logs: [],
    async close() {
      await sb.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function decl(key: string) {
  const d = hcmActions.find((a) => a.key === `hcm.${key}`);
  if (!d) throw new Error(`no action ${key}`);
  return d;
}

export function ctxFor(h: Harness, key: string, signal = new AbortController().signal): ActionContext {
  return {
    integration: h.integration,
    stepId: 'step',
    action: decl(key),
    executionId: 'exec-1',
    test: false,
    signal,
    connection: h.connection,
    services: { tokens: h.tokens, publicUrl: 'http://127.0.0.1:1' },
    log: (level, message) => h.logs.push({ level, message }),
    respond: () => undefined,
  };
}

export function invoke(h: Harness, key: string, inputs: Record<string, unknown> = {}, signal?: AbortSignal): Promise<unknown> {
  return hcmConnector.invoke(decl(key), inputs, ctxFor(h, key, signal));
}

/** Resolves to the thrown error (fails if nothing was thrown). */
export async function failure(p: Promise<unknown>): Promise<Error & { details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { details: Record<string, unknown> };
  }
  throw new Error('expected a failure');
}

/** API requests only (no token endpoint), newest last. */
export const apiRequests = (h: Harness) => h.sb.requests.filter((r) => !r.path.includes('/oauth2/'));
