/**
 * Durable execution's contract between the engine and its host (docs/promises.md "Resume, not
 * restart", docs/authoring.md "Waiting"). The engine decides *where* an execution stands — which
 * steps are finished, where it waits — and the host decides how that is kept: the runtime in its
 * store (checkpoints, `waiting` rows, callback tokens), `hcm-runner run` in memory,
 * `hcm-runner test` from the test case.
 */
import type { StepRecord, WaitingFor } from './record.js';

/** A callback request as a webhook would see it: the results of a `core.wait` on a callback. */
export interface CallbackRequest {
  method: string;
  headers: Record<string, string>;
  queryParameters: Record<string, string | string[]>;
  body: unknown;
  receivedAt: string;
}

/** What the host answers when the engine asks for a callback's request. */
export type CallbackLookup =
  | { state: 'received'; request: CallbackRequest }
  | { state: 'pending'; expiresAt: string }
  /** Unknown, or it belongs to another execution. */
  | { state: 'unknown' };

/** The host side of `core.wait` and `core.callback` (RunOptions.durable). */
export interface DurableHost {
  /**
   * core.callback: makes a callback token for this execution's step and returns its public URL.
   * Resolves once the token is durably kept (a request to the URL from now on is accepted).
   */
  createCallback(req: { executionId: string; integration: string; step: string; expiresAt: string; test: boolean }): Promise<{ url: string }>;
  /** The token in a callback URL this host made, else undefined (the wait step fails naming the URL). */
  tokenOf(url: string): string | undefined;
  /**
   * core.wait on a callback: whether its request came (requests that came first are kept for the
   * wait). `step` is the waiting core.wait step's id (`hcm-runner test` keys `callbacks:` by it).
   */
  lookupCallback(token: string, executionId: string, step: string): Promise<CallbackLookup>;
  /**
   * Called when an execution is about to start waiting: rejects (with the message the wait step
   * fails with) when its integration has as many waiting executions as it may have.
   */
  admitWait(integration: string, executionId: string): Promise<void>;
  /**
   * How a wait is carried out. `suspend` (the runtime): the run ends with status `waiting` and the
   * host resumes it later. `now` (`hcm-runner test`, `hcm-runner run`): the wait is reported and
   * finishes at once, as if its time had come; a callback wait then takes its request from
   * `lookupCallback`.
   */
  readonly mode: 'suspend' | 'now';
  /** `mode: now`: told about each wait as it finishes at once (the test report lists them). */
  waited?(wait: WaitingFor & { wakeAt?: string; for?: string; until?: string }): void;
}

/**
 * Thrown through the steps when a `core.wait` suspends the execution (like core.stop's
 * StopSignal, it is not a failure): the run ends `waiting` with `wakeAt`.
 */
export class WaitSignal extends Error {
  constructor(
    readonly waitingFor: WaitingFor,
    /** ISO time the execution wakes at; undefined: only its callback wakes it. */
    readonly wakeAt: string | undefined,
  ) {
    super(`waiting at step ${waitingFor.step}`);
  }
}

/**
 * Thrown at a step boundary after `POST …/cancel` reached a running execution (the running step's
 * request is aborted): the run ends `cancelled`.
 */
export class CancelSignal extends Error {
  constructor() {
    super('execution cancelled');
  }
}

/** The earlier records a run resumes from: steps finished there are not run again. */
export interface ResumeFrom {
  steps: StepRecord[];
}
