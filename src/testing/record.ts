/**
 * A stored execution → a test case (`hcm-runner test --record`): the trigger data turned back
 * into what a case writes (body, headers, query …), every calling step's recorded answer as its
 * mock, and what was observed — status, the caller's response, each step's status and results —
 * as the expectations. Running the case back reproduces the execution.
 */
import type { CompiledIntegration } from '../definition/types.js';
import { allSteps } from '../definition/control-flow.js';
import type { ExecutionRecord, StepRecord } from '../engine/record.js';
import { triggerTypeOf } from '../triggers/registry.js';
import { RecordError } from '../triggers/type.js';
import { callsOut } from './mocks.js';
import { callerResponse } from './run-case.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export { RecordError };

export async function caseFromExecution(
  record: ExecutionRecord,
  integration: CompiledIntegration,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Obj> {
  if (record.status !== 'succeeded' && record.status !== 'failed') {
    throw new RecordError(`execution ${record.id} is ${record.status}; record it once it has finished`);
  }
  const c: Obj = { name: `recorded from execution ${record.id}`, trigger: await triggerInput(integration, record.trigger) };
  const mocks: Obj = {};
  const callbacks: Obj = {};
  const steps: Obj = {};
  const forEach = new Set(
    allSteps(integration)
      .filter((s) => s.forEach)
      .map((s) => s.id),
  );
  // Nested steps by id, in the order they ran: a step inside a forEach group has one record per item.
  for (const [id, recs] of recordsById(record)) {
    const first = recs[0]!;
    if (callsOut(first.action)) {
      const answers: Obj[] = [];
      for (const s of recs) {
        if (s.status === 'succeeded') {
          if (forEach.has(id) && Array.isArray(s.results)) for (const r of s.results) answers.push({ results: r ?? null });
          else answers.push({ results: s.results ?? null });
        } else if (s.status === 'failed' && s.error) answers.push({ error: mockErrorOf(s.error) });
      }
      if (answers.length === 1 && !forEach.has(id)) mocks[id] = answers[0];
      else if (answers.length) mocks[id] = { calls: answers };
    }
    // A callback wait's request comes back from the case's callbacks; the time it came, a callback
    // URL's token and a wait's wokeAt differ on every run, so only their status is expected.
    const durable = first.action === 'core.wait' || first.action === 'core.callback';
    const request = recs.find((r) => r.action === 'core.wait' && r.status === 'succeeded' && isObj(r.results) && 'receivedAt' in r.results)
      ?.results as Obj | undefined;
    if (request) {
      const { receivedAt: _at, ...rest } = request;
      callbacks[id] = rest;
    }
    if (recs.length === 1) {
      const e: Obj = { status: first.status };
      if (first.status === 'succeeded' && first.results !== undefined && !durable) e.results = first.results;
      if (first.status === 'failed' && first.error?.status !== undefined) e.error = { status: first.error.status };
      steps[id] = e;
    } else {
      // As hcm-runner test reads several records of one step: the worst status, the results in order.
      const status = recs.some((r) => r.status === 'failed') ? 'failed' : recs.some((r) => r.status === 'succeeded') ? 'succeeded' : 'skipped';
      steps[id] = status === 'succeeded' && !durable ? { status, results: recs.map((r) => r.results ?? null) } : { status };
    }
  }
  if (Object.keys(mocks).length) c.mocks = mocks;
  if (Object.keys(callbacks).length) c.callbacks = callbacks;
  const expect: Obj = { status: record.status };
  const response = await callerResponse(integration, record.trigger, record, env);
  if (response) {
    const r: Obj = { statusCode: response.statusCode };
    // The execution id differs on every run: keep the rest of the body.
    if (isObj(response.body)) {
      const { executionId: _id, ...rest } = response.body;
      void _id;
      if (Object.keys(rest).length) r.body = rest;
    } else if (response.body !== undefined) r.body = response.body;
    expect.response = r;
  }
  if (Object.keys(steps).length) expect.steps = steps;
  c.expect = expect;
  return c;
}

/** What a mock must answer for the connector to raise this error again. */
function mockErrorOf(error: NonNullable<ExecutionRecord['steps'][number]['error']>): Obj {
  const out: Obj = {};
  if (error.status !== undefined) out.statusCode = error.status;
  const remote = isObj(error.remote) ? error.remote : undefined;
  if (remote) {
    // The service's error body as it was: the connector words its message from it again.
    for (const [k, v] of Object.entries(remote)) if (k === 'error' ? typeof v === 'string' : v !== undefined) out[k === 'error' ? 'message' : k] = v;
    return out;
  }
  const own = error.message.replace(/^integration [^,]+, step [^ ]+ \([^)]+\): /, '');
  // "hcm.x: HCM answered 503 Service Unavailable: detail" → detail; a failure without an answer keeps its text.
  const detail = error.status !== undefined ? /answered \d+[^:]*: (.*)$/s.exec(own)?.[1] : own;
  if (detail) out.message = detail;
  return out;
}

/** The case's `trigger:`, as the integration's trigger type reads its recorded `$trigger` back. */
async function triggerInput(integration: CompiledIntegration, trigger: unknown): Promise<Obj> {
  const testing = await triggerTypeOf(integration.trigger).testing();
  return testing.recordedInput(integration.trigger, isObj(trigger) ? trigger : {});
}

/** Step records by id wherever they stand (groups, iterations, cases, onFailure), each id's in the order they ran. */
function recordsById(record: ExecutionRecord): Map<string, StepRecord[]> {
  const out = new Map<string, StepRecord[]>();
  const walk = (steps: readonly StepRecord[] | undefined) => {
    for (const s of steps ?? []) {
      if (!s.steps && !s.iterations) {
        const list = out.get(s.id);
        if (list) list.push(s);
        else out.set(s.id, [s]);
      }
      walk(s.steps);
      for (const it of s.iterations ?? []) walk(it.steps);
    }
  };
  walk(record.steps);
  walk(record.onFailure?.steps);
  return out;
}
