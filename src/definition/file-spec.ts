/**
 * The spec of the file format's own keys — the document, a step, a step's retry — and the shared
 * value forms every spec refers to (`#/$defs/expression`, `stringValue` …). Triggers and
 * connection types declare their keys in their own specs (definition/spec.ts).
 */
import type { JsonSchema, Options } from './spec.js';

/** Shared value forms, written as `$defs` of the schema and referenced by the specs. */
export const valueDefs: Record<string, JsonSchema> = {
  expression: { description: 'A JSONata expression: a string that is exactly {% … %}.', type: 'string', pattern: '^\\s*\\{%[\\s\\S]*%\\}\\s*$' },
  env: {
    description: 'A value read from the environment when the integration runs.',
    type: 'object',
    required: ['env'],
    additionalProperties: false,
    properties: { env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, default: {} },
  },
  file: {
    description:
      "A value read from a file when the integration runs: its content without the trailing newline (a mounted secret). PATH is relative to the integration file's folder, or absolute.",
    type: 'object',
    required: ['file'],
    additionalProperties: false,
    properties: { file: { type: 'string', minLength: 1 }, default: {} },
  },
  anyValue: { description: 'Any value: literals, {env: NAME, default}, {file: PATH, default}, expressions, nested objects and arrays.' },
  stringValue: {
    'x-expect': 'a string, {env: NAME, default: …} or {file: PATH, default: …}',
    anyOf: [{ type: 'string' }, { $ref: '#/$defs/env' }, { $ref: '#/$defs/file' }],
  },
  booleanOrExpression: { 'x-expect': 'true, false or an expression {% … %}', anyOf: [{ type: 'boolean' }, { $ref: '#/$defs/expression' }] },
  integerValue: {
    'x-expect': 'an integer, an expression {% … %}, {env: NAME} or {file: PATH}',
    anyOf: [{ type: 'integer' }, { $ref: '#/$defs/expression' }, { $ref: '#/$defs/env' }, { $ref: '#/$defs/file' }],
  },
  duration: { description: 'A duration such as 30s, 15m, 2h or 1d.', type: 'string', pattern: '^[0-9]+(ms|s|m|h|d)$' },
};

export const documentOptions: Options = {
  $schema: { schema: { type: 'string' } },
  name: {
    schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 100 },
    description: 'Unique name of the integration: lower-case letters, digits and dashes.',
  },
  description: { schema: { type: 'string' } },
  enabled: { schema: { type: 'boolean' }, default: true, description: 'false = loaded and validated, never triggered (the test URL still answers).' },
  config: {
    schema: { type: 'object', additionalProperties: { $ref: '#/$defs/anyValue' } },
    description:
      'Values for expressions, read as $config.<key>. Each may be a literal, {env: NAME, default}, {file: PATH, default} or an expression.',
  },
  connections: {
    schema: { type: 'object', propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' }, additionalProperties: { $ref: '#/$defs/connection' } },
    description: 'Named connections; a step selects one with `connection: <name>`.',
  },
  trigger: { schema: { $ref: '#/$defs/trigger' } },
  correlationKey: {
    schema: { $ref: '#/$defs/expression' },
    description:
      'A business key recorded on each execution when it is created (e.g. {% $trigger.body.data.workerId %}), to find its executions by: API ?correlation=, CLI --correlation, console search. Reads $trigger and $execution; a string of at most 256 characters, else the execution is recorded without one (logged).',
  },
  concurrency: {
    schema: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        key: {
          $ref: '#/$defs/expression',
          description:
            'The key executions are lined up by (e.g. {% $trigger.body.data.workerId %}), evaluated when the execution is created. Reads $trigger and $execution. No value (or not a string): the execution runs outside any line (logged).',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          default: 1,
          description: 'Executions with the same key running or waiting at once, cluster-wide (1–1000; 1 = one after the other).',
        },
      },
    },
    description:
      'Per-key concurrency: at most `limit` executions with the same `key` run (or wait) at once, cluster-wide, and they start in the order they were accepted. Without `key`, `limit` counts every execution of the integration. See docs/authoring.md "Per-key concurrency".',
  },
  steps: {
    schema: { type: 'array', minItems: 1, items: { $ref: '#/$defs/step' } },
    description: 'Steps run in order; each calls one action, or is a group (`steps`) or a switch.',
  },
  onFailure: {
    schema: { type: 'array', minItems: 1, items: { $ref: '#/$defs/step' } },
    description:
      'Steps run once when an execution has ended failed for good; they read $failure {executionId, integration, attempt, test, step, error}.',
  },
};

