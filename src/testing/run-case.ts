/**
 * Runs one test case through the real engine — the same compiled integration, bindings, `if`,
 * `forEach`, retries, `onError` and webhook response rules as `serve` — with calling steps
 * answered by their mocks, retry delays recorded instead of slept, and `$execution.test` true.
 * Then checks the case's expectations.
 */
import { newExecutionId } from '../common/ids.js';
import { binaryFromBytes } from '../common/binary.js';
import { ActionError } from '../common/errors.js';
import type { HttpResponseSpec, RuntimeServices } from '../connectors/types.js';
import type { CompiledIntegration, CompiledStep, ValueTemplate } from '../definition/types.js';
import { allSteps } from '../definition/control-flow.js';
import { bareScope } from '../engine/connections.js';
import { evaluateTemplate, type Scope } from '../engine/evaluate.js';
import type { ExecutionRecord, StepRecord } from '../engine/record.js';
import { runExecution, type RunOptions } from '../engine/run.js';
import { callHost } from '../triggers/call/children.js';
import { webhookOptionsOf } from '../triggers/registry.js';
import { isJsonType, parseContentType } from '../triggers/webhook/content-type.js';
import { errorResponse, HttpError } from '../common/errors.js';
import { asyncWebhookResponse, syncWebhookResponse, type RenderedResponse } from '../triggers/webhook/response.js';
import { subsetMismatches, type Mismatch } from './match.js';
import { callsOut, mockedError } from './mocks.js';
import { caseTrigger } from './trigger.js';
import { type CaseWait, testDurableHost } from './durable.js';
import type { MockAnswer, TestCase, TestSuite } from './types.js';

/** What the webhook caller got, with the body parsed back from the bytes sent. */
export interface CallerResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface CaseFailure {
  message: string;
  /** JSON pointer in the test file of the expectation (or the case) it is about. */
  pointer: string;
  path?: string;
  expected?: unknown;
  actual?: unknown;
}

export interface CaseResult {
  name: string;
  pointer: string;
  passed: boolean;
  durationMs: number;
  failures: CaseFailure[];
  status: ExecutionRecord['status'] | 'rejected';
  response?: CallerResponse;
  /** Retry delays the engine would have slept, per step. */
  waits: Array<{ step: string; ms: number }>;
  /** core.wait steps, finished at once (`hcm-runner test` does not wait). */
  durableWaits: CaseWait[];
  execution?: ExecutionRecord;
  /** The child executions core.call ran, in the order they finished. */
  children?: ExecutionRecord[];
}

export interface CaseRunOptions {
  services: RuntimeServices;
  env?: NodeJS.ProcessEnv;
  /** Unmocked HCM steps call the HCM sandbox (`--sandbox`; the env points the connections at it). */
  sandbox?: boolean;
  /** The integrations an unmocked core.call may run (the test file's folder); their steps are mocked by id like the caller's. */
  integrations?: (name: string) => CompiledIntegration | undefined;
}

export async function runCase(suite: TestSuite, c: TestCase, opts: CaseRunOptions): Promise<CaseResult> {
  const started = performance.now();
  const env = opts.env ?? process.env;
  const integration = withConfig(suite.integration, c.config);
  const failures: CaseFailure[] = [];
  const waits: CaseResult['waits'] = [];
  const durableWaits: CaseWait[] = [];
  const executionId = newExecutionId();
  const now = new Date();
  const result: CaseResult = { name: c.name, pointer: c.pointer, passed: false, durationMs: 0, failures, status: 'rejected', waits, durableWaits };

  let trigger: unknown;
  try {
    trigger = await caseTrigger(integration, c.trigger, executionId, now);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    // Refused before any execution exists, answered as serve answers it.
    const answer = errorResponse(err);
    result.response = { statusCode: answer.status, headers: answer.headers, body: JSON.parse(answer.body) };
  }

  if (trigger !== undefined) {
    const calls = new Map<string, number>();
    let firstResponse: HttpResponseSpec | undefined;
    const sleep = async (ms: number, step: CompiledStep) => {
      waits.push({ step: step.id, ms });
    };
    const invoke: RunOptions['invoke'] = async (call, next) => {
      const { step } = call;
      const key = step.action.key;
      const mock = c.mocks[step.id];
      if (mock) {
        const n = calls.get(step.id) ?? 0;
        calls.set(step.id, n + 1);
        const answer: MockAnswer | undefined = mock.kind === 'every' ? mock.answer : mock.answers[n];
        if (!answer) {
          const message = `step ${step.id} (${key}) was called ${n + 1} times but mocks.${step.id}.calls lists ${n} answer(s); add one per call (forEach items and retries)`;
          failures.push({ message, pointer: mock.pointer });
          throw new ActionError(message, { code: 'no_mock' });
        }
        if ('error' in answer) throw mockedError(key, answer.error, call.inputs);
        return structuredClone(answer.results);
      }
      if (!callsOut(key) || (opts.sandbox && key.startsWith('hcm.'))) return next();
      const message = `step ${step.id} (${key}) calls out and has no mock: add mocks.${step.id} with results, error or calls${key.startsWith('hcm.') ? ', or run with --sandbox' : ''}`;
      if (!failures.some((f) => f.message === message)) failures.push({ message, pointer: c.pointer });
      throw new ActionError(message, { code: 'no_mock' });
    };
    const durable = testDurableHost(opts.services.publicUrl, c.callbacks, durableWaits);
    const lookup = opts.integrations;
    const call = lookup
      ? callHost(lookup, async (child, run) => {
          const rec = await runExecution({ integration: child, services: opts.services, env, sleep, invoke, durable, ...run, test: true });
          (result.children ??= []).push(rec);
          return rec;
        })
      : undefined;
    const record = await runExecution({
      integration,
      trigger,
      services: opts.services,
      executionId,
      test: true,
      env,
      onResponse: (r) => (firstResponse ??= r),
      sleep,
      invoke,
      call,
      durable,
    });
    result.execution = record;
    result.status = record.status;
    result.response = await callerResponse(integration, trigger, { ...record, response: firstResponse ?? record.response }, env);
    await checkSteps(c, record, failures);
    await checkAsserts(c, integration, record, env, failures);
  }
  checkStatusAndResponse(c, result, failures);
  result.passed = failures.length === 0;
  result.durationMs = Math.round((performance.now() - started) * 10) / 10;
  return result;
}

