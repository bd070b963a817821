/**
 * A stored execution → a test case (`hcm-runner test --record`): the trigger data turned back
 * into what a case writes (body, headers, query …), every calling step's recorded answer as its
 * mock, and what was observed — status, the caller's response, each step's status and results —
 * as the expectations. Running the case back reproduces the execution.
 */
import type { CompiledIntegration } from '../definition/types.js';
import type { ExecutionRecord } from '../engine/record.js';
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
  const steps: Obj = {};
  const forEach = new Set(integration.steps.filter((s) => s.forEach).map((s) => s.id));
  for (const s of record.steps) {
    if (callsOut(s.action) && s.status === 'succeeded') {
      mocks[s.id] =
        forEach.has(s.id) && Array.isArray(s.results) ? { calls: s.results.map((r) => ({ results: r ?? null })) } : { results: s.results ?? null };
    } else if (callsOut(s.action) && s.status === 'failed' && s.error) {
      mocks[s.id] = { error: mockErrorOf(s.error) };
    }
    const e: Obj = { status: s.status };
    if (s.status === 'succeeded' && s.results !== undefined) e.results = s.results;
    if (s.status === 'failed' && s.error?.status !== undefined) e.error = { status: s.error.status };
    steps[s.id] = e;
  }
  if (Object.keys(mocks).length) c.mocks = mocks;
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
