/**
 * The built-in actions, declared as data (docs/authoring.md "Built-in actions"). Their behaviour is
 * in ./actions.ts; validation and docs read these declarations.
 */
import type { ActionDeclaration, InputDecl } from '../types.js';

const group = 'core';
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
    output: { description: 'The `value` input, evaluated.' },
    name: 'Transform',
    group,
    description: 'Returns its `value` input: the declarative code block. Build any JSON with an expression.',
    inputs: { value: { type: 'any', required: true, description: 'The value to return.' } },
  },
  {
    key: 'core.splitString',
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
];
