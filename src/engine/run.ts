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
import type { ExecutionRecord, LogEntry, OnFailureRecord, StepError, StepRecord } from './record.js';
import { mapInOrder, Turns } from './parallel.js';
import { type CallHost, MAX_CALL_DEPTH } from './call.js';
import { invokeWithRetry, type RetrySleep } from './step-attempts.js';
import { connectorFor } from '../connectors/registry.js';
import type { DurableHost } from './durable.js';
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
  /** Runs core.call's child executions (the host knows the loaded integrations); without it core.call fails. */
  call?: CallHost;
  /** How deep this execution is in a chain of core.call (0: not called). */
  depth?: number;
  /** A child execution: the execution and step that called it. */
  parent?: { executionId: string; step: string };
  /**
   * Resume (engine/durable.ts): the step records of an earlier run of this execution — a crash,
   * a wake-up after core.wait, or the execution a retry retries. Steps finished there (succeeded,
   * skipped, failed with `onError: continue`) are not run again; their records and results are used.
   */
  resume?: StepRecord[];
  /**
   * Called (and awaited) after each finished step that may have changed something outside the
   * execution, and after each such forEach item — not after read-only actions — so a crash
   * resumes after it (docs/promises.md). The host commits the record (group commit).
   */
  checkpoint?: (record: ExecutionRecord) => Promise<void>;
  /** core.wait and core.callback (engine/durable.ts); without it both fail naming the host. */
  durable?: DurableHost;
  /** Aborted by `POST …/cancel`: the run ends `cancelled` at its next step boundary, the running step's request aborted. */
  cancel?: AbortSignal;
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
  if (opts.parent) record.parent = opts.parent;
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
  // Failed for good: not an interruption (the execution is resumed), not subscribe/unsubscribe steps.
  if (record.status === 'failed' && integration.onFailure && !opts.steps && !opts.signal?.aborted) await run.onFailure(integration.onFailure);
  const finished = new Date();
  record.finishedAt = finished.toISOString();
  record.durationMs = finished.getTime() - startedAt.getTime();
  return record;
}

/** A switch without a matching case or a default. */
const SKIPPED: unique symbol = Symbol('skipped');

/** A step failure that ends the execution (onError: fail). */
class StepFailure extends Error {
  constructor(readonly error: StepError) {
    super(error.message);
  }
}

/**
 * A list of steps and where its steps write: the top-level list (one object for the whole run,
 * so flat lists allocate nothing per step) or a group's, an iteration's, a case's.
 */
interface Block {
  scope: Scope;
  records: StepRecord[];
  /** The results of the block's steps that ran: the group's results. Absent at the top level. */
  own?: Record<string, unknown>;
  /** Top-level steps set the execution's `result`. */
  top: boolean;
}

/** The block inside a group step: reads what its parent block reads, writes its own results. */
function innerBlock(parent: Block, records: StepRecord[], item?: { item: unknown; index: number }): Block {
  const scope: Scope = { ...parent.scope, steps: { ...parent.scope.steps }, errors: { ...parent.scope.errors } };
  if (item) {
    scope.item = item.item;
    scope.index = item.index;
  }
  return { scope, records, own: {}, top: false };
}

