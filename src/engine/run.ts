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
import { CancelSignal, type DurableHost, WaitSignal } from './durable.js';
import { isFinished } from './resume.js';
import { createCallback, runWait, type WaitContext } from './wait.js';
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
    if (opts.cancel?.aborted) {
      // Whatever the running step did when its request was aborted: the execution was cancelled.
      record.status = 'cancelled';
      run.log('info', 'execution cancelled');
    } else if (err instanceof StopSignal) {
      record.status = 'succeeded';
    } else if (err instanceof WaitSignal) {
      // Not a failure: the host keeps the record and resumes it at wakeAt or when its callback comes.
      record.status = 'waiting';
      if (err.wakeAt) record.wakeAt = err.wakeAt;
      record.waitingFor = err.waitingFor;
      run.log(
        'info',
        `waiting at step ${err.waitingFor.step}${err.wakeAt ? ` until ${err.wakeAt}` : ''}${err.waitingFor.kind === 'callback' ? ' for a request to its callback' : ''}`,
      );
      return record;
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
  /** Resuming: the same block's step records in the earlier run (RunOptions.resume). */
  prev?: readonly StepRecord[];
}

/** The block inside a group step: reads what its parent block reads, writes its own results. */
function innerBlock(parent: Block, records: StepRecord[], item?: { item: unknown; index: number }, prev?: readonly StepRecord[]): Block {
  const scope: Scope = { ...parent.scope, steps: { ...parent.scope.steps }, errors: { ...parent.scope.errors } };
  if (item) {
    scope.item = item.item;
    scope.index = item.index;
  }
  const block: Block = { scope, records, own: {}, top: false };
  if (prev) block.prev = prev;
  return block;
}

class Run {
  private readonly scope: Scope;
  private readonly topBlock: Block;
  private readonly turns = new Turns();
  private readonly connections = new Map<string, Promise<ResolvedConnection>>();
  /** Aborted on shutdown or cancel: the running step's request is aborted either way. */
  private readonly signal: AbortSignal;

