/**
 * The storage interface. SQLite (embedded, `--data DIR`) and PostgreSQL (`--database-url`,
 * several replicas) implement it side by side; one shared test suite runs against both.
 *
 * Durability rule: every method that records something a client was promised (an accepted
 * webhook, a poll's new items) resolves only after the commit that holds it.
 */
import type { TokenStore } from '../connectors/types.js';
import type { CallbackRequest } from '../engine/durable.js';
import type { ExecutionRecord, ExecutionStatus } from '../engine/record.js';
import type { ExecutionQueue, NewExecution, QueueOptions } from './queue.js';

/** Declared with the queue it enters (queue.ts), which names no type of this file. */
export type { NewExecution } from './queue.js';

/** An idempotency key to claim with an execution (`enqueueOnce`). */
export interface IdempotencyClaim {
  key: string;
  /** How long the key is kept (the trigger's `dedupeWindow`). */
  windowMs: number;
}

export interface SaveOptions {
  /** The execution's row exists already (its trigger is not written again). */
  stored?: boolean;
}

export interface ExecutionFilter {
  integration?: string;
  status?: ExecutionStatus;
  /** Only executions queued at or after this ISO time (bulk retry's `since`). */
  since?: string;
  /** Executions whose `correlationKey` is exactly this (an indexed column). */
  correlation?: string;
  /** Default 50, at most 500. */
  limit?: number;
  /** Only executions queued before this ISO time (paging newest-first). */
  before?: string;
}

/** A list row: the record without the bulky parts. */
export type ExecutionSummary = Pick<
  ExecutionRecord,
  | 'id'
  | 'integration'
  | 'status'
  | 'test'
  | 'attempt'
  | 'queuedAt'
  | 'startedAt'
  | 'finishedAt'
  | 'durationMs'
  | 'correlationKey'
  | 'version'
  | 'wakeAt'
  | 'retryOf'
> & { error?: { message: string } };

/** A callback token made by core.callback (docs/authoring.md "Waiting for someone"). */
export interface CallbackEntry {
  token: string;
  executionId: string;
  integration: string;
  /** The core.callback step's id (path). */
  step: string;
  test: boolean;
  expiresAt: string;
  /** The first request to its URL, once one came. */
  request?: CallbackRequest;
  receivedAt?: string;
}

/** What `Store.receiveCallback` did with a request to `/callbacks/{token}`. */
export type CallbackReceipt =
  /** Recorded (committed) as the token's one request; the execution was woken if it waited on it. */
  | { outcome: 'accepted'; executionId: string }
  /** The token had its request already. */
  | { outcome: 'used'; executionId: string }
  /** No such token, or it expired. */
  | { outcome: 'unknown' };

/** What `Store.cancelExecution` did. */
export type CancelOutcome =
  /** Queued or waiting: now `cancelled` (committed). */
  | { outcome: 'cancelled'; record: ExecutionRecord }
  /** Running: `cancelRequested` is set; the process running it stops it at its next step boundary. */
  | { outcome: 'requested'; record: ExecutionRecord }
  /** Finished already (its record, unchanged). */
  | { outcome: 'finished'; record: ExecutionRecord }
  | { outcome: 'unknown' };

/** How many captures `Store.addCapture` keeps and how large (the defaults are in captures.ts). */
export interface CaptureBounds {
  /** Captures kept for the integration (default 50). */
  keep?: number;
  /** Bytes of `$trigger` JSON stored (default 256 KiB); past it the body is cut. */
  maxBytes?: number;
}

/** A request captured on the test URL in listening mode. */
export interface Capture {
  id: string;
  integration: string;
  receivedAt: string;
  /**
   * The `$trigger` the request produced; past the store's bound its body is cut to a preview
   * (`truncated`, src/store/captures.ts).
   */
  trigger: unknown;
  /** Bytes of the whole `$trigger` JSON as received (set on captures read from the store). */
  size?: number;
  /** The stored `trigger` is cut (the request was larger than the bound). */
  truncated?: boolean;
}