/** The case's `config:` replaces those keys of the integration's config (as literals). */
function withConfig(integration: CompiledIntegration, overrides: Record<string, unknown> | undefined): CompiledIntegration {
  if (!overrides) return integration;
  const entries = integration.config.kind === 'object' ? integration.config.entries.filter(([k]) => !(k in overrides)) : [];
  const literal = Object.entries(overrides).map(([k, v]) => [k, { kind: 'literal', value: v }] as [string, ValueTemplate]);
  return { ...integration, config: { kind: 'object', entries: [...entries, ...literal] } };
}

export async function callerResponse(
  integration: CompiledIntegration,
  trigger: unknown,
  record: ExecutionRecord,
  env: NodeJS.ProcessEnv,
): Promise<CallerResponse | undefined> {
  const t = webhookOptionsOf(integration);
  if (!t) return undefined;
  if (t.response.mode === 'sync') return parseRendered(syncWebhookResponse(record));
  const { response } = await asyncWebhookResponse(
    integration,
    trigger,
    { id: record.id, test: true, receivedAt: record.startedAt ?? new Date().toISOString() },
    env,
  );
  return parseRendered(response);
}

/** The bytes a caller receives, read back as a value: JSON parsed, text as text, other bytes as a binary value. */
function parseRendered(r: RenderedResponse): CallerResponse {
  const contentType = r.headers['content-type'] ?? '';
  let body: unknown = r.body;
  if (Buffer.isBuffer(r.body)) body = binaryFromBytes(r.body, contentType || 'application/octet-stream');
  else if (r.body === '') body = undefined;
  else if (isJsonType(parseContentType(contentType).mediaType)) {
    try {
      body = JSON.parse(r.body);
    } catch {
      body = r.body;
    }
  }
  return { statusCode: r.status, headers: r.headers, body };
}

function checkStatusAndResponse(c: TestCase, result: CaseResult, failures: CaseFailure[]): void {
  const e = c.expect;
  const at = `${c.pointer}/expect`;
  if (e.status !== undefined && e.status !== result.status) {
    let why =
      result.execution?.error?.message ??
      (result.status === 'rejected' ? `the webhook refused the request: ${JSON.stringify(result.response?.body)}` : undefined);
    // A missing or used-up mock is already reported on its own line.
    if (why && failures.some((f) => why!.includes(f.message))) why = undefined;
    failures.unshift({
      message: `status: expected ${e.status}, got ${result.status}${why ? ` (${why})` : ''}`,
      pointer: `${at}/status`,
      path: 'status',
      expected: e.status,
      actual: result.status,
    });
  }
  if (!e.response) return;
  const actual = result.response;
  if (e.response.statusCode !== undefined && e.response.statusCode !== actual?.statusCode) {
    failures.push(
      mismatch({ path: 'response.statusCode', pointer: `${at}/response/statusCode`, expected: e.response.statusCode, actual: actual?.statusCode }),
    );
  }
  if (e.response.headers) {
    const lower = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    for (const [k, v] of Object.entries(lower)) {
      const original = Object.keys(e.response.headers).find((h) => h.toLowerCase() === k)!;
      for (const m of subsetMismatches(v, actual?.headers[k], `response.headers.${k}`, `${at}/response/headers/${original}`))
        failures.push(mismatch(m));
    }
  }
  if (e.response.hasBody)
    for (const m of subsetMismatches(e.response.body, actual?.body, 'response.body', `${at}/response/body`)) failures.push(mismatch(m));
}

