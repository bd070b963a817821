/**
 * Runs one execution: the trigger's results, then the steps in order. Per step: `if`, `forEach`,
 * inputs evaluated and checked against the action's schema, retries, a timeout per attempt and
 * `onError`. The engine knows no HTTP server: hosts (CLI run, serve, triggers) hand it a compiled
 * integration, the trigger data and the services connectors need.
 */
import { newExecutionId } from '../common/ids.js';
import { ActionError, StopSignal } from '../common/errors.js';
import type { ExecutionTrace } from '../common/tracing.js';
import type { ActionContext, HttpResponseSpec, LogLevel, ResolvedConnection, RuntimeServices } from '../connectors/types.js';
import type { CompiledIntegration, CompiledStep } from '../definition/types.js';
import { EvaluationError, evaluateTemplate, jsonataBoolean, type Scope } from './evaluate.js';
import { prepareInputs } from './inputs.js';
import type { ExecutionRecord, LogEntry, StepError, StepRecord } from './record.js';
import { invokeWithRetry, type RetrySleep } from './step-attempts.js';
import { connectorFor } from '../connectors/registry.js';
import { resolveConnection } from './connections.js';

export interface RunOptions {
  integration: CompiledIntegration;
  /** `$trigger`. */
  trigger: unknown;
  services: RuntimeServices;
  executionId?: string;
  attempt?: number;
  test?: boolean;
  /** `$state` (poll and appEvent trigger state). */
  state?: Record<string, unknown>;
  /** Runs these steps instead of the integration's (appEvent subscribe/unsubscribe). */
  steps?: CompiledStep[];
  env?: NodeJS.ProcessEnv;
  /** Aborts the run (shutdown); the current step's request is cancelled. */
  signal?: AbortSignal;
  /** Called after each step but the last with the record so far (stores persist progress; the host saves the final record). */
  onProgress?: (record: ExecutionRecord) => void | Promise<void>;
  /** Every log entry, as it happens (structured logs). */
  onLog?: (entry: LogEntry, record: ExecutionRecord) => void;
  /** Called as soon as core.respond sets a response (sync webhooks answer early). */
  onResponse?: (response: HttpResponseSpec) => void;
  queuedAt?: string;
  /**
   * Answers each attempt of a step's action instead of its connector; `next` runs the real
   * action. `hcm-runner test` answers calling steps from their mocks here. Default: the
   * connector, with the step's connection resolved before the first attempt.
   */
  invoke?: (call: ActionCall, next: () => Promise<unknown>) => Promise<unknown>;
  /** Waits between retry attempts (default: a real timer); `hcm-runner test` records the delay instead. */
  sleep?: (ms: number, step: CompiledStep, signal: AbortSignal) => Promise<void>;
  /** The execution's span when tracing is on (common/tracing.ts): each step runs in a child span. */
  trace?: ExecutionTrace;
}

/** One attempt of a step's action, as `RunOptions.invoke` sees it. */
export interface ActionCall {
  step: CompiledStep;
  /** Inputs evaluated, defaulted and checked against the action's schema. */
  inputs: Record<string, unknown>;
  /** The forEach item and its index, when the step has forEach. */
  item?: unknown;
  index?: number;
  signal: AbortSignal;
}

export async function runExecution(opts: RunOptions): Promise<ExecutionRecord> {
  const { integration } = opts;
  const startedAt = new Date();
  const record: ExecutionRecord = {
    id: opts.executionId ?? newExecutionId(),
    integration: integration.name,
    status: 'running',
    test: opts.test ?? false,
    attempt: opts.attempt ?? 1,
    trigger: opts.trigger,
    steps: [],
    log: [],
    queuedAt: opts.queuedAt,
    startedAt: startedAt.toISOString(),
  };
  if (opts.trace) record.traceId = opts.trace.traceId;
  const run = new Run(opts, record);
  try {
    await run.all();
    record.status = 'succeeded';
  } catch (err) {
    if (err instanceof StopSignal) {
      record.status = 'succeeded';
    } else {
      record.status = 'failed';
      if (err instanceof StepFailure) {
        record.error = err.error; // the step already logged it
      } else {
        record.error = { message: `integration ${integration.name}: ${(err as Error).message}` };
        run.log('error', record.error.message);
      }
    }
  }
  const finished = new Date();
  record.finishedAt = finished.toISOString();
  record.durationMs = finished.getTime() - startedAt.getTime();
  return record;
}

/** A step failure that ends the execution (onError: fail). */
class StepFailure extends Error {
  constructor(readonly error: StepError) {
    super(error.message);
  }
}

class Run {
  private readonly scope: Scope;
  private readonly connections = new Map<string, Promise<ResolvedConnection>>();
  private readonly signal: AbortSignal;

  constructor(
    private readonly opts: RunOptions,
    private readonly record: ExecutionRecord,
  ) {
    this.signal = opts.signal ?? new AbortController().signal;
    this.scope = {
      trigger: opts.trigger,
      steps: {},
      errors: {},
      config: {},
      execution: {
        id: record.id,
        integration: record.integration,
        startedAt: record.startedAt,
        attempt: record.attempt,
        test: record.test,
      },
      state: opts.state ?? {},
      env: opts.env ?? process.env,
    };
  }

  log(level: LogLevel, message: string, step?: string): void {
    const entry: LogEntry = { at: new Date().toISOString(), level, message };
    if (step) entry.step = step;
    this.record.log.push(entry);
    this.opts.onLog?.(entry, this.record);
  }