/** A capture without its trigger: what the live stream, the console's list and `listen` show. */
export interface CaptureSummary {
  id: string;
  integration: string;
  receivedAt: string;
  /** Bytes of the whole `$trigger` JSON as received. */
  size: number;
  truncated: boolean;
  method?: string;
  /** `/pathFragment?query`. */
  path?: string;
  contentType?: string;
  /** The body's first characters, on one line. */
  preview: string;
}

/** Which captures a summary list holds: newest first, at most `limit`, only after capture `after`. */
export interface CaptureQuery {
  limit?: number;
  /** Only captures saved after this one (an id no longer kept: all of them). */
  after?: string;
}

export interface SavedPayload {
  integration: string;
  name: string;
  /** The `$trigger` data to run with. */
  trigger: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Encrypted connection tokens. */
  readonly tokens: TokenStore;
  close(): Promise<void>;
  /**
   * The execution queue that goes with this store, opened once per process: in memory next to an
   * SQLite file, the `executions` table itself (claims with leases) on PostgreSQL. Stop it before
   * close().
   */
  openQueue(opts?: QueueOptions): ExecutionQueue;

  // Executions -------------------------------------------------------------------------------
  /** Records new executions as `queued`; resolves after the commit (group commits allowed). */
  enqueue(executions: NewExecution[]): Promise<void>;
  /**
   * Records one execution unless an earlier one holds its idempotency key (same integration, same
   * live/test kind, within the window): claiming the key and inserting the execution are one
   * commit, and the key's uniqueness is the check, so on a shared database exactly one of several
   * concurrent callers records an execution. Returns the execution that holds the key.
   */
  enqueueOnce(execution: NewExecution, claim: IdempotencyClaim): Promise<{ executionId: string; duplicate: boolean }>;
  /** Forgets idempotency keys whose window ended before `now`; returns how many. */
  pruneIdempotencyKeys(now: Date): Promise<number>;
  /** Marks an execution running (at `attempt`), and returns its stored record. */
  markRunning(id: string, attempt: number): Promise<ExecutionRecord | undefined>;
  /**
   * Saves the record as it stands (the final state, or a run recorded before its end); creates the
   * row when there is none. `stored: true` says the row exists (enqueued or saved before): only
   * what changes during a run is written, not the trigger. Saves may be group-committed.
   */
  saveExecution(record: ExecutionRecord, opts?: SaveOptions): Promise<void>;
  getExecution(id: string): Promise<ExecutionRecord | undefined>;
  listExecutions(filter: ExecutionFilter): Promise<ExecutionSummary[]>;
  /** The newest execution of each of `integrations` that has one (one query, for the console's start page). */
  latestExecutions(integrations: readonly string[]): Promise<Map<string, ExecutionSummary>>;
  /** Executions left `queued` or `running` (after a crash), oldest first. `waiting` ones are the waker's. */
  unfinishedExecutions(): Promise<ExecutionRecord[]>;
  /**
   * For a queued execution with a `concurrency:` key: how many of its key are ahead of it (running,
   * waiting, or queued before it), cluster-wide; undefined for any other.
   */
  aheadInLine(record: ExecutionRecord): Promise<number | undefined>;

  // Durable execution (docs/promises.md) --------------------------------------------------------
  /**
   * Makes `waiting` executions whose `wakeAt` has come — and those whose callback request has come
   * — `queued` again, at most `limit`, oldest `wakeAt` first; each is made queued by exactly one
   * caller cluster-wide. Returns them (as queued; their steps kept for the resume).
   */
  wakeDue(now: Date, limit: number): Promise<ExecutionRecord[]>;
  /** The earliest `wakeAt` of the waiting executions (undefined: none waits for a time). */
  nextWakeAt(): Promise<string | undefined>;
  /** How many executions of `integration` are `waiting` (the cap on waiting executions). */
  countWaiting(integration: string): Promise<number>;
  /** Keeps a callback token (committed before it resolves). */
  createCallback(entry: CallbackEntry): Promise<void>;
  getCallback(token: string): Promise<CallbackEntry | undefined>;
  /**
   * Records the first request to a callback URL and, in the same commit, makes its execution due
   * (`wakeAt` = now) if it is waiting; later requests are `used`, unknown or expired tokens `unknown`.
   */
  receiveCallback(token: string, request: CallbackRequest, now: Date): Promise<CallbackReceipt>;
  /** Forgets callback tokens that expired before `now` (and their requests); returns how many. */
  pruneCallbacks(now: Date): Promise<number>;
  /** `POST /api/executions/{id}/cancel` (docs/server.md): see CancelOutcome. */
  cancelExecution(id: string, now: Date): Promise<CancelOutcome>;
  /** The ids among `ids` whose cancel was requested while they ran (a process checks those it runs). */
  cancelRequested(ids: readonly string[]): Promise<string[]>;
  /**
   * The retries of each of `ids` that has any (original id → the ids of the executions whose
   * `retryOf` it is, oldest first): a second retry is refused unless asked for (docs/server.md).
   */
  retriesOf(ids: readonly string[]): Promise<Map<string, string[]>>;
  countByStatus(): Promise<Record<ExecutionStatus, number>>;
  /** Deletes finished executions that finished before `before`; returns how many. */
  pruneExecutions(before: Date): Promise<number>;

