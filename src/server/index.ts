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
import type { ExecutionQueue, QueueOptions } from '../store/queue.js';
import type { CaptureBounds } from '../store/types.js';
import type { Store } from '../store/types.js';
import type { DispatcherLimits } from '../runtime/dispatch/limits.js';
import type { RegistryEntry } from '../runtime/registry.js';
import { Runtime } from '../runtime/runtime.js';
import { startTracing } from '../runtime/tracing/start.js';
import { resolveSettings } from '../settings/resolve.js';
import { type Settings, settingSpecs } from '../settings/spec.js';
import { intakeLimits } from '../triggers/webhook/limits.js';
import { ADMIN_TOKEN_ENV, checkAdminToken, loadOrCreateAdminToken } from './admin-token.js';
import { createApp } from './app.js';
import { createLogger, logFormat } from './logger.js';
import { createMetrics } from './metrics.js';
import type { OperatorAuthSettings } from './operator-auth.js';
import type { Surface } from './surfaces.js';
import type { AppEnv } from './types.js';

/**
 * The settings `startServer` takes from the spec (src/settings/spec.ts) when it is not handed them
 * (tests start it in-process with an `env`); where it listens and what it serves are its options.
 */
const SERVER_SETTING_KEYS = [
  'adminToken',
  'secret',
  'publicUrl',
  'logLevel',
  'logFormat',
  'shutdownGraceMs',
  'concurrency',
  'integrationConcurrency',
  'backlog',
  'integrationBacklog',
  'maxInterruptions',
  'maxResultBytes',
  'maxWaiting',
  'retentionDays',
  'allowPrivateNetwork',
  'maxFormParts',
  'redactHeaders',
  'authMaxFailures',
  'authMaxLockoutSeconds',
  'consoleSessionSeconds',
  'maxAdminBodyBytes',
  'captureMaxBytes',
  'captureKeep',
  'traceUrl',
  'maxFileBytes',
  'maxSteps',
  'replicaId',
  'leaseSeconds',
] as const;
export type ServerSettings = Pick<Settings, (typeof SERVER_SETTING_KEYS)[number]>;

export interface ServerOptions {
  /** Integrations folder (default ./integrations). */
  dir?: string;
  /** 0 = a free port. Default 8080. */
  port?: number;
  host?: string;
  /**
   * When set (0 = a free port), the console, /api and /metrics are served on this port instead,
   * and the main port serves only what the internet may reach (webhooks, callbacks, the OAuth
   * callback, /healthz) — see surfaces.ts and docs/security.md.
   */
  adminPort?: number;
  /** Interface of the admin listener (default 127.0.0.1). */
  adminHost?: string;
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
  /**
   * The resolved settings (`serve` passes them); default: resolved from `env` by the spec. The
   * options above and below win over them.
   */
  settings?: ServerSettings;
  /** What integrations' `{env: NAME}` values read (default process.env); also the settings' source without `settings`. */
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
   * Failed-authentication throttle, console session lifetime and operator body cap (defaults
   * HCM_RUNNER_AUTH_MAX_FAILURES, HCM_RUNNER_AUTH_MAX_LOCKOUT_SECONDS,
   * HCM_RUNNER_CONSOLE_SESSION_SECONDS, HCM_RUNNER_MAX_ADMIN_BODY_BYTES; docs/security.md).
   */
  auth?: Partial<OperatorAuthSettings>;
  /**
   * Listening-mode captures: bytes of `$trigger` JSON stored per capture (default
   * HCM_RUNNER_CAPTURE_MAX_BYTES, else 256 KiB) and captures kept per integration (default
   * HCM_RUNNER_CAPTURE_KEEP, else 50).
   */
  captures?: CaptureBounds;
  /**
   * The console's link from an execution to its trace: a URL with `{traceId}` in it (default
   * HCM_RUNNER_TRACE_URL; docs/operations.md "Tracing").
   */
  traceUrl?: string;
}

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:41234. */
  url: string;
  port: number;
  /** Where the console, /api and /metrics are served: the admin listener's URL, else `url`. */
  adminUrl: string;
  /** The admin listener's port, when there is one. */
  adminPort?: number;
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

export const DEFAULT_SHUTDOWN_GRACE_MS = settingSpecs.shutdownGraceMs.default;

