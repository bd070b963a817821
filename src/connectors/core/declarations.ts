/**
 * The built-in actions, declared as data (docs/authoring.md "Built-in actions"). Their behaviour is
 * in ./actions.ts; validation and docs read these declarations.
 */
import type { ActionDeclaration, InputDecl } from '../types.js';

const group = 'core';
/** A duration as written in integration files (common/duration.ts). */
const DURATION_PATTERN = '^\\s*\\d+(ms|s|m|h|d)\\s*$';
const stringMap: InputDecl = { type: 'object', schema: { additionalProperties: { type: ['string', 'number', 'boolean'] } } };

export const httpRetryInputs = {
  maxRetryCount: { type: 'integer', minimum: 0, maximum: 10, default: 0, description: 'Retries after the first attempt; 0 = none.' },
  retryDelayMs: {
    type: 'integer',
    minimum: 0,
    maximum: 600000,
    default: 0,
    description: 'Delay between retries (ignored with useExponentialBackoff).',
  },
  retryOnAllErrors: { type: 'boolean', default: false, description: 'Retry every error response, not only 5xx and network errors.' },
  useExponentialBackoff: { type: 'boolean', default: false, description: 'Double a 500 ms base delay per retry, with jitter; honours Retry-After.' },
} as const satisfies Record<string, InputDecl>;

export const coreActions: readonly ActionDeclaration[] = [
  {
    key: 'core.transform',
    readOnly: true,
    output: { description: 'The `value` input, evaluated.' },
    name: 'Transform',
    group,
    description: 'Returns its `value` input: the declarative code block. Build any JSON with an expression.',
    inputs: { value: { type: 'any', required: true, description: 'The value to return.' } },
  },
  {
    key: 'core.splitString',
    readOnly: true,
    output: { description: 'An array of strings.' },
    name: 'Split String',
    group,
    description: 'Splits a string into an array, e.g. a webhook pathFragment on "/".',
    inputs: {
      string: { type: 'string', required: true },
      separator: { type: 'string', default: ',', description: 'Separator (literal text).' },
      removeEmpty: { type: 'boolean', default: false, description: 'Drop empty strings from the result.' },
    },
  },
  {
    key: 'core.respond',
    readOnly: true,
    output: { description: 'The response it set.', keys: ['statusCode', 'contentType', 'headers', 'body'] },
    name: 'Respond',
    group,
    description: 'Sets the HTTP response of a synchronous webhook run; the run goes on.',
    inputs: {
      statusCode: { type: 'integer', minimum: 200, maximum: 599, default: 200 },
      contentType: { type: 'string', syntax: 'httpHeaderValue' },
      headers: { ...stringMap, syntax: 'httpHeaders' },
      body: { type: 'any' },
    },
  },
  {
    key: 'core.log',
    readOnly: true,
    output: { description: 'The line it wrote: level and message (a non-string message as its JSON text).', keys: ['level', 'message'] },
    name: 'Log',
    group,
    description: "Writes a line to the execution's log.",
    inputs: {
      level: { type: 'string', enum: ['debug', 'info', 'warn', 'error'], default: 'info' },
      message: { type: 'any', required: true, description: 'Text, or any value (written as JSON).' },
    },
  },
  {
    key: 'core.http',
    output: { description: 'The answer: status, headers and the body parsed as responseType says.', keys: ['status', 'headers', 'body'] },
    name: 'HTTP Request',
    group,
    description: 'Calls a third-party HTTP API (e.g. for appEvent subscriptions). Results: {status, headers, body}.',
    inputs: {
      url: { type: 'string', required: true, description: 'Absolute http(s) URL.', schema: { pattern: '^https?://' } },
      method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'], default: 'GET' },
      headers: stringMap,
      query: { type: 'keyValue', description: 'Query parameters: a map or a list of {key, value}.' },
      data: { type: 'any', description: 'Body: objects and arrays are sent as JSON, strings as text, binary values as bytes.' },
      responseType: { type: 'string', enum: ['json', 'text', 'binary'], default: 'json' },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 600000, default: 30000, description: 'Per attempt.' },
      failOnError: { type: 'boolean', default: true, description: 'Fail the step on a 4xx/5xx answer.' },
      ...httpRetryInputs,
    },
  },
  {
    key: 'core.stop',
    output: { description: 'None: the execution ends here.' },
    name: 'Stop',
    group,
    description: 'Ends the execution successfully; optional statusCode and body answer a synchronous run.',
    inputs: {
      statusCode: { type: 'integer', minimum: 200, maximum: 599 },
      body: { type: 'any' },
    },
  },
  {
    key: 'core.fail',
    output: { description: 'None: the execution fails here.' },
    name: 'Fail',
    group,
    description: 'Fails the execution with a message.',
    inputs: { message: { type: 'string', required: true } },
  },
  {
    key: 'core.call',
    output: { description: "The called integration's result (the results of its last top-level step that ran)." },
    name: 'Call Integration',
    group,
    description:
      'Runs another integration, whose trigger is `type: call`, as a child execution with `$trigger.input`; a failed child fails this step. docs/authoring.md "Control flow".',
    inputs: {
      integration: { type: 'string', required: true, description: 'Name of an integration whose trigger is `type: call`.' },
      input: { type: 'any', description: 'What the child reads as $trigger.input.' },
    },
  },
  {
    key: 'core.wait',
    output: {
      description:
        'After a time: `{wokeAt}`. After a callback: the request as a webhook sees it (`body`, `headers`, `queryParameters`, `method`, `receivedAt`).',
      keys: ['wokeAt', 'body', 'headers', 'queryParameters', 'method', 'receivedAt'],
    },
    name: 'Wait',
    group,
    description:
      'Suspends the execution — it holds no worker while it waits — for a duration (`for`), until a time (`until`), or until a request reaches a URL made by core.callback (`callback`, optional `timeout`). Exactly one of for, until, callback. docs/authoring.md "Waiting".',
    inputs: {
      for: { type: 'string', description: 'How long: 90s, 10m, 2h, 3d (at most 365d).', schema: { pattern: DURATION_PATTERN } },
      until: { type: 'date', description: 'ISO-8601 time to wake at; a time already past wakes at once.' },
      callback: { type: 'string', description: 'The url of a core.callback step: wait for a request to it.', schema: { pattern: '^https?://' } },
      timeout: {
        type: 'string',
        description: 'With callback only: after this long without a request the step fails with code `timeout`.',
        schema: { pattern: DURATION_PATTERN },
      },
    },
  },
  {
    key: 'core.callback',
    output: { description: 'The URL to hand to someone, and when it stops being accepted.', keys: ['url', 'expiresAt'] },
    name: 'Create Callback URL',
    group,
    description:
      'Returns at once an unguessable URL `{url, expiresAt}`; a later core.wait with `callback: "{% $steps.<id>.url %}"` waits for a request to it. docs/authoring.md "Waiting".',
    inputs: {
      expiresIn: {
        type: 'string',
        default: '7d',
        description: 'How long the URL is accepted: 90s, 10m, 2h, 3d (at most 365d).',
        schema: { pattern: DURATION_PATTERN },
      },
    },
  },
];
