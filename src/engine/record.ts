/**
 * The execution record: what `hcm-runner run` prints, what the store keeps and what
 * `GET /api/executions/{id}` returns (docs/server.md). One type for all of them.
 */
import type { HttpResponseSpec, LogLevel } from '../connectors/types.js';

/** docs/server.md "Executions": `waiting` (core.wait) and `cancelled` (POST …/cancel) are durable-execution states. */
export type ExecutionStatus = 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';
/** `waiting`: a core.wait step the execution is suspended at. */
export type StepStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped';

export interface StepError {
  message: string;
  integration: string;
  step: string;
  action: string;
  status?: number;
  code?: string;
  remote?: unknown;
}

export interface StepRecord {
  id: string;
  action: string;
  status: StepStatus;
  results?: unknown;
  error?: StepError;
  /** Attempts made (retry); 1 when it ran once. */
  attempts?: number;
  startedAt: string;
  finishedAt?: string;
  durationMs?: number;
  /** A group's steps' records (docs/authoring.md "Control flow"). */
  steps?: StepRecord[];
  /** A forEach group's iterations, in item order. */
  iterations?: IterationRecord[];
  /** A switch: the name of the case that ran, or `default`. */
  case?: string;
  /** core.call: the child execution's id. */
  childExecutionId?: string;
  /** core.call with forEach: the child executions' ids, in item order. */
  childExecutionIds?: string[];
  /** A `waiting` core.wait step: when it wakes (its `for`/`until`, or its callback's `timeout`). */
  wakeAt?: string;
  /** A core.wait step on a callback: the callback's token (from the URL core.callback returned). */
  callback?: string;
  /**
   * A forEach action step that has not finished: the results of the items that have, by index
   * (a checkpoint; resuming runs only the others). Dropped when the step finishes.
   */
  done?: Record<string, unknown>;
}

export interface IterationRecord {
  index: number;
  steps: StepRecord[];
}

/** What `onFailure` did (it ran once, after the execution failed for good). */
export interface OnFailureRecord {
  status: StepStatus;
  steps: StepRecord[];
  error?: StepError | { message: string };
}

/** What a `waiting` execution waits for. */
export interface WaitingFor {
  /** The core.wait step's id (a path `group.step` when nested). */
  step: string;
  kind: 'time' | 'callback';
  /** `kind: callback`: the callback URL to send the request to. */
  callbackUrl?: string;
  /** `kind: callback` with a `timeout`: when the step fails with `code: timeout`. */
  timeoutAt?: string;
}

export interface LogEntry {
  at: string;
  level: LogLevel;
  message: string;
  step?: string;
}

/**
 * Which version of the integration file ran: the sha256 of its text, and the git commit checked
 * out in the integrations folder when it was loaded (absent outside a git checkout).
 */
export interface ExecutionVersion {
  sha256: string;
  commit?: string;
}

export interface ExecutionRecord {
  id: string;
  integration: string;
  status: ExecutionStatus;
  test: boolean;
  attempt: number;
  trigger: unknown;
  /** The `correlationKey:` value, evaluated when the execution was created (absent when none). */
  correlationKey?: string;
  /** The `concurrency:` key, evaluated when the execution was created (absent when none): executions with one key run in line. */
  concurrencyKey?: string;
  /** The version that ran (set when a run starts; a retry or replay records its own). */
  version?: ExecutionVersion;
  steps: StepRecord[];
  /** The last step's results (or what core.respond/core.stop set for a sync run's body). */
  result?: unknown;
  error?: StepError | { message: string };
  /** The HTTP response a synchronous webhook run answers with, when a step set one. */
  response?: HttpResponseSpec;
  log: LogEntry[];
  /** The OpenTelemetry trace of the run, when tracing is on (docs/operations.md "Tracing"). */
  traceId?: string;
  /** A child execution of core.call: who called it. */
  parent?: { executionId: string; step: string };
  /** The outcome of the integration's `onFailure` steps, when they ran. */
  onFailure?: OnFailureRecord;
  /** A `waiting` execution: when it wakes (absent while it waits for a callback without timeout). */
  wakeAt?: string;
  /** A `waiting` execution: the step it waits at and for what (the console shows it). */
  waitingFor?: WaitingFor;
  /** Made by `POST /api/executions/{id}/retry`: the failed (or cancelled) execution it retries. */
  retryOf?: string;
  /** `POST …/cancel` reached it while it ran: it stops at its next step boundary. */
  cancelRequested?: boolean;
  queuedAt?: string;
  /** The webhook request's idempotency key (its sha256 when longer than 512 bytes), when the trigger declares one. */
  idempotencyKey?: string;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
}

/**
 * Copies what an execution was given outside the engine — its correlation key (at creation) and
 * its version (when its run started) — onto the engine's record of the run, which starts without.
 */
export function carryOrigin(from: ExecutionRecord, to: ExecutionRecord): void {
  if (from.correlationKey !== undefined && to.correlationKey === undefined) to.correlationKey = from.correlationKey;
  if (from.concurrencyKey !== undefined && to.concurrencyKey === undefined) to.concurrencyKey = from.concurrencyKey;
  if (from.version && !to.version) to.version = from.version;
}
