/**
 * A trigger type: everything the rest of the runner needs to know about one kind of trigger,
 * implemented once in its folder (`src/triggers/<type>/type.ts`) and listed once in
 * `src/triggers/registry.ts`. Nothing outside the folder asks "is this a webhook?": it loops over
 * the registered types or asks the integration's own type.
 *
 * The object itself is definition-time: its spec, facts and small pure functions, loaded by
 * `hcm-runner validate`. What only serving or testing needs — timers, the engine, the store,
 * request parsing — sits behind `start` and `testing`, which import it on first use, so `validate`
 * never loads it (test/architecture/validate-light.test.ts checks this).
 */
import type { TriggerSpec } from '../definition/spec.js';
import type { CompiledIntegration, CompiledStep, CompiledTrigger, ValueTemplate, WebhookOptions } from '../definition/types.js';
import type { TriggerHost } from './host.js';

export interface TriggerType<T extends CompiledTrigger = CompiledTrigger> {
  /** Its keys, defaults, docs and compile step (the definition layer, the schema, the reference docs). */
  spec: TriggerSpec<T>;
  /**
   * Present when requests to `/webhooks/<token>` start it: it then has a token, live and test
   * URLs, listening mode and captures, and answers its caller (`response`). Gives its webhook keys.
   */
  webhook?: { options(trigger: T): WebhookOptions };
  /** How many executions of one integration may run at once (undefined: the dispatcher's limit). */
  concurrency?(trigger: T): number | undefined;
  /** What it evaluates besides the integration's steps (`serve` reports an unset `env` in them). */
  evaluates(trigger: T): { values: ValueTemplate[]; steps: CompiledStep[] };
  /** `$trigger` for a run that did not come through the trigger: `hcm-runner run`, "run now" with a payload. */
  manualTrigger(trigger: T, payload: unknown, ctx: ManualRunContext): unknown;
  /** The settings a person sees in the API (`trigger` of GET /api/integrations/{name}, after `type`) and console: no expressions, no secrets. */
  summary(trigger: T): Record<string, unknown>;
  console: {
    /** What the Run payload becomes. */
    runHelp: string;
    /** Labels of the summary's keys. */
    labels: Record<string, string>;
  };
  /** Test cases (`hcm-runner test`): the keys a case's `trigger:` may hold (checked by `validate`). */
  caseKeys(trigger: T): { keys: readonly string[]; what: string; problems?(input: TestTriggerInput): CaseKeyProblem[] };
  /** How a test case becomes `$trigger` and a recorded execution a test case, loaded on first use. */
  testing(): Promise<TriggerTesting<T>>;
  /** Its run-time part for `serve`, loaded on first use; absent when nothing runs between requests (webhook). */
  start?(): Promise<StartTrigger>;
}

export interface ManualRunContext {
  /** ISO time of the run. */
  now: string;
  executionId?: string;
  webhookUrls?: { live: string; test: string };
}

/** A test case's `trigger:` (schemas/integration-test.schema.json); each type reads its own keys. */
export interface TestTriggerInput {
  body?: unknown;
  headers?: Record<string, string | number | boolean>;
  query?: Record<string, unknown>;
  pathFragment?: string;
  method?: string;
  scheduledAt?: string;
  firedAt?: string;
  items?: unknown[];
  item?: unknown;
  /** A call trigger's `$trigger.input`. */
  input?: unknown;
}

export interface CaseKeyProblem {
  key: string;
  message: string;
}

export interface TriggerTesting<T extends CompiledTrigger = CompiledTrigger> {
  /** `$trigger` for a case, built the way the trigger builds it (throws HttpError when the trigger would refuse the input). */
  caseTrigger(integration: CompiledIntegration, trigger: T, input: TestTriggerInput, ctx: CaseContext): unknown;
  /** A recorded `$trigger` back as a case's `trigger:` (`test --record`); throws an Error saying what to write by hand. */
  recordedInput(trigger: T, data: Record<string, unknown>): Record<string, unknown>;
}

export interface CaseContext {
  executionId: string;
  now: Date;
  /** Placeholder URLs: a test run has no server and no tokens. */
  webhookUrls: { live: string; test: string };
}

/** Settings of the run-time parts (from `serve`'s options). */
export interface TriggerSettings {
  /** Wait before a failed appEvent subscribe is tried again (default 60 s; 0 = never). */
  subscribeRetryMs?: number;
}

export type StartTrigger = (host: TriggerHost, settings: TriggerSettings) => RunningTrigger;

/** One trigger type at run time, for every integration of that type (src/runtime/trigger-lifecycle.ts drives it). */
export interface RunningTrigger {
  /**
   * Brings one integration in line with its loaded version: `current` is undefined when it was
   * removed or is now of another type. Called at start, after each registry change of that name
   * and when its listening mode changes; a version that did not change must keep running.
   */
  sync(name: string, current: CompiledIntegration | undefined): Promise<void> | void;
  /** Extra fields of GET /api/integrations/{name} for an integration of this type (e.g. `nextRunAt`). */
  detail?(name: string): Record<string, unknown> | undefined;
  /** `$state` of an execution of this type. */
  stateFor?(name: string): Promise<Record<string, unknown> | undefined>;
  /**
   * For types that run on their own clock (schedule, poll), which therefore have trigger health
   * (src/runtime/trigger-health.ts): the integration's ticks, undefined while no loop runs for it.
   */
  ticks?(name: string): TickSchedule | undefined;
  /** The integrations it runs something for (looked at again on a full reload, whatever the registry says). */
  names?(): Iterable<string>;
  /** The running instance of an integration (tests). */
  instance?(name: string): unknown;
  /** Whether work is pending (a sync in progress); `idle()` waits for it. */
  readonly busy: boolean;
  idle(): Promise<void>;
  /** Stops everything, waiting up to `graceMs` for work in progress. A shutdown is not a disable. */
  stop(graceMs: number): Promise<void>;
}

/** When a trigger that runs on its own clock is due to run (trigger health). */
export interface TickSchedule {
  /** ISO time of the next tick. */
  nextRunAt?: string;
  /**
   * When the `runs`-th tick after `after` is due — counted from when the loop started instead,
   * when that is later or `after` is undefined — and the period before that tick; undefined when
   * the timing never fires that often again (a one-off `at`).
   */
  dueBy(after: Date | undefined, runs: number): { at: Date; periodMs: number } | undefined;
}

/** A recorded `$trigger` that a test case cannot express (`test --record`); the message says what to write by hand. */
export class RecordError extends Error {}