  async all(): Promise<void> {
    try {
      this.scope.config = ((await evaluateTemplate(this.opts.integration.config, this.scope)) ?? {}) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`config: ${(err as Error).message}`);
    }
    const steps = this.opts.steps ?? this.opts.integration.steps;
    for (let i = 0; i < steps.length; i++) {
      if (this.signal.aborted) throw new Error('execution interrupted by shutdown; it will be resumed');
      await this.step(steps[i]!);
      // Not after the last step: the host saves the finished record right away (one write less).
      if (i < steps.length - 1) await this.opts.onProgress?.(this.record);
    }
  }

  private step(step: CompiledStep): Promise<void> {
    const rec: StepRecord = { id: step.id, action: step.action.key, status: 'running', startedAt: new Date().toISOString() };
    this.record.steps.push(rec);
    const trace = this.opts.trace;
    return trace ? trace.step(rec, () => this.runStep(step, rec)) : this.runStep(step, rec);
  }

  private async runStep(step: CompiledStep, rec: StepRecord): Promise<void> {
    const t0 = performance.now();
    const finish = (status: StepRecord['status']) => {
      rec.status = status;
      rec.finishedAt = new Date().toISOString();
      rec.durationMs = Math.round((performance.now() - t0) * 1000) / 1000;
    };
    try {
      if (step.if && !jsonataBoolean(await evaluateTemplate(step.if, this.scope))) {
        finish('skipped');
        this.log('debug', `step ${step.id} skipped: its if condition is false`, step.id);
        return;
      }
      let results: unknown;
      if (step.forEach) {
        const items = await evaluateTemplate(step.forEach, this.scope);
        const list = items === undefined || items === null ? [] : Array.isArray(items) ? items : [items];
        const out: unknown[] = [];
        rec.attempts = 0;
        for (let index = 0; index < list.length; index++) {
          const scope = { ...this.scope, item: list[index], index };
          const { results: r, attempts } = await this.invoke(step, scope);
          rec.attempts += attempts;
          out.push(r);
        }
        results = out;
      } else {
        const { results: r, attempts } = await this.invoke(step, this.scope);
        rec.attempts = attempts;
        results = r;
      }
      rec.results = results;
      this.scope.steps[step.id] = results;
      this.record.result = results;
      finish('succeeded');
      // Engine events are debug entries: in the execution's log, not in the process log.
      this.log(
        'debug',
        `step ${step.id} (${step.action.key}) succeeded in ${rec.durationMs} ms${rec.attempts && rec.attempts > 1 ? ` after ${rec.attempts} attempts` : ''}`,
        step.id,
      );
    } catch (err) {
      if (err instanceof StopSignal) {
        finish('succeeded');
        this.log('info', `step ${step.id}: execution stopped by core.stop`, step.id);
        throw err;
      }
      const error = this.stepError(step, err);
      rec.error = error;
      // forEach: the attempts of the items that succeeded plus those of the one that failed.
      const failedAttempts = (err as { attempts?: number }).attempts;
      if (failedAttempts !== undefined) rec.attempts = (rec.attempts ?? 0) + failedAttempts;
      finish('failed');
      this.log(step.onError === 'continue' ? 'warn' : 'error', error.message, step.id);
      if (step.onError === 'continue') {
        this.scope.errors[step.id] = error;
        return;
      }
      throw new StepFailure(error);
    }
  }

  private async invoke(step: CompiledStep, scope: Scope): Promise<{ results: unknown; attempts: number }> {
    const inputs = prepareInputs(step.action, await evaluateTemplate(step.inputs, scope));
    const { invoke, sleep } = this.opts;
    // Resolved before the first attempt, so a bad connection fails at once instead of being
    // retried — unless an invoke hook may answer without it (mocks need no credentials).
    let connection = step.connection && !invoke ? await this.connection(step.connection) : undefined;
    const connector = connectorFor(step.action.key);
    const makeContext = (signal: AbortSignal, connection: ResolvedConnection | undefined): ActionContext => ({
      integration: this.record.integration,
      stepId: step.id,
      action: step.action,
      executionId: this.record.id,
      test: this.record.test,
      signal,
      connection,
      services: this.opts.services,
      log: (level, message) => this.log(level, message, step.id),
      respond: (response) => {
        this.record.response = response;
        this.opts.onResponse?.(response);
      },
    });
    const real = async (signal: AbortSignal) => {
      if (step.connection) connection ??= await this.connection(step.connection);
      return connector.invoke(step.action, inputs, makeContext(signal, connection));
    };
    const attempt = invoke
      ? (signal: AbortSignal) =>
          invoke({ step, inputs, ...('item' in scope ? { item: scope.item, index: scope.index } : {}), signal }, () => real(signal))
      : real;
    const wait: RetrySleep | undefined = sleep ? (ms, signal) => sleep(ms, step, signal) : undefined;
    return invokeWithRetry(step, this.signal, attempt, (message) => this.log('warn', message, step.id), wait);
  }

  /** Connection configs are evaluated once per execution (env values read at run time). */
  private connection(name: string): Promise<ResolvedConnection> {
    let c = this.connections.get(name);
    if (!c) {
      c = resolveConnection(this.opts.integration, name, this.scope);
      this.connections.set(name, c);
    }
    return c;
  }

  private stepError(step: CompiledStep, err: unknown): StepError {
    const integration = this.record.integration;
    const e = err as Error;
    const error: StepError = {
      message: `integration ${integration}, step ${step.id} (${step.action.key}): ${e?.message ?? String(err)}`,
      integration,
      step: step.id,
      action: step.action.key,
    };
    if (err instanceof ActionError) {
      if (err.details.status !== undefined) error.status = err.details.status;
      if (err.details.code) error.code = err.details.code;
      if (err.details.remote !== undefined) error.remote = err.details.remote;
    } else if (err instanceof EvaluationError) {
      error.code = 'expression';
    }
    return error;
  }
}