class Run {
  private readonly scope: Scope;
  private readonly topBlock: Block;
  private readonly turns = new Turns();
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
    this.topBlock = { scope: this.scope, records: record.steps, top: true };
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
      await this.step(steps[i]!, this.topBlock);
      // Not after the last step: the host saves the finished record right away (one write less).
      if (i < steps.length - 1) await this.opts.onProgress?.(this.record);
    }
  }

  /** The steps of a group, an iteration or a case, in order. */
  private async list(steps: readonly CompiledStep[], block: Block): Promise<void> {
    for (const step of steps) {
      if (this.signal.aborted) throw new Error('execution interrupted by shutdown; it will be resumed');
      await this.step(step, block);
    }
  }

  /** Runs `onFailure` once; its outcome is recorded and logged, never changes the execution's status. */
  async onFailure(steps: readonly CompiledStep[]): Promise<void> {
    const r = this.record;
    const out: OnFailureRecord = { status: 'running', steps: [] };
    r.onFailure = out;
    const block = innerBlock(this.topBlock, out.steps);
    block.scope.failure = {
      executionId: r.id,
      integration: r.integration,
      attempt: r.attempt,
      test: r.test,
      step: (r.error as StepError | undefined)?.step,
      error: r.error,
    };
    try {
      await this.list(steps, block);
      out.status = 'succeeded';
    } catch (err) {
      if (err instanceof StopSignal) {
        out.status = 'succeeded';
        return;
      }
      out.status = 'failed';
      out.error = err instanceof StepFailure ? err.error : { message: `integration ${r.integration}, onFailure: ${(err as Error).message}` };
      this.log('error', `onFailure failed (the execution stays failed): ${out.error.message}`);
    }
  }

  private step(step: CompiledStep, block: Block): Promise<void> {
    const rec: StepRecord = { id: step.id, action: step.action.key, status: 'running', startedAt: new Date().toISOString() };
    block.records.push(rec);
    const trace = this.opts.trace;
    return trace ? trace.step(rec, () => this.runStep(step, rec, block)) : this.runStep(step, rec, block);
  }

  private async runStep(step: CompiledStep, rec: StepRecord, block: Block): Promise<void> {
    const t0 = performance.now();
    const finish = (status: StepRecord['status']) => {
      rec.status = status;
      rec.finishedAt = new Date().toISOString();
      rec.durationMs = Math.round((performance.now() - t0) * 1000) / 1000;
    };
    const scope = block.scope;
    try {
      if (step.if && !jsonataBoolean(await evaluateTemplate(step.if, scope))) {
        finish('skipped');
        this.log('debug', `step ${step.id} skipped: its if condition is false`, step.id);
        return;
      }
      let results: unknown;
      if (step.steps || step.switch) {
        results = step.switch ? await this.switchStep(step, block, rec) : await this.group(step, block, rec);
        if (results === SKIPPED) {
          finish('skipped');
          this.log('debug', `step ${step.id} skipped: no case matched and it has no default`, step.id);
          return;
        }
      } else if (step.forEach) {
        const list = await this.items(step, scope);
        rec.attempts = 0;
        results = await mapInOrder(list, step.concurrency ?? 1, this.turns, async (item, index) => {
          const { results: r, attempts } = await this.invoke(step, { ...scope, item, index }, rec);
          rec.attempts! += attempts;
          return r;
        });
      } else {
        const { results: r, attempts } = await this.invoke(step, scope, rec);
        rec.attempts = attempts;
        results = r;
      }
      // A group's results are its steps' records already: not written twice.
      if (!step.steps && !step.switch) rec.results = results;
      scope.steps[step.id] = results;
      if (block.own) block.own[step.id] = results;
      if (block.top) this.record.result = results;
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
        // Said once, by the step that stopped; the groups around it only pass it on.
        if (!step.steps && !step.switch) this.log('info', `step ${step.id}: execution stopped by core.stop`, step.id);
        throw err;
      }
      // A step inside this group failed: that step's error (already logged) is the group's.
      const inner = err instanceof StepFailure;
      const error = inner ? err.error : this.stepError(step, err);
      rec.error = error;
      // forEach: the attempts of the items that succeeded plus those of the one that failed.
      const failedAttempts = (err as { attempts?: number }).attempts;
      if (failedAttempts !== undefined) rec.attempts = (rec.attempts ?? 0) + failedAttempts;
      finish('failed');
      if (!inner) this.log(step.onError === 'continue' ? 'warn' : 'error', error.message, step.id);
      else if (step.onError === 'continue') this.log('warn', `step ${step.id} failed (continuing): ${error.message}`, step.id);
      if (step.onError === 'continue') {
        scope.errors[step.id] = error;
        return;
      }
      throw inner ? err : new StepFailure(error);
    }
  }

  /** forEach's items: an array as it is, nothing as none, anything else as one item. */
  private async items(step: CompiledStep, scope: Scope): Promise<unknown[]> {
    const items = await evaluateTemplate(step.forEach!, scope);
    return items === undefined || items === null ? [] : Array.isArray(items) ? items : [items];
  }

  /** A group: its steps once (results: an object by step id), or once per item (an array of them). */
  private async group(step: CompiledStep, block: Block, rec: StepRecord): Promise<unknown> {
    const steps = step.steps!;
    if (!step.forEach) {
      const inner = innerBlock(block, (rec.steps = []));
      await this.list(steps, inner);
      return inner.own;
    }
    const list = await this.items(step, block.scope);
    const iterations: NonNullable<StepRecord['iterations']> = (rec.iterations = []);
    return mapInOrder(list, step.concurrency ?? 1, this.turns, async (item, index) => {
      const it = { index, steps: [] as StepRecord[] };
      iterations.push(it); // called in item order (mapInOrder), so the iterations are in order too
      const inner = innerBlock(block, it.steps, { item, index });
      await this.list(steps, inner);
      return inner.own;
    });
  }

  /** A switch: the first case whose `when` holds, else `default`, else SKIPPED. */
  private async switchStep(step: CompiledStep, block: Block, rec: StepRecord): Promise<unknown> {
    const sw = step.switch!;
    let name = 'default';
    let steps = sw.default;
    for (const c of sw.cases) {
      if (jsonataBoolean(await evaluateTemplate(c.when, block.scope))) {
        name = c.name;
        steps = c.steps;
        break;
      }
    }
    if (!steps) return SKIPPED;
    rec.case = name;
    const inner = innerBlock(block, (rec.steps = []));
    await this.list(steps, inner);
    return inner.own;
  }

  private async invoke(step: CompiledStep, scope: Scope, rec: StepRecord): Promise<{ results: unknown; attempts: number }> {
    const inputs = prepareInputs(step.action, await evaluateTemplate(step.inputs, scope));
    const { invoke, sleep } = this.opts;
    // Resolved before the first attempt, so a bad connection fails at once instead of being
    // retried — unless an invoke hook may answer without it (mocks need no credentials).
    let connection = step.connection && !invoke ? await this.connection(step.connection) : undefined;
    const connector = connectorFor(step.action.key);
    const makeContext = (signal: AbortSignal, connection: ResolvedConnection | undefined): ActionContext => {
      const ctx: ActionContext = {
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
      };
      // Only core.call's context can call (no closure more for every other action).
      if (step.action.key === 'core.call') ctx.call = (integration, input) => this.call(step, rec, scope.index, integration, input, signal);
      return ctx;
    };
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

  /** core.call: the child execution, linked both ways; its result is the step's, its failure the step's. */
  private async call(step: CompiledStep, rec: StepRecord, index: number | undefined, integration: string, input: unknown, signal: AbortSignal) {
    const host = this.opts.call;
    if (!host) throw new ActionError('core.call cannot run here: this host runs no other integrations');
    const depth = (this.opts.depth ?? 0) + 1;
    if (depth > MAX_CALL_DEPTH)
      throw new ActionError(
        `calling ${integration} would nest calls ${depth} deep; at most ${MAX_CALL_DEPTH} are allowed — look for a cycle through an integration named by an expression`,
        { code: 'call_depth' },
      );
    const child = await host({
      integration,
      input,
      parent: { executionId: this.record.id, step: step.id },
      depth,
      test: this.record.test,
      signal,
      started: (id) => {
        if (index === undefined) rec.childExecutionId = id;
        else (rec.childExecutionIds ??= [])[index] = id;
      },
    });
    if (child.status !== 'succeeded') {
      const e = child.error as StepError | undefined;
      throw new ActionError(`${integration} (execution ${child.id}) failed: ${e?.message ?? child.status}`, {
        code: e && 'code' in e && e.code ? e.code : 'child_failed',
        ...(e && 'status' in e && e.status !== undefined ? { status: e.status } : {}),
      });
    }
    return child.result;
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
