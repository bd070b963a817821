/**
 * The runtime's settings, declared once: every `serve` option (its flag, its environment
 * variable, default, range, `--help` line and docs text) and the few settings the other commands
 * read. Parsing and validation (`resolve.ts`), `serve --help` (`help.ts`) and the settings table
 * of docs/server.md (`docs.ts`, written by `npm run docs`) all come from this table, and nothing
 * outside `src/settings/` reads an `HCM_RUNNER_*` variable (test/architecture/settings.test.ts).
 *
 * Order matters: it is the order of `--help` and of the docs table.
 * Imports nothing: every layer may read it (`validate` too, so it stays light).
 */

interface Common {
  /** The flag without its dashes (`admin-port` → `--admin-port`); none: environment only. */
  flag?: string;
  /** The environment variable; none: flag only. */
  env?: string;
  /** Shown after the flag in `--help` and the docs (`N`, `H`, `DIR`…). */
  arg?: string;
  /** The default as words, when it is not a plain value (computed, or another setting's). */
  defaultText?: string;
  /** `serve --help`: one short sentence, without the default (that is added from the spec). */
  help: string;
  /** The docs table's text (Markdown; links relative to docs/server.md). */
  docs: string;
  /** Never printed; may come from a file too: `<env>_FILE` (Docker and Kubernetes secrets). */
  secret?: boolean;
  /** Left out of `serve --help` (not a server setting, e.g. the CLI's debug switch). */
  notServe?: boolean;
}

export interface IntSetting extends Common {
  kind: 'int';
  min: number;
  max?: number;
  default?: number;
}
export interface BoolSetting extends Common {
  kind: 'bool';
  default: boolean;
}
export interface StringSetting extends Common {
  kind: 'string';
  default?: string;
}
export interface ChoiceSetting extends Common {
  kind: 'choice';
  choices: readonly string[];
  default?: string;
}
/** Comma-separated names (`a, b,c`), trimmed and lower-cased, blanks dropped. */
export interface ListSetting extends Common {
  kind: 'list';
  default: readonly string[];
}

export type SettingSpec = IntSetting | BoolSetting | StringSetting | ChoiceSetting | ListSetting;