export async function startServer(opts: ServerOptions = {}): Promise<RunningServer> {
  const env = opts.env ?? process.env;
  // Settings first: a bad value fails before anything is opened.
  const settings = opts.settings ?? resolveSettings(SERVER_SETTING_KEYS, { env });
  const allowPrivateNetwork = opts.allowPrivateNetwork ?? settings.allowPrivateNetwork;
  const intake = intakeLimits({
    maxFormParts: opts.maxFormParts ?? settings.maxFormParts,
    redactHeaders: opts.redactHeaders ?? settings.redactHeaders,
  });
  const auth: OperatorAuthSettings = {
    maxFailures: opts.auth?.maxFailures ?? settings.authMaxFailures,
    maxLockoutSeconds: opts.auth?.maxLockoutSeconds ?? settings.authMaxLockoutSeconds,
    consoleSessionSeconds: opts.auth?.consoleSessionSeconds ?? settings.consoleSessionSeconds,
    maxAdminBodyBytes: opts.auth?.maxAdminBodyBytes ?? settings.maxAdminBodyBytes,
  };
  const limits: Partial<DispatcherLimits> = {
    concurrency: settings.concurrency,
    perIntegration: settings.integrationConcurrency,
    backlog: settings.backlog,
    maxInterruptions: settings.maxInterruptions,
    ...(settings.integrationBacklog === undefined ? {} : { backlogPerIntegration: settings.integrationBacklog }),
    ...opts.limits,
  };
  let logger = opts.logger ?? createLogger(opts.logLevel ?? settings.logLevel, logFormat(settings.logFormat));
  const configuredToken = opts.adminToken ?? settings.adminToken;
  const captures: CaptureBounds = {
    maxBytes: opts.captures?.maxBytes ?? settings.captureMaxBytes,
    keep: opts.captures?.keep ?? settings.captureKeep,
  };
  const traceUrl = traceUrlSetting(opts.traceUrl ?? settings.traceUrl);
  // A weak configured token fails before anything is opened (under NODE_ENV=production).
  if (configuredToken) checkAdminToken(configuredToken, ADMIN_TOKEN_ENV, env, (message) => logger.warn(message));
  const host = opts.host ?? '127.0.0.1';
  const store =
    opts.store ??
    (await openStore({ dataDir: resolve(opts.dataDir ?? 'data'), databaseUrl: opts.databaseUrl, secret: opts.secret ?? settings.secret }));
  const replicaId = opts.replicaId ?? settings.replicaId ?? (store.kind === 'postgres' ? `${hostname()}:${process.pid}` : undefined);
  if (replicaId) logger = logger.child({ replica: replicaId });

  // The store decides how executions are queued (several replicas on PostgreSQL share its table).
  const lease = settings.leaseSeconds;
  const queue = opts.queue ?? store.openQueue({ logger, replicaId, ...(lease === undefined ? {} : { leaseSec: lease }), ...opts.queueOptions });
  const stopQueue = async () => {
    await queue.stop().catch((err: Error) => logger.warn({ err: err.message }, 'the execution queue did not stop cleanly'));
  };

  let adminToken = configuredToken;
  let adminTokenGenerated = false;
  let adminTokenFile: string | undefined;
  if (!adminToken) {
    try {
      ({ token: adminToken, created: adminTokenGenerated, file: adminTokenFile } = await loadOrCreateAdminToken(resolve(opts.dataDir ?? 'data')));
      // A created token is strong; one written into the file by hand may not be.
      checkAdminToken(adminToken, adminTokenFile, env, (message) => logger.warn(message));
    } catch (err) {
      await stopQueue();
      await store.close();
      throw err;
    }
  }

  // Listen first (the public URL may depend on the port), answering 503 until the runtime is ready.
  let handler: (req: Request, env: AppEnv['Bindings']) => Response | Promise<Response> = () =>
    new Response(JSON.stringify({ error: 'starting' }), { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '1' } });
  // With an admin listener, each listener tells the app which paths it serves (surfaces.ts).
  const split = opts.adminPort !== undefined;
  const onSurface =
    (surface: Surface) =>
    (req: Request, e: HttpBindings): Response | Promise<Response> =>
      handler(req, split ? { incoming: e.incoming, outgoing: e.outgoing, surface } : e);
  const adminHost = opts.adminHost ?? '127.0.0.1';
  let server: ServerType;
  let adminServer: ServerType | undefined;
  try {
    server = await listen(opts.port ?? 8080, host, onSurface('public'));
    if (split) {
      adminServer = await listen(opts.adminPort!, adminHost, onSurface('operator')).catch(async (err) => {
        await closeHttp(server);
        throw err;
      });
    }
  } catch (err) {
    await stopQueue();
    await store.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const url = urlOf(host, port);
  const adminPort = adminServer ? (adminServer.address() as AddressInfo).port : undefined;
  const adminUrl = adminPort === undefined ? url : urlOf(adminHost, adminPort);
  const publicUrl = (opts.publicUrl ?? settings.publicUrl ?? url).replace(/\/+$/, '');

  // Only the standard OTEL_* variables turn tracing on; off, the SDK is never imported.
  const tracing = await startTracing(env, logger);
  const runtime = new Runtime({
    dir: resolve(opts.dir ?? 'integrations'),
    store,
    publicUrl,
    limits,
    retentionDays: opts.retentionDays ?? settings.retentionDays,
    maxResultBytes: settings.maxResultBytes,
    maxWaiting: settings.maxWaiting,
    fileLimits: { maxFileBytes: settings.maxFileBytes, maxSteps: settings.maxSteps },
    env,
    logger,
    queue,
    allowPrivateNetwork,
    intake,
    captures,
    tracer: tracing?.tracer,
  });
  const metrics = createMetrics(runtime);
  const app = createApp(runtime, { adminToken, metrics, auth, traceUrl });
  let integrations: RegistryEntry[];
  try {
    integrations = await runtime.start();
  } catch (err) {
    await closeHttp(server);
    if (adminServer) await closeHttp(adminServer);
    await runtime.stop(0).catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    await stopQueue();
    await store.close();
    throw err;
  }
  handler = (req, e) => app.fetch(req, e);
  logger.info({ url, ...(adminServer ? { adminUrl } : {}), publicUrl, integrations: integrations.length }, 'hcm-runner listening');

  let closing: Promise<void> | undefined;
  const close = (graceMs = opts.shutdownGraceMs ?? settings.shutdownGraceMs) =>
    (closing ??= (async () => {
      // Stop accepting new connections; requests in progress (e.g. sync webhooks) may finish.
      const httpClosed = Promise.all([closeHttp(server, graceMs), adminServer && closeHttp(adminServer, graceMs)]);
      const result = await runtime.stop(graceMs);
      await httpClosed;
      // The spans of the last executions are sent before the process goes.
      await tracing?.shutdown().catch((err: Error) => logger.warn({ err: err.message }, 'tracing: spans could not be sent at shutdown'));
      await stopQueue();
      await store.close();
      logger.info(result, 'hcm-runner stopped');
    })());

  return { url, port, adminUrl, adminPort, publicUrl, adminToken, adminTokenGenerated, adminTokenFile, runtime, app, integrations, close };
}

function listen(port: number, hostname: string, fetch: (req: Request, env: HttpBindings) => Response | Promise<Response>): Promise<ServerType> {
  return new Promise<ServerType>((resolveListen, reject) => {
    const s = serve({ fetch: (req, e) => fetch(req, e as HttpBindings), port, hostname }, () => resolveListen(s));
    s.once('error', reject);
  });
}

/** The URL a listener is reached at (all interfaces: through loopback). */
function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
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

/** HCM_RUNNER_TRACE_URL: an http(s) URL with `{traceId}` where the trace id goes; anything else stops the start. */
function traceUrlSetting(value: string | undefined): string | undefined {
  const url = value?.trim();
  if (!url) return undefined;
  let ok = false;
  try {
    ok = /^https?:$/.test(new URL(url.replaceAll('{traceId}', '0')).protocol);
  } catch {
    // not a URL
  }
  if (!ok || !url.includes('{traceId}'))
    throw new Error(
      `HCM_RUNNER_TRACE_URL must be an http(s) URL with {traceId} where the trace id goes, e.g. https://tempo.example/trace/{traceId} (got "${url}")`,
    );
  return url;
}
