/**
 * core.call as the engine sees it: a host (the runtime, `hcm-runner run`, `hcm-runner test`) runs
 * the child execution of an integration it has loaded; the engine links parent and child, bounds
 * the depth and turns the child's outcome into the step's.
 */
import type { ExecutionRecord } from './record.js';

/** Calls nest at most this deep (a cycle through an expression-named integration stops here). */
export const MAX_CALL_DEPTH = 8;

export interface CallRequest {
  integration: string;
  input: unknown;
  parent: { executionId: string; step: string };
  /** The child's depth: 1 for a call from an execution that was not called. */
  depth: number;
  test: boolean;
  signal: AbortSignal;
  /** Told the child's execution id as soon as it has one. */
  started(executionId: string): void;
}

/** Runs the child execution and resolves to its finished record (a refusal — unknown, not callable — is thrown). */
export type CallHost = (request: CallRequest) => Promise<ExecutionRecord>;