export const settingSpecs = {
  dir: {
    kind: 'string',
    flag: 'dir',
    arg: 'DIR',
    default: 'integrations',
    help: 'integrations folder',
    docs: 'integrations folder (every `*.yaml`/`*.yml` below it)',
  },
  port: {
    kind: 'int',
    flag: 'port',
    env: 'PORT',
    arg: 'N',
    min: 0,
    max: 65535,
    default: 8080,
    help: 'port; 0 picks a free one',
    docs: 'port of the main listener (0: a free one)',
  },
  host: {
    kind: 'string',
    flag: 'host',
    arg: 'H',
    default: '127.0.0.1',
    help: 'interface to listen on; 0.0.0.0 for all',
    docs: '`0.0.0.0` to listen on every interface',
  },
  adminPort: {
    kind: 'int',
    flag: 'admin-port',
    env: 'HCM_RUNNER_ADMIN_PORT',
    arg: 'N',
    min: 0,
    max: 65535,
    defaultText: 'none: everything on --port',
    help:
      'serve the console, /api and /metrics on their own port; the main port then serves only webhooks, ' +
      'callbacks, the OAuth callback and /healthz — the production layout, docs/security.md',
    docs:
      'serves the console, `/api/*` and `/metrics` on this port; the main port then serves only webhooks, callbacks, the OAuth ' +
      'callback and `/healthz` (404 for `/api/*`, `/console/*`, `/metrics`, `/`) — the production layout, ' +
      '[security.md](security.md#production-layout). Client commands read it too, to find the admin API ([Client commands](#client-commands))',
  },
  adminHost: {
    kind: 'string',
    flag: 'admin-host',
    env: 'HCM_RUNNER_ADMIN_HOST',
    arg: 'H',
    defaultText: '127.0.0.1',
    help: 'interface of the admin port (e.g. a VPN or private address); needs --admin-port',
    docs: 'interface of the admin port (a VPN or private address); needs `--admin-port`. Client commands read it too',
  },
  dataDir: {
    kind: 'string',
    flag: 'data',
    arg: 'DIR',
    default: 'data',
    help: 'data directory: the SQLite store, the stored admin token (admin-token) and, without HCM_RUNNER_SECRET, secret.key',
    docs:
      'embedded SQLite store: `hcm-runner.db` and its `-wal`/`-shm` are 0600; the directory is created 0700 when missing (one you ' +
      'made keeps its mode); also the stored admin token and, without `HCM_RUNNER_SECRET`, `secret.key`',
  },
  databaseUrl: {
    kind: 'string',
    flag: 'database-url',
    env: 'DATABASE_URL',
    arg: 'URL',
    secret: true,
    defaultText: 'none: SQLite in --data',
    help: 'postgres://… selects PostgreSQL (?schema=NAME picks the schema); several replicas on one database share the work (docs/scaling.md)',
    docs: '`postgres://…` selects PostgreSQL ([scaling.md](scaling.md)); `?schema=NAME` in the URL picks the schema (default `public`)',
  },
  sandbox: {
    kind: 'bool',
    flag: 'sandbox',
    default: false,
    help:
      'also start the built-in HCM sandbox (port 8090, or a free one) and point HCM_API_URL, HCM_TOKEN_URL, ' +
      'HCM_AUTHORIZE_URL, HCM_CLIENT_ID, HCM_CLIENT_SECRET, HCM_REFRESH_TOKEN and HCM_TENANT at it',
    docs:
      'starts the HCM sandbox in-process (port 8090, or a free port when taken) and sets `HCM_API_URL`, `HCM_TOKEN_URL`, ' +
      '`HCM_AUTHORIZE_URL`, `HCM_CLIENT_ID`, `HCM_CLIENT_SECRET`, `HCM_REFRESH_TOKEN` (a fresh sandbox refresh token) and ' +
      '`HCM_TENANT=sandbox` for the integrations **before** they load, so `{env: HCM_API_URL, default: …}` values point at it',
  },
  concurrency: {
    kind: 'int',
    flag: 'concurrency',
    env: 'HCM_RUNNER_CONCURRENCY',
    arg: 'N',
    min: 1,
    default: 16,
    help: 'executions running at once',
    docs: 'executions running at once in this process',
  },
  integrationConcurrency: {
    kind: 'int',
    flag: 'integration-concurrency',
    env: 'HCM_RUNNER_INTEGRATION_CONCURRENCY',
    arg: 'N',
    min: 1,
    default: 4,
    help: 'executions of one integration at once',
    docs: 'executions of one integration at once',
  },
  backlog: {
    kind: 'int',
    flag: 'backlog',
    env: 'HCM_RUNNER_BACKLOG',
    arg: 'N',
    min: 0,
    default: 1000,
    help: 'queued executions before webhooks get 429',
    docs: 'queued (not yet running) executions before new work is refused with 429',
  },
  integrationBacklog: {
    kind: 'int',
    flag: 'integration-backlog',
    env: 'HCM_RUNNER_INTEGRATION_BACKLOG',
    arg: 'N',
    min: 1,
    defaultText: 'half the backlog',
    help: 'queued executions of one integration before its webhooks get 429',
    docs: 'queued executions one integration may hold before *it* gets 429; see [Fair backlog](#execution-concurrency-and-backpressure)',
  },
  maxInterruptions: {
    kind: 'int',
    flag: 'max-interruptions',
    env: 'HCM_RUNNER_MAX_INTERRUPTIONS',
    arg: 'N',
    min: 1,
    default: 3,
    help: 'times the process may stop under one execution before it is failed instead of resumed',
    docs:
      'how many times the process may stop while an execution runs before that execution is failed instead of resumed; ' +
      'see [Poison executions](#shutdown-and-recovery)',
  },
  maxResultBytes: {
    kind: 'int',
    flag: 'max-result-bytes',
    env: 'HCM_RUNNER_MAX_RESULT_BYTES',
    arg: 'N',
    min: 1,
    default: 16 * 1024 * 1024,
    help: 'largest HTTP response body a step may read',
    docs:
      'largest HTTP response body a step reads (`core.http`, HCM actions, `hcm.rawRequest`; 16 MiB by default); past it the ' +
      'step fails with `code: result_too_large` ([Limits](authoring.md#limits))',
  },
  maxWaiting: {
    kind: 'int',
    flag: 'max-waiting',
    env: 'HCM_RUNNER_MAX_WAITING',
    arg: 'N',
    min: 1,
    default: 10_000,
    help: 'waiting executions (core.wait) one integration may have',
    docs:
      'how many executions of one integration may be `waiting` (`core.wait`) at once; at the cap the wait step fails with ' +
      '`code: waiting_limit` ([Waiting executions](#waiting-executions-and-callbacks))',
  },
  retentionDays: {
    kind: 'int',
    flag: 'retention-days',
    env: 'HCM_RUNNER_RETENTION_DAYS',
    arg: 'N',
    min: 0,
    default: 14,
    help: 'days finished executions are kept; 0 = forever',
    docs: 'finished executions older than this are deleted (at start, then hourly); 0 keeps them forever',
  },
  allowPrivateNetwork: {
    kind: 'bool',
    flag: 'allow-private-network',
    env: 'HCM_RUNNER_ALLOW_PRIVATE_NETWORK',
    default: false,
    defaultText: 'off; on with --sandbox',
    help:
      'let core.http call private and loopback addresses (10/8, 172.16/12, 192.168/16, 127/8, ::1 …); ' +
      'link-local and cloud metadata addresses stay refused',
    docs: 'lets `core.http` call private and loopback addresses; see [Outbound policy](#outbound-policy)',
  },
  maxFormParts: {
    kind: 'int',
    flag: 'max-form-parts',
    env: 'HCM_RUNNER_MAX_FORM_PARTS',
    arg: 'N',
    min: 1,
    default: 1000,
    help: 'parts of one multipart webhook body, or fields of one urlencoded form body, before 413',
    docs:
      'parts of one `multipart/form-data` webhook body, fields of one `application/x-www-form-urlencoded` body; more → 413 ' +
      '([Intake limits](#intake-limits))',
  },
  redactHeaders: {
    kind: 'list',
    flag: 'redact-headers',
    env: 'HCM_RUNNER_REDACT_HEADERS',
    arg: 'LIST',
    default: [],
    defaultText: 'none',
    help: 'comma-separated caller headers redacted in $trigger.headers, added to authorization, cookie, x-api-key …',
    docs: 'comma-separated header names redacted in `$trigger.headers`, **added** to the built-in list ([Intake limits](#intake-limits))',
  },
  adminToken: {
    kind: 'string',
    env: 'HCM_RUNNER_ADMIN_TOKEN',
    secret: true,
    defaultText: 'one created once into admin-token of --data (mode 0600), then reused',
    help: 'admin API and console bearer token',
    docs: 'bearer token for `/api/*` and the console; client commands send it too. When unset, see [The admin token](#the-admin-token)',
  },
  secret: {
    kind: 'string',
    env: 'HCM_RUNNER_SECRET',
    secret: true,
    defaultText: 'on SQLite, a key created once into secret.key of --data',
    help: 'key for stored OAuth tokens',
    docs: 'key for stored OAuth tokens; without it SQLite keeps a generated key in `<data>/secret.key`; replicas on PostgreSQL need it',
  },
  publicUrl: {
    kind: 'string',
    env: 'HCM_RUNNER_PUBLIC_URL',
    defaultText: 'http://{host}:{port}',
    help: 'base of webhook URLs and of the OAuth redirect URL (behind a proxy or load balancer)',
    docs:
      'base of the printed webhook URLs and of the OAuth redirect URL `{public}/oauth/callback`. Set it when the runner sits ' +
      'behind a proxy or load balancer. Client commands use it to find the admin API when there is no admin port',
  },
  traceUrl: {
    kind: 'string',
    env: 'HCM_RUNNER_TRACE_URL',
    defaultText: 'none',
    help: "the console's link from an execution to its trace: a URL with {traceId}",
    docs:
      "the console's link from an execution to its trace: an `http(s)` URL with `{traceId}` where the trace id goes " +
      '(e.g. `https://tempo.example/trace/{traceId}`); anything else stops the start. Tracing itself is turned on by the ' +
      'standard `OTEL_*` variables ([operations.md](operations.md#tracing))',
  },
  logLevel: {
    kind: 'choice',
    env: 'HCM_RUNNER_LOG_LEVEL',
    choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    help: 'log level',
    docs: 'pino level',
  },
  logFormat: {
    kind: 'choice',
    env: 'HCM_RUNNER_LOG_FORMAT',
    choices: ['json', 'pretty'],
    defaultText: 'pretty on a terminal, else json',
    help: 'log line format',
    docs: 'log line format ([Logs](#logs))',
  },
  shutdownGraceMs: {
    kind: 'int',
    env: 'HCM_RUNNER_SHUTDOWN_GRACE_MS',
    min: 0,
    default: 10_000,
    help: 'how long shutdown waits for running executions, in ms',
    docs: 'how long shutdown waits for running executions, in milliseconds',
  },
  authMaxFailures: {
    kind: 'int',
    env: 'HCM_RUNNER_AUTH_MAX_FAILURES',
    min: 1,
    default: 10,
    help: 'wrong admin tokens from one client before 429',
    docs:
      'wrong admin tokens in a row (sign-in and `/api/*` together) from one client before it gets 429 + `Retry-After`; ' +
      '[Operator authentication](security.md#operator-authentication)',
  },
  authMaxLockoutSeconds: {
    kind: 'int',
    env: 'HCM_RUNNER_AUTH_MAX_LOCKOUT_SECONDS',
    min: 1,
    default: 60,
    help: 'longest such lockout',
    docs: 'the longest such lockout: it starts at 1 s and doubles per further failure up to this',
  },
  consoleSessionSeconds: {
    kind: 'int',
    env: 'HCM_RUNNER_CONSOLE_SESSION_SECONDS',
    min: 1,
    default: 12 * 60 * 60,
    help: 'console session lifetime',
    docs: 'how long a console session lasts after signing in (12 h by default)',
  },
  maxAdminBodyBytes: {
    kind: 'int',
    env: 'HCM_RUNNER_MAX_ADMIN_BODY_BYTES',
    min: 1,
    default: 1024 * 1024,
    help: 'admin API JSON bodies and console forms',
    docs: 'largest admin API JSON body and console form (1 MiB by default); more → 413. The sign-in form is fixed at 4 KiB',
  },
  captureMaxBytes: {
    kind: 'int',
    env: 'HCM_RUNNER_CAPTURE_MAX_BYTES',
    min: 1,
    default: 256 * 1024,
    help: 'bytes of one listening-mode capture stored',
    docs:
      'bytes of `$trigger` JSON stored per listening-mode capture (256 KiB by default); a larger one is stored cut, its full size recorded ' +
      '([Listening-mode captures](security.md#listening-mode-captures))',
  },
  captureKeep: {
    kind: 'int',
    env: 'HCM_RUNNER_CAPTURE_KEEP',
    min: 1,
    default: 50,
    help: 'listening-mode captures kept per integration',
    docs: 'listening-mode captures kept per integration (50 by default); the oldest are dropped',
  },
  maxFileBytes: {
    kind: 'int',
    env: 'HCM_RUNNER_MAX_FILE_BYTES',
    min: 1,
    default: 128 * 1024,
    help: 'largest integration file (serve, validate, run, test)',
    docs: 'largest integration file (128 KiB by default); read by `serve`, `validate`, `run` and `test` ([File limits](authoring.md#file-limits))',
  },
  maxSteps: {
    kind: 'int',
    env: 'HCM_RUNNER_MAX_STEPS',
    min: 1,
    default: 500,
    help: 'most steps in one list (serve, validate, run, test)',
    docs: 'most steps in one list; read by `serve`, `validate`, `run` and `test` ([File limits](authoring.md#file-limits))',
  },
  replicaId: {
    kind: 'string',
    env: 'HCM_RUNNER_REPLICA_ID',
    defaultText: 'PostgreSQL: host:pid; SQLite: none',
    help: 'named in every log line',
    docs: 'named in every log line ([scaling.md](scaling.md))',
  },
  leaseSeconds: {
    kind: 'int',
    env: 'HCM_RUNNER_LEASE_SECONDS',
    min: 1,
    defaultText: '60',
    help: 'PostgreSQL: how long a silent replica keeps its running executions before another takes them',
    docs: 'PostgreSQL: how long a silent replica keeps its running executions before another replica takes them over',
  },
  debug: {
    kind: 'string',
    env: 'HCM_RUNNER_DEBUG',
    notServe: true,
    defaultText: 'off',
    help: 'any value: errors of every command print their stack',
    docs: 'any value: every command prints the stack of an error, not only its message',
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingSpecs = typeof settingSpecs;
export type SettingKey = keyof SettingSpecs;

type ValueOf<S> = S extends { kind: 'int' }
  ? number
  : S extends { kind: 'bool' }
    ? boolean
    : S extends { kind: 'list' }
      ? string[]
      : S extends { kind: 'choice'; choices: readonly (infer C)[] }
        ? C
        : string;

/** A setting's resolved value: its type, or undefined when it has no default and was not set. */
export type SettingValue<K extends SettingKey> = SettingSpecs[K] extends { default: unknown }
  ? ValueOf<SettingSpecs[K]>
  : ValueOf<SettingSpecs[K]> | undefined;

export type Settings = { [K in SettingKey]: SettingValue<K> };

export const settingKeys = Object.keys(settingSpecs) as SettingKey[];

/** The spec of one setting, typed loosely (for loops over all of them). */
export function specOf(key: SettingKey): SettingSpec {
  return settingSpecs[key];
}

/** A secret's file variable: `HCM_RUNNER_SECRET` → `HCM_RUNNER_SECRET_FILE`. */
export function fileVariable(env: string): string {
  return `${env}_FILE`;
}
