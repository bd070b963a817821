/**
 * The tracing seam (docs/operations.md "Tracing"). The engine, the dispatcher and the HTTP stack
 * speak only these interfaces; `src/runtime/tracing/` implements them with the OpenTelemetry SDK
 * when the standard `OTEL_*` variables turn tracing on, and imports the SDK only then. Off (the
 * default), nothing here is ever made: every caller holds `undefined` and pays one check.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What the dispatcher asks for: one trace per execution run. */
export interface ExecutionTracer {
  /** The span of one run of an execution (a child of the webhook request's `traceparent`, when it had one). */
  startExecution(execution: { id: string; integration: string; attempt: number; test: boolean; trigger: unknown }): ExecutionTrace;
}

/** A step as its span reads it: id and action at the start, status and error at the end. */
export interface TracedStep {
  readonly id: string;
  readonly action: string;
  readonly status: string;
  readonly error?: { message: string; code?: string };
  readonly attempts?: number;
}

/** One execution's span, handed to the engine (`RunOptions.trace`). */
export interface ExecutionTrace {
  /** Recorded on the execution (`traceId`). */
  readonly traceId: string;
  /**
   * Runs one step inside its child span: HTTP requests sent while it runs are children of that
   * span. The span ends with the step record's status once `run` settles.
   */
  step<T>(step: TracedStep, run: () => Promise<T>): Promise<T>;
  /** Ends the execution's span with how the run ended. */
  end(outcome: { status: string; error?: { message: string } }): void;
}

/** The step running now, as the HTTP stack's trace interceptor sees it. */
export interface ActiveStepTrace {
  startClient(method: string, url: string): ClientTrace;
}

/** The client span of one HTTP request. */
export interface ClientTrace {
  /** The W3C `traceparent` (and `tracestate`, when there is one) the request carries. */
  readonly traceparent: string;
  readonly tracestate?: string;
  /** `status` when an answer arrived; `error` when the request failed. */
  end(status: number | undefined, error?: Error): void;
}

let steps: AsyncLocalStorage<ActiveStepTrace> | undefined;

/** Where the running step's trace is kept; made by the tracing implementation when it starts. */
export function stepTraceStorage(): AsyncLocalStorage<ActiveStepTrace> {
  steps ??= new AsyncLocalStorage();
  return steps;
}

/** The trace of the step running now; undefined whenever tracing is off (no storage was ever made). */
export function activeStepTrace(): ActiveStepTrace | undefined {
  return steps?.getStore();
}