  // Webhook tokens (stable across restarts and replicas; rotatable) -------------------------
  webhookToken(integration: string): Promise<string>;
  rotateWebhookToken(integration: string): Promise<string>;
  integrationForToken(token: string): Promise<string | undefined>;

  // Listening mode, captures and saved payloads -----------------------------------------------
  setListening(integration: string, on: boolean): Promise<void>;
  isListening(integration: string): Promise<boolean>;
  listeningIntegrations(): Promise<string[]>;
  /** Saves a capture within `bounds` (cut past `maxBytes`, the oldest past `keep` dropped). */
  addCapture(capture: Capture, bounds?: CaptureBounds): Promise<CaptureSummary>;
  /** Newest first; each trigger cut to at most 64 KiB of JSON (`getCapture` has the stored one). */
  listCaptures(integration: string, limit?: number): Promise<Capture[]>;
  /** Newest first, no triggers. */
  captureSummaries(integration: string, query?: CaptureQuery): Promise<CaptureSummary[]>;
  getCapture(integration: string, id: string): Promise<Capture | undefined>;
  savePayload(integration: string, name: string, trigger: unknown): Promise<SavedPayload>;
  getPayload(integration: string, name: string): Promise<SavedPayload | undefined>;
  listPayloads(integration: string): Promise<SavedPayload[]>;
  deletePayload(integration: string, name: string): Promise<boolean>;

  // Trigger state: schedules, polls, appEvent subscriptions ------------------------------------
  getState(integration: string, key: string): Promise<unknown>;
  setState(integration: string, key: string, value: unknown): Promise<void>;
  deleteState(integration: string, key?: string): Promise<void>;
  /** Reads and deletes one state entry at once (one caller gets it); undefined when absent. */
  takeState?(integration: string, key: string): Promise<unknown>;
  /** The poll seen-set of an integration (bounded). */
  seenKeys(integration: string): Promise<Set<string>>;
  /**
   * Atomically: remember `keys` as seen (keeping the newest `maxSeen`) and enqueue `executions`.
   * A crash before the commit loses neither; after it repeats neither.
   */
  commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void>;
  /**
   * Claims a schedule/poll tick cluster-wide: true for exactly one caller per (integration, tick).
   */
  claimTick(integration: string, tick: string): Promise<boolean>;

  // Console sessions (docs/console.md "Signing in") ----------------------------------------------
  /**
   * Remembers a signed-in console session until `expiresAt` (ISO time); expired sessions may be
   * forgotten at the same time. Kept in the store so that signing out holds across restarts and
   * replicas.
   */
  addConsoleSession(id: string, expiresAt: string): Promise<void>;
  /** Whether the session was added, not deleted, and has not expired. */
  hasConsoleSession(id: string): Promise<boolean>;
  /** Ends one session (sign out); whether it existed. */
  deleteConsoleSession(id: string): Promise<boolean>;
  /** Ends every session (sign out everywhere); how many there were. */
  deleteConsoleSessions(): Promise<number>;

  // Coordination ---------------------------------------------------------------------------------
  /**
   * Runs `fn` while holding the cluster-wide lock `key`: callers with the same key, in this
   * process or on any replica, run one at a time. No database connection is held while `fn`
   * runs (it may wait on a third party). Waiting ends with the signal's reason when it aborts.
   */
  lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}
