/**
 * The compiled form of an integration file. The definition layer produces it (load, validate,
 * compile) and knows nothing of how it runs; the engine and triggers consume it.
 */
import type { Expression } from 'jsonata';
import type { ActionDeclaration } from '../connectors/types.js';

export interface SourcePosition {
  line: number;
  column: number;
}

/** A value as written in YAML, ready to be evaluated at run time. */
export type ValueTemplate =
  | { kind: 'literal'; value: unknown }
  | { kind: 'expr'; source: string; expression: Expression; pointer: string; position: SourcePosition }
  | { kind: 'env'; name: string; default?: unknown; hasDefault: boolean; pointer: string }
  /** `{file: PATH}`: `path` resolved against the integration file's folder, `written` as in the file (for messages). */
  | { kind: 'file'; path: string; written: string; default?: unknown; hasDefault: boolean; pointer: string }
  | { kind: 'object'; entries: Array<[string, ValueTemplate]> }
  | { kind: 'array'; items: ValueTemplate[] };

export interface RetryPolicy {
  maxAttempts: number;
  delayMs: number;
  backoff: 'fixed' | 'exponential';
  maxDelayMs: number;
}

export interface CompiledStep {
  id: string;
  /** The action; a group or a switch has a stand-in (`group`, `switch`: definition/control-flow.ts). */
  action: ActionDeclaration;
  connection?: string;
  inputs: ValueTemplate;
  if?: ValueTemplate;
  forEach?: ValueTemplate;
  retry?: RetryPolicy;
  timeoutMs?: number;
  onError: 'fail' | 'continue';
  pointer: string;
  /** With forEach: items run at once (absent = 1, one after the other). */
  concurrency?: number;
  /** A group: these steps run instead of an action. */
  steps?: CompiledStep[];
  /** A switch: the first case whose `when` is true runs, else `default` (else the step is skipped). */
  switch?: CompiledSwitch;
}

export interface CompiledSwitch {
  cases: CompiledCase[];
  default?: CompiledStep[];
}

export interface CompiledCase {
  name: string;
  when: ValueTemplate;
  steps: CompiledStep[];
}

export interface HmacOptions {
  secret: ValueTemplate;
  header: string;
  algorithm: 'sha1' | 'sha256' | 'sha384' | 'sha512';
  encoding: 'hex' | 'base64';
  prefix: string;
}

/** `verify:` — a sender's own signature scheme (src/triggers/webhook/verify/). */
export interface VerifyOptions {
  scheme: 'standard-webhooks' | 'stripe' | 'github' | 'slack';
  secret: ValueTemplate;
  /** Timestamped schemes: how far a signature's time may be from the receiver's clock. */
  toleranceMs: number;
}

/** Custom async response: each field literal or an expression, or one expression for all. */
export type WebhookResponse =
  | { mode: 'async'; custom?: { statusCode?: ValueTemplate; contentType?: ValueTemplate; headers?: ValueTemplate; body?: ValueTemplate } }
  | { mode: 'async'; computed: ValueTemplate }
  | { mode: 'sync'; timeoutMs: number };

/** `idempotencyKey` + `dedupeWindow`: duplicates of a request within the window create no execution. */
export interface IdempotencyOptions {
  key: ValueTemplate;
  windowMs: number;
}

export interface WebhookOptions {
  methods: string[];
  maxBodyBytes: number;
  hmac?: HmacOptions;
  verify?: VerifyOptions;
  response: WebhookResponse;
  idempotency?: IdempotencyOptions;
}

export interface ScheduleTiming {
  every?: number;
  cron?: string;
  at?: string;
  timezone: string;
  /** A cron pattern equivalent to `cron`/`at` (croner syntax), for `every` undefined. */
  pattern?: string;
}

export type CompiledTrigger =
  | ({ type: 'webhook' } & WebhookOptions)
  | ({ type: 'schedule'; overlap: 'skip' | 'queue' | 'allow'; catchUp: 'none' | 'latest' } & ScheduleTiming)
  | ({
      type: 'poll';
      step: CompiledStep;
      items: ValueTemplate;
      key: ValueTemplate;
      mode: 'batch' | 'each';
      maxSeen: number;
    } & ScheduleTiming)
  | ({ type: 'appEvent'; subscribe: CompiledStep[]; unsubscribe: CompiledStep[] } & WebhookOptions)
  | { type: 'call'; description?: string };

export interface ConnectionDefinition {
  type: string;
  config: ValueTemplate;
}

export interface CompiledIntegration {
  name: string;
  description?: string;
  enabled: boolean;
  /** Path of the file it came from. */
  file: string;
  /** sha256 of the file's text: tells a changed definition from an unchanged one. */
  hash: string;
  /**
   * The git commit checked out in the integrations folder when this version was loaded (set by
   * the runtime's registry, runtime/git-commit.ts); undefined outside a git checkout.
   */
  commit?: string;
  config: ValueTemplate;
  connections: Record<string, ConnectionDefinition>;
  trigger: CompiledTrigger;
  /** `correlationKey:`, evaluated when an execution is created (engine/correlation-key.ts). */
  correlationKey?: ValueTemplate;
  /**
   * `concurrency:` — executions with the same key (evaluated when an execution is created:
   * engine/concurrency-key.ts) run at most `limit` at once, cluster-wide, in acceptance order.
   * Without `key` the whole integration is one line.
   */
  concurrency?: { key?: ValueTemplate; limit: number };
  steps: CompiledStep[];
  /** Top-level `onFailure`: run once after an execution has ended failed for good. */
  onFailure?: CompiledStep[];
  /** Its core.call steps that name the integration literally (checked across the folder: definition/calls.ts). */
  calls?: CallSite[];
}

export interface CallSite {
  /** The called integration's name. */
  integration: string;
  step: string;
  /** JSON pointer and position of the `integration` input. */
  pointer: string;
  position: SourcePosition;
}

/** One problem found in a file, with the position of the offending node. */
export interface Problem {
  file: string;
  line: number;
  column: number;
  message: string;
  /** JSON pointer of the offending node ('' for the whole document). */
  path: string;
}