export const documentRequired = ['name', 'trigger', 'steps'] as const;

export const retryOptions: Options = {
  maxAttempts: { schema: { type: 'integer', minimum: 1, maximum: 20 }, default: 3, description: 'Attempts in all, the first included.' },
  delayMs: { schema: { type: 'integer', minimum: 0, maximum: 3_600_000 }, default: 1_000, description: 'Wait before the next attempt.' },
  backoff: { schema: { enum: ['fixed', 'exponential'] }, default: 'fixed', description: 'exponential doubles the delay each attempt, with jitter.' },
  maxDelayMs: { schema: { type: 'integer', minimum: 0, maximum: 3_600_000 }, default: 60_000, description: 'Upper bound of the exponential delay.' },
};

export const stepOptions: Options = {
  id: {
    schema: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    description: 'Unique step id; later steps read its results as $steps.<id>.',
  },
  description: { schema: { type: 'string' } },
  action: {
    schema: { type: 'string', pattern: '^[a-z][A-Za-z0-9]*\\.[A-Za-z][A-Za-z0-9]*$' },
    description: 'The action: core.<name> (built-in) or hcm.<key> (HCM connector). A step has `action`, `steps` or `switch`.',
  },
  steps: {
    schema: { type: 'array', minItems: 1, items: { $ref: '#/$defs/step' } },
    description:
      'A group: these steps run instead of an action. Results: an object keyed by the ids of its steps that ran (with forEach, one per item).',
  },
  switch: {
    schema: { $ref: '#/$defs/switch' },
    description: "A switch: the first case whose `when` is true runs (else `default`); results are that block's.",
  },
  connection: { schema: { type: 'string' }, description: 'Name of a connection under `connections`.' },
  inputs: {
    schema: { type: 'object', additionalProperties: { $ref: '#/$defs/anyValue' } },
    description: "The action's inputs; each value may be a literal, {env: NAME}, {file: PATH} or an expression.",
  },
  if: { schema: { $ref: '#/$defs/booleanOrExpression' }, description: 'Run the step only when true.' },
  forEach: {
    schema: { 'x-expect': 'an expression {% … %} or an array', anyOf: [{ $ref: '#/$defs/expression' }, { type: 'array' }] },
    description: 'Run the action (or the group) once per item ($item, $index); results are the array of results, in item order.',
  },
  concurrency: {
    schema: { type: 'integer', minimum: 1, maximum: 50 },
    default: 1,
    description: 'With forEach: how many items run at once (1–50; 1 = one after the other). Results stay in item order.',
  },
  retry: { schema: { $ref: '#/$defs/retry' }, description: 'Action steps only.' },
  timeoutMs: { schema: { type: 'integer', minimum: 1, maximum: 86_400_000 }, description: 'Per attempt (action steps only).' },
  onError: {
    schema: { enum: ['fail', 'continue'] },
    default: 'fail',
    description: 'fail ends the execution; continue records the error as $errors.<id> and goes on.',
  },
};

/** `action`, `steps` or `switch` is required too: compile says so (a schema `oneOf` would word it badly). */
export const stepRequired = ['id'] as const;

export const switchOptions: Options = {
  cases: {
    schema: { type: 'array', items: { $ref: '#/$defs/case' } },
    description: 'Tried in order: the first whose `when` is true runs.',
  },
  default: {
    schema: { type: 'array', minItems: 1, items: { $ref: '#/$defs/step' } },
    description: 'Runs when no case matches; without it the switch is skipped.',
  },
};

export const switchRequired = ['cases'] as const;

export const caseOptions: Options = {
  name: {
    schema: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' },
    description: "The case's name, recorded as the switch step's `case`.",
  },
  when: { schema: { $ref: '#/$defs/booleanOrExpression' }, description: 'Runs this case when true (read before the switch runs).' },
  steps: { schema: { type: 'array', minItems: 1, items: { $ref: '#/$defs/step' } }, description: 'The steps of the case.' },
};

export const caseRequired = ['name', 'when', 'steps'] as const;