  constructor(
    private readonly opts: RunOptions,
    private readonly record: ExecutionRecord,
  ) {
    const shutdown = opts.signal ?? new AbortController().signal;
    // Once per run, not per step: a step's signal stays the one object it was without cancel.
    this.signal = opts.cancel ? AbortSignal.any([shutdown, opts.cancel]) : shutdown;
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
    if (opts.resume && !opts.steps) this.topBlock.prev = opts.resume;
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
      this.boundary();
      await this.step(steps[i]!, this.topBlock);
      // Not after the last step: the host saves the finished record right away (one write less).
      if (i < steps.length - 1) await this.opts.onProgress?.(this.record);
    }
  }

  /** The steps of a group, an iteration or a case, in order. */
  private async list(steps: readonly CompiledStep[], block: Block): Promise<void> {
    for (const step of steps) {
      this.boundary();
      await this.step(step, block);
    }
  }

  /** Between two steps: a cancel ends the run `cancelled`, a shutdown interrupts it (it is resumed). */
  private boundary(): void {
    if (this.opts.cancel?.aborted) throw new CancelSignal();
    if (this.signal.aborted) throw new Error('execution interrupted by shutdown; it will be resumed');
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
      out.error =
        err instanceof StepFailure
          ? err.error
          : err instanceof WaitSignal
            ? {
                message: `integration ${r.integration}, onFailure: step ${err.waitingFor.step} (core.wait) cannot wait in onFailure: it runs once, after the execution failed`,
              }
            : { message: `integration ${r.integration}, onFailure: ${(err as Error).message}` };
      this.log('error', `onFailure failed (the execution stays failed): ${out.error.message}`);
    }
  }

  private step(step: CompiledStep, block: Block): Promise<void> | undefined {
    let prev: StepRecord | undefined;
    if (block.prev) {
      prev = earlier(block.prev, step);
      if (prev && isFinished(prev, prev.status === 'failed' && step.onError === 'continue')) {
        this.reuse(step, prev, block);
        return;
      }
    }
    const rec: StepRecord = { id: step.id, action: step.action.key, status: 'running', startedAt: new Date().toISOString() };
    block.records.push(rec);
    const trace = this.opts.trace;
    return trace ? trace.step(rec, () => this.runStep(step, rec, block, prev)) : this.runStep(step, rec, block, prev);
  }

  /** A step finished in the run this one resumes: its record as it was, its results in `$steps`. */
  private reuse(step: CompiledStep, prev: StepRecord, block: Block): void {
    block.records.push(prev);
    if (prev.status === 'failed') {
      block.scope.errors[step.id] = prev.error;
    } else if (prev.status === 'succeeded') {
      const results = resultsOf(step, prev);
      block.scope.steps[step.id] = results;
      if (block.own) block.own[step.id] = results;
      if (block.top) this.record.result = results;
    }
    this.log('debug', `step ${step.id} ${prev.status} in an earlier run: not run again`, step.id);
  }

  /** After a finished step that may have changed something outside the execution: the host commits the record. */
  private checkpoint(step: CompiledStep): Promise<void> | undefined {
    const checkpoint = this.opts.checkpoint;
    // Groups and switches checkpoint through their inner steps.
    if (!checkpoint || step.action.readOnly || step.steps || step.switch) return undefined;
    return checkpoint(this.record);
  }

  private async runStep(step: CompiledStep, rec: StepRecord, block: Block, prev: StepRecord | undefined): Promise<void> {
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
        results = step.switch ? await this.switchStep(step, block, rec, prev) : await this.group(step, block, rec, prev);
        if (results === SKIPPED) {
          finish('skipped');
          this.log('debug', `step ${step.id} skipped: no case matched and it has no default`, step.id);
          return;
        }
      } else if (step.forEach) {
        if (step.action.key === 'core.wait')
          throw new ActionError('core.wait cannot have forEach: put it in the steps of a forEach group, one wait per iteration');
        const list = await this.items(step, scope);
        rec.attempts = 0;
        // Items finished before a crash or a failure are not run again; partial results are kept
        // (rec.done) only when someone reads them: a checkpoint, or a resume that had some.
        const keep = this.opts.checkpoint && !step.action.readOnly;
        if (prev?.done) rec.done = { ...prev.done };
        results = await mapInOrder(list, step.concurrency ?? 1, this.turns, async (item, index) => {
          if (rec.done && index in rec.done) return rec.done[index];
          this.boundary();
          const { results: r, attempts } = await this.invoke(step, { ...scope, item, index }, rec);
          rec.attempts! += attempts;
          if (keep) {
            (rec.done ??= {})[index] = r;
            await this.opts.checkpoint!(this.record);
          }
          return r;
        });
        if (rec.done) delete rec.done; // finished: its results are the step's
      } else {
        const { results: r, attempts } = await this.invoke(step, scope, rec, prev);
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
      const saved = this.checkpoint(step);
      if (saved) await saved;
    } catch (err) {
      if (err instanceof WaitSignal) {
        rec.status = 'waiting';
        // The path of the waiting step, built on the way out: `group.step`, `group[2].step`.
        if (step.steps || step.switch) err.waitingFor.step = `${step.id}${err.waitingFor.step.startsWith('[') ? '' : '.'}${err.waitingFor.step}`;
        throw err;
      }
      if (err instanceof CancelSignal) throw err; // the step that ran last is recorded as it ended
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
      // A failure because the run was interrupted (shutdown, cancel) is no failure to go on from: the
      // run ends here, uncommitted, and a resumed run runs the step again.
      if (step.onError === 'continue' && !this.signal.aborted) {
        scope.errors[step.id] = error;
        // A failed action may still have changed something (a POST whose answer timed out).
        if (!inner) {
          const saved = this.checkpoint(step);
          if (saved) await saved;
        }
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
  private async group(step: CompiledStep, block: Block, rec: StepRecord, prev: StepRecord | undefined): Promise<unknown> {
    const steps = step.steps!;
    if (!step.forEach) {
      const inner = innerBlock(block, (rec.steps = []), undefined, prev?.steps);
      await this.list(steps, inner);
      return inner.own;
    }
    const list = await this.items(step, block.scope);
    const iterations: NonNullable<StepRecord['iterations']> = (rec.iterations = []);
    const earlierIterations = prev?.iterations ? new Map(prev.iterations.map((it) => [it.index, it.steps])) : undefined;
    return mapInOrder(list, step.concurrency ?? 1, this.turns, async (item, index) => {
      const it = { index, steps: [] as StepRecord[] };
      iterations.push(it); // called in item order (mapInOrder), so the iterations are in order too
      const inner = innerBlock(block, it.steps, { item, index }, earlierIterations?.get(index));
      try {
        await this.list(steps, inner);
      } catch (err) {
        if (err instanceof WaitSignal) err.waitingFor.step = `[${index}].${err.waitingFor.step}`;
        throw err;
      }
      return inner.own;
    });
  }

  /** A switch: the first case whose `when` holds, else `default`, else SKIPPED. */
  private async switchStep(step: CompiledStep, block: Block, rec: StepRecord, prev: StepRecord | undefined): Promise<unknown> {
    const sw = step.switch!;
    let name = 'default';
    let steps = sw.default;
    // Resuming inside a switch: the case chosen then, not one the data might choose now.
    const recorded = prev?.case === undefined ? undefined : prev.case === 'default' ? sw.default : sw.cases.find((c) => c.name === prev.case)?.steps;
    if (recorded) {
      name = prev!.case!;
      steps = recorded;
    } else {
      for (const c of sw.cases) {
        if (jsonataBoolean(await evaluateTemplate(c.when, block.scope))) {
          name = c.name;
          steps = c.steps;
          break;
        }
      }
    }
    if (!steps) return SKIPPED;
    rec.case = name;
    const inner = innerBlock(block, (rec.steps = []), undefined, recorded ? prev!.steps : undefined);
    await this.list(steps, inner);
    return inner.own;
  }

  private async invoke(step: CompiledStep, scope: Scope, rec: StepRecord, prev?: StepRecord): Promise<{ results: unknown; attempts: number }> {
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
    const key = step.action.key;
    if (key === 'core.wait' || key === 'core.callback') {
      // In the engine: a wait ends the run and is re-checked from its record when it resumes.
      const wait: WaitContext = {
        durable: this.opts.durable,
        integration: this.record.integration,
        executionId: this.record.id,
        test: this.record.test,
        step,
        rec,
        resumed: prev?.status === 'waiting' ? prev : undefined,
      };
      const run = key === 'core.wait' ? () => runWait(wait, inputs) : () => createCallback(wait, inputs);
      return { results: await (invoke ? invoke({ step, inputs, signal: this.signal }, run) : run()), attempts: 1 };
    }
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
    if (child.status === 'waiting')
      throw new ActionError(
        `${integration} (execution ${child.id}) stopped at core.wait step ${child.waitingFor?.step}: a called integration cannot wait — put the wait in the calling integration`,
        { code: 'child_waiting' },
      );
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

/** The earlier run's record of this step, when it ran the same action. */
function earlier(records: readonly StepRecord[], step: CompiledStep): StepRecord | undefined {
  for (const r of records) if (r.id === step.id) return r.action === step.action.key ? r : undefined;
  return undefined;
}

/** A finished step's results as the engine builds them: an action's recorded results, a group's from its inner records. */
function resultsOf(step: CompiledStep, rec: StepRecord): unknown {
  if (!step.steps && !step.switch) return rec.results;
  if (step.forEach && step.steps) return (rec.iterations ?? []).map((it) => ownResults(step.steps!, it.steps));
  const steps = step.switch ? (rec.case === 'default' ? step.switch.default : step.switch.cases.find((c) => c.name === rec.case)?.steps) : step.steps;
  return ownResults(steps ?? [], rec.steps ?? []);
}

function ownResults(steps: readonly CompiledStep[], records: readonly StepRecord[]): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  for (const r of records) {
    if (r.status !== 'succeeded') continue;
    const step = steps.find((s) => s.id === r.id);
    if (step) own[r.id] = resultsOf(step, r);
  }
  return own;
}
