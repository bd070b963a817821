/** A loaded integration test file (`*.test.yaml`, docs/testing.md), ready to run. */
import type { CompiledIntegration, ValueTemplate } from '../definition/types.js';
import type { YamlSource } from '../definition/yaml-source.js';
import type { TestTriggerInput } from '../triggers/type.js';

export interface MockError {
  statusCode?: number;
  message?: string;
  [key: string]: unknown;
}

/** A case's `callbacks.<stepId>`: the request a callback wait receives. */
export interface CaseCallback {
  body?: unknown;
  headers?: Record<string, string>;
  queryParameters?: Record<string, string | string[]>;
  method?: string;
  pointer: string;
}

export type MockAnswer = { results: unknown } | { error: MockError };

/** `results`/`error` answer every call; `calls` one call each, in order. */
export type Mock = { kind: 'every'; answer: MockAnswer; pointer: string } | { kind: 'calls'; answers: MockAnswer[]; pointer: string };

export interface StepExpectation {
  status?: 'succeeded' | 'failed' | 'skipped' | 'not run';
  results?: unknown;
  error?: Record<string, unknown>;
  attempts?: number;
  /** Which of results/error were written (a `results: null` expectation is still one). */
  has: { results: boolean; error: boolean };
}

export interface CaseExpectation {
  status?: 'succeeded' | 'failed' | 'rejected';
  response?: { statusCode?: number; headers?: Record<string, string>; body?: unknown; hasBody: boolean };
  steps: Record<string, StepExpectation>;
  assert: Array<Extract<ValueTemplate, { kind: 'expr' }>>;
}

/** A case's `trigger:` (each trigger type reads its own keys: src/triggers/type.ts). */
export type TriggerInput = TestTriggerInput;

export interface TestCase {
  name: string;
  /** JSON pointer of the case, `/cases/<n>`. */
  pointer: string;
  trigger: TriggerInput;
  config?: Record<string, unknown>;
  mocks: Record<string, Mock>;
  /** Step id of a core.wait on a callback → the request that reaches it (`callbacks:`). */
  callbacks: Record<string, CaseCallback>;
  expect: CaseExpectation;
}

export interface TestSuite {
  /** The test file, as named in output. */
  file: string;
  src: YamlSource;
  integration: CompiledIntegration;
  cases: TestCase[];
  /** The test file's folder: where core.call finds the integrations it calls. */
  dir?: string;
}
