/**
 * The one small interface through which connectors plug into the engine.
 *
 * An action is declared once, as data: its key, description and inputs (types, defaults,
 * required flags, ranges). The definition layer derives each action's JSON Schema from this
 * declaration to check steps at load time; the engine uses the same schema at run time; the docs
 * generator prints it. Declarations must stay plain data (no runtime imports) so that
 * `hcm-runner validate` never loads HTTP clients or storage.
 */

/** JSON Schema fragment (2020-12), kept loose on purpose: declarations write plain objects. */
export type JsonSchema = Record<string, unknown>;

export type InputType =
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'object'
  | 'array'
  | 'date' // ISO-8601 string, or anything Date can parse; sent as ISO-8601
  | 'binary' // the binary value shape, or a plain string (its UTF-8 bytes)
  | 'keyValue' // a map, or a list of {key, value}
  | 'any';

export interface InputDecl {
  type: InputType;
  /** The human label (the input's name in the HCM documentation), e.g. "Worker ID". */
  label?: string;
  description?: string;
  required?: boolean;
  default?: unknown;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  /** Extra JSON Schema merged into the derived one (e.g. `items` of an array). */
  schema?: JsonSchema;
  /**
   * Syntax JSON Schema cannot say well, checked at load time (literal parts, at their line and
   * column) and at run time (computed values): `httpHeaders` a map of HTTP header names to
   * values, `httpHeaderValue` one header value (src/common/http-header-syntax.ts).
   */
  syntax?: 'httpHeaders' | 'httpHeaderValue';
}

/**
 * What an action returns — its results, read by later steps as `$steps.<id>`: one line for the
 * docs and editor hints, and the top-level keys where the result is an object.
 */
export interface ActionOutput {
  description: string;
  /** The result's top-level keys, when it is an object (for `$steps.<id>.` completion). */
  keys?: readonly string[];
}

export interface ActionDeclaration {
  /** Full key as written in YAML, e.g. `hcm.getWorkerById`, `core.transform`. */
  key: string;
  /** Human name, e.g. "Get Worker by ID". */
  name: string;
  description: string;
  /** Grouping for docs (the HCM service, or "core"). */
  group: string;
  inputs: Readonly<Record<string, InputDecl>>;
  /** Connection type the action needs (`connection:` on the step must name one of this type). */
  connectionType?: string;
  /** Extra facts for docs (method, path …); free-form, shown in the generated tables. */
  docs?: Readonly<Record<string, string>>;
  /** The results (`$steps.<id>`). */
  output?: ActionOutput;
  /**
   * Running it again changes nothing outside the execution (an HCM GET, core.transform): no
   * checkpoint is committed after it; a resumed execution may run it again (docs/promises.md).
   */
  readOnly?: boolean;
}

/** A connection type's inputs, declared like action inputs. */
export interface ConnectionTypeDecl {
  type: string;
  description: string;
  inputs: Readonly<Record<string, InputDecl>>;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What a synchronous webhook run answers; set by core.respond or core.stop. */
export interface HttpResponseSpec {
  statusCode: number;
  contentType?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** A named connection of an integration, with `env` values already resolved. */
export interface ResolvedConnection {
  name: string;
  type: string;
  config: Readonly<Record<string, unknown>>;
}

/** Encrypted-at-rest token storage; implemented by the store (SQLite, PostgreSQL, or a file). */
export interface TokenStore {
  /** The stored tokens, read from the store (authoritative). */
  get(key: string): Promise<StoredTokens | undefined>;
  set(key: string, tokens: StoredTokens): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Optional, no store access: the tokens this process last read or wrote under `key`, if that
   * was less than `maxAgeMs` ago (undefined otherwise, and after `delete`). Where the store is
   * shared, another process may have replaced them since: a hint for the request path
   * (oauth/provider.ts), which falls back to `get` when the hint is expiring or was rejected.
   */
  peek?(key: string, maxAgeMs: number): StoredTokens | undefined;
  /**
   * Runs `fn` while holding an exclusive lock on `key` (across replicas where the store is
   * shared), so only one OAuth refresh per connection is in flight.
   */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

export interface StoredTokens {
  accessToken?: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
  tokenType?: string;
  scope?: string;
  /**
   * Epoch milliseconds from which the access token is refreshed before use: `expiresAt` less the
   * refresh margin, the smaller of 5 minutes and a fifth of the token's lifetime (oauth/provider.ts).
   * Records written without it use the 5 minutes.
   */
  refreshAt?: number;
  /**
   * Set when the token endpoint refused the grant (`invalid_grant`: revoked, expired, rotated away).
   * The record then holds no token, and the token endpoint is not called again until the connection
   * is authorized again (a code exchange replaces the record) — or a configured `refreshToken`
   * other than the refused one is given.
   */
  needsAuthorization?: NeedsAuthorization;
}

export interface NeedsAuthorization {
  /** What the token endpoint answered, e.g. "token endpoint answered 400 invalid_grant: …". */
  reason: string;
  /** Epoch milliseconds. */
  at: number;
  /**
   * Fingerprints (not the tokens) of the refresh tokens known dead: the refused one and the
   * connection's configured one at the time (the grant started from it). A configured refresh
   * token not among them is new, and is tried.
   */
  deadRefreshTokens?: string[];
}

/** Long-lived services the host (CLI `run`, `serve`) hands to connectors. */
export interface RuntimeServices {
  tokens: TokenStore;
  /** Base URL where `/oauth/callback` is served, for redirect URIs. */
  publicUrl: string;
  /** Largest HTTP response body a step may read (default 16 MiB; HCM_RUNNER_MAX_RESULT_BYTES). See result-limit.ts. */
  maxResultBytes?: number;
  /**
   * Whether core.http may connect to private and loopback addresses (default no; link-local and
   * cloud metadata addresses are refused either way). See `outbound-policy.ts`.
   */
  allowPrivateNetwork?: boolean;
}

/** Everything an action sees while it runs. */
export interface ActionContext {
  integration: string;
  stepId: string;
  action: ActionDeclaration;
  executionId: string;
  test: boolean;
  /** Aborted on step timeout or shutdown; pass it to every request. */
  signal: AbortSignal;
  connection?: ResolvedConnection;
  services: RuntimeServices;
  log(level: LogLevel, message: string): void;
  /** core.respond: sets the HTTP response of a synchronous webhook run. */
  respond(response: HttpResponseSpec): void;
  /** core.call (only its context has it): runs integration `integration` as a child execution; resolves to its `result`. */
  call?(integration: string, input: unknown): Promise<unknown>;
}

export interface Connector {
  /** The key prefix, e.g. `core` or `hcm`. */
  prefix: string;
  actions: readonly ActionDeclaration[];
  connectionTypes?: readonly ConnectionTypeDecl[];
  /** Runs one action with inputs already evaluated, defaulted and validated. */
  invoke(action: ActionDeclaration, inputs: Record<string, unknown>, ctx: ActionContext): Promise<unknown>;
}