async function checkSteps(c: TestCase, record: ExecutionRecord, failures: CaseFailure[]): Promise<void> {
  for (const [id, e] of Object.entries(c.expect.steps)) {
    const at = `${c.pointer}/expect/steps/${id}`;
    const step = stepRecord(record, id);
    const status = step?.status ?? 'not run';
    if (e.status !== undefined && e.status !== status) {
      const why = step?.error ? ` (${step.error.message})` : '';
      failures.push({
        message: `steps.${id}.status: expected ${e.status}, got ${status}${why}`,
        pointer: `${at}/status`,
        path: `steps.${id}.status`,
        expected: e.status,
        actual: status,
      });
    }
    if (e.attempts !== undefined && e.attempts !== (step?.attempts ?? 0)) {
      failures.push(mismatch({ path: `steps.${id}.attempts`, pointer: `${at}/attempts`, expected: e.attempts, actual: step?.attempts ?? 0 }));
    }
    if (e.has.results) for (const m of subsetMismatches(e.results, step?.results, `steps.${id}.results`, `${at}/results`)) failures.push(mismatch(m));
    if (e.has.error) {
      for (const m of subsetMismatches(e.error, step?.error, `steps.${id}.error`, `${at}/error`, { containsKeys: new Set(['message']) }))
        failures.push(mismatch(m));
    }
  }
}

/**
 * The record of step `id` wherever it stands (in a group, a case, onFailure). A step inside a
 * forEach group has one record per item: they read as one whose status is the worst of theirs,
 * results the array of their results and attempts their sum.
 */
function stepRecord(record: ExecutionRecord, id: string): StepRecord | undefined {
  const found: StepRecord[] = [];
  const walk = (steps: readonly StepRecord[] | undefined) => {
    for (const s of steps ?? []) {
      if (s.id === id) found.push(s);
      walk(s.steps);
      for (const it of s.iterations ?? []) walk(it.steps);
    }
  };
  walk(record.steps);
  walk(record.onFailure?.steps);
  if (found.length <= 1) return found[0];
  const status = (['failed', 'succeeded', 'skipped', 'running'] as const).find((st) => found.some((f) => f.status === st)) ?? 'succeeded';
  return {
    ...found[0]!,
    status,
    results: found.map((f) => f.results),
    attempts: found.reduce((n, f) => n + (f.attempts ?? 0), 0),
    error: found.find((f) => f.error)?.error,
  };
}

/** The bindings after the run, as the steps saw them: `$steps` of succeeded steps, `$errors` of continued ones. */
async function checkAsserts(
  c: TestCase,
  integration: CompiledIntegration,
  record: ExecutionRecord,
  env: NodeJS.ProcessEnv,
  failures: CaseFailure[],
): Promise<void> {
  if (c.expect.assert.length === 0) return;
  const scope: Scope = {
    ...bareScope(env),
    trigger: record.trigger,
    execution: { id: record.id, integration: record.integration, startedAt: record.startedAt, attempt: record.attempt, test: record.test },
  };
  scope.config = ((await evaluateTemplate(integration.config, scope).catch(() => ({}))) ?? {}) as Record<string, unknown>;
  // Every step by id, nested ones too (as expect.steps reads them).
  for (const step of allSteps(integration)) {
    const s = stepRecord(record, step.id);
    if (s?.status === 'succeeded') scope.steps[s.id] = s.results;
    else if (s?.status === 'failed' && s.error && step.onError === 'continue') scope.errors[s.id] = s.error;
  }
  for (const expr of c.expect.assert) {
    let value: unknown;
    try {
      value = await evaluateTemplate(expr, scope);
    } catch (err) {
      failures.push({ message: `assert {% ${expr.source} %} failed to evaluate: ${(err as Error).message}`, pointer: expr.pointer });
      continue;
    }
    if (value !== true) {
      failures.push({
        message: `assert {% ${expr.source} %} is ${JSON.stringify(value) ?? 'undefined'}, expected true`,
        pointer: expr.pointer,
        path: 'assert',
        expected: true,
        actual: value,
      });
    }
  }
}

function mismatch(m: Mismatch): CaseFailure {
  const shown = (v: unknown) => (v === undefined ? '(nothing)' : JSON.stringify(v));
  const message = m.reason ? `${m.path}: ${m.reason}` : `${m.path}: expected ${shown(m.expected)}, got ${shown(m.actual)}`;
  return { message, pointer: m.pointer, path: m.path, expected: m.expected, actual: m.actual };
}
