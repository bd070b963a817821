/**
 * `startServer`: opens the store, loads the integrations, resumes unfinished executions and serves
 * the HTTP surface of docs/server.md on @hono/node-server. Used by `hcm-runner serve` and by tests
 * (in-process, port 0).
 */
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { serve, type HttpBindings, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { openStore } from '../store/open.js';
import type { QueueOptions } from '../store/queue.js';
import type { CaptureBounds } from '../store/captures.js';
import type { Store } from '../store/types.js';
import type { DispatcherLimits } from '../runtime/dispatcher.js';
import type { ExecutionQueue } from '../runtime/queue.js';
import type { RegistryEntry } from '../runtime/registry.js';
import { Runtime } from '../runtime/runtime.js';
import { intakeLimits, parseHeaderList } from '../triggers/webhook/limits.js';
import { loadOrCreateAdminToken } from './admin-token.js';
import { createApp } from './app.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics.js';
import type { AppEnv } from './types.js';
import { positiveIntEnv } from '../common/env.js';

export interface ServerOptions {
  /** Integrations folder (default ./integrations). */
  dir?: string;
  /** 0 = a free port. Default 8080. */
  port?: number;
  host?: string;
  /** SQLite data directory (default ./data) — ignored when `databaseUrl` or `store` is given. */
  dataDir?: string;
  databaseUrl?: string;
  /** An already opened store (the server closes it on close()). */
  store?: Store;
  /** Token encryption secret (default HCM_RUNNER_SECRET). */
  secret?: string;
  /** Default HCM_RUNNER_PUBLIC_URL, else http://{host}:{port}. */
  publicUrl?: string;
  /**
   * Default HCM_RUNNER_ADMIN_TOKEN; when neither, the token stored in `<dataDir>/admin-token`
   * (created once, mode 0600) — see admin-token.ts.
   */
  adminToken?: string;
  limits?: Partial<DispatcherLimits>;
  retentionDays?: number;
  /** How long shutdown waits for running executions (default 10 s). */
  shutdownGraceMs?: number;
  logger?: Logger;
  /** When no logger is given (default HCM_RUNNER_LOG_LEVEL or info). */
  logLevel?: string;
  env?: NodeJS.ProcessEnv;
  queue?: ExecutionQueue;
  /**
   * Settings of the store's queue (PostgreSQL: the shared table queue; default lease from
   * HCM_RUNNER_LEASE_SECONDS, 60 s).
   */
  queueOptions?: Omit<QueueOptions, 'logger'>;
  /** Named in every log line (default HCM_RUNNER_REPLICA_ID; on PostgreSQL else host:pid). */
  replicaId?: string;
  /**
   * Whether core.http may call private and loopback addresses (default HCM_RUNNER_ALLOW_PRIVATE_NETWORK;
   * link-local and metadata addresses are refused either way). docs/server.md "Outbound policy".
   */
  allowPrivateNetwork?: boolean;
  /** Parts of one multipart body, fields of one urlencoded form (default HCM_RUNNER_MAX_FORM_PARTS, else 1000). */
  maxFormParts?: number;
  /** Header names redacted in `$trigger.headers` besides the built-in list (default HCM_RUNNER_REDACT_HEADERS). */
  redactHeaders?: string[];
  /**
   * Listening-mode captures: bytes of `$trigger` JSON stored per capture (default
   * HCM_RUNNER_CAPTURE_MAX_BYTES, else 256 KiB) and captures kept per integration (default
   * HCM_RUNNER_CAPTURE_KEEP, else 50).
   */
  captures?: CaptureBounds;
}

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:41234. */
  url: string;
  port: number;
  /** Base of webhook and OAuth callback URLs. */
  publicUrl: string;
  adminToken: string;
  /** True when the admin token was created by this start (it was neither configured nor stored). */
  adminTokenGenerated: boolean;
  /** Where the admin token is stored, when it was not configured (HCM_RUNNER_ADMIN_TOKEN). */
  adminTokenFile?: string;
  runtime: Runtime;
  app: Hono<AppEnv>;
  /** The integrations' statuses after the initial load. */
  integrations: RegistryEntry[];
  /** Stops accepting, lets running executions finish (grace), closes the store. */
  close(graceMs?: number): Promise<void>;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export async function startServer(opts: ServerOptions = {}): Promise<RunningServer> {
  const env = opts.env ?? process.env;
  // Settings first: a bad value fails before anything is opened.
  const allowPrivateNetwork = opts.allowPrivateNetwork ?? envFlag(env.HCM_RUNNER_ALLOW_PRIVATE_NETWORK);
  const intake = intakeLimits({
    maxFormParts: opts.maxFormParts ?? positiveIntEnv(env, 'HCM_RUNNER_MAX_FORM_PARTS'),
    redactHeaders: opts.redactHeaders ?? parseHeaderList(env.HCM_RUNNER_REDACT_HEADERS),
  });
  const captures: CaptureBounds = {
    maxBytes: opts.captures?.maxBytes ?? positiveIntEnv(env, 'HCM_RUNNER_CAPTURE_MAX_BYTES'),
    keep: opts.captures?.keep ?? positiveIntEnv(env, 'HCM_RUNNER_CAPTURE_KEEP'),
  };
  let logger = opts.logger ?? createLogger(opts.logLevel ?? env.HCM_RUNNER_LOG_LEVEL ?? 'info');
  const host = opts.host ?? '127.0.0.1';
  const store = opts.store ?? (await openStore({ dataDir: resolve(opts.dataDir ?? 'data'), databaseUrl: opts.databaseUrl, secret: opts.secret }));
  const replicaId = opts.replicaId ?? env.HCM_RUNNER_REPLICA_ID ?? (store.kind === 'postgres' ? `${hostname()}:${process.pid}` : undefined);
  if (replicaId) logger = logger.child({ replica: replicaId });

  // The store decides how executions are queued (several replicas on PostgreSQL share its table).
  const lease = Number(env.HCM_RUNNER_LEASE_SECONDS);
  const queue = opts.queue ?? store.openQueue({ logger, replicaId, ...(lease > 0 ? { leaseSec: lease } : {}), ...opts.queueOptions });
  const stopQueue = async () => {
    await queue.stop().catch((err: Error) => logger.warn({ err: err.message }, 'the execution queue did not stop cleanly'));
  };

  let adminToken = opts.adminToken ?? env.HCM_RUNNER_ADMIN_TOKEN;
  let adminTokenGenerated = false;
  let adminTokenFile: string | undefined;
  if (!adminToken) {
    try {
      ({ token: adminToken, created: adminTokenGenerated, file: adminTokenFile } = await loadOrCreateAdminToken(resolve(opts.dataDir ?? 'data')));
    } catch (err) {
      await stopQueue();
      await store.close();
      throw err;
    }
  }

  // Listen first (the public URL may depend on the port), answering 503 until the runtime is ready.
  let handler: (req: Request, env: HttpBindings) => Response | Promise<Response> = () =>
    new Response(JSON.stringify({ error: 'starting' }), { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '1' } });
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolveListen, reject) => {
      const s = serve({ fetch: (req, e) => handler(req, e as HttpBindings), port: opts.port ?? 8080, hostname: host }, () => resolveListen(s));
      s.once('error', reject);
    });
  } catch (err) {
    await stopQueue();
    await store.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  const publicUrl = (opts.publicUrl ?? env.HCM_RUNNER_PUBLIC_URL ?? url).replace(/\/+$/, '');

  const runtime = new Runtime({
    dir: resolve(opts.dir ?? 'integrations'),
    store,
    publicUrl,
    limits: opts.limits,
    retentionDays: opts.retentionDays,
    env,
    logger,
    queue,
    allowPrivateNetwork,
    intake,
    captures,
  });
  const metrics = createMetrics(runtime);
  const app = createApp(runtime, { adminToken, metrics });
  let integrations: RegistryEntry[];
  try {
    integrations = await runtime.start();
  } catch (err) {
    await closeHttp(server);
    await runtime.stop(0).catch(() => undefined);
    await stopQueue();
    await store.close();
    throw err;
  }
  handler = (req, e) => app.fetch(req, e);
  logger.info({ url, publicUrl, integrations: integrations.length }, 'hcm-runner listening');

  let closing: Promise<void> | undefined;
  const close = (graceMs = opts.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS) =>
    (closing ??= (async () => {
      // Stop accepting new connections; requests in progress (e.g. sync webhooks) may finish.
      const httpClosed = closeHttp(server, graceMs);
      const result = await runtime.stop(graceMs);
      await httpClosed;
      await stopQueue();
      await store.close();
      logger.info(result, 'hcm-runner stopped');
    })());

  return { url, port, publicUrl, adminToken, adminTokenGenerated, adminTokenFile, runtime, app, integrations, close };
}

function closeHttp(server: ServerType, graceMs = 0): Promise<void> {
  return new Promise<void>((done) => {
    const s = server as import('node:http').Server;
    s.close(() => done());
    s.closeIdleConnections?.();
    // Keep-alive connections with no request in flight would hold close() open.
    const t = setTimeout(() => s.closeAllConnections?.(), graceMs);
    t.unref();
  });
}

/** `1`, `true`, `yes` (any case) turn an environment switch on. */
function envFlag(value: string | undefined): boolean {
  return /^(1|true|yes)$/i.test(value?.trim() ?? '');
}
