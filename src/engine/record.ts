/**
 * The execution record: what `hcm-runner run` prints, what the store keeps and what
 * `GET /api/executions/{id}` returns (docs/server.md). One type for all of them.
 */
import type { HttpResponseSpec, LogLevel } from '../connectors/types.js';

export type ExecutionStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export type StepStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

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
}

export interface LogEntry {
  at: string;
  level: LogLevel;
  message: string;
  step?: string;
}

export interface ExecutionRecord {
  id: string;
  integration: string;
  status: ExecutionStatus;
  test: boolean;
  attempt: number;
  trigger: unknown;
  steps: StepRecord[];
  /** The last step's results (or what core.respond/core.stop set for a sync run's body). */
  result?: unknown;
  error?: StepError | { message: string };
  /** The HTTP response a synchronous webhook run answers with, when a step set one. */
  response?: HttpResponseSpec;
  log: LogEntry[];
  /** The OpenTelemetry trace of the run, when tracing is on (docs/operations.md "Tracing"). */
  traceId?: string;
  queuedAt?: string;
  /** The webhook request's idempotency key (its sha256 when longer than 512 bytes), when the trigger declares one. */
  idempotencyKey?: string;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
}
