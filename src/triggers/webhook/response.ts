/**
 * Webhook responses: the async custom response (static fields, per-field expressions, or one
 * computed expression) and rendering any response spec (custom, core.respond, core.stop) to
 * status + headers + bytes.
 */
import { isBinaryValue } from '../../common/binary.js';
import type { HttpResponseSpec } from '../../connectors/types.js';
import type { CompiledIntegration, ValueTemplate } from '../../definition/types.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { evaluateTemplate, type Scope } from '../../engine/evaluate.js';
import { webhookOptionsOf } from '../registry.js';
import { attachmentDisposition, sendableContentType, sendableHeaders, statusHasNoBody, UnsendableResponseError } from './response-security.js';

export interface RenderedResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
  /** Framing headers the integration set and that were dropped (logged once per integration). */
  dropped?: string[];
}

/**
 * Evaluates the custom async response for one request. Returns undefined for the default.
 * Expressions see `$trigger` (and `$config`, `$execution`), like steps do.
 */
export async function evaluateAsyncResponse(
  integration: CompiledIntegration,
  trigger: unknown,
  execution: { id: string; test: boolean; receivedAt: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<HttpResponseSpec | undefined> {
  const response = webhookOptionsOf(integration)?.response;
  if (response?.mode !== 'async') return undefined;
  if (!('computed' in response) && !response.custom) return undefined;
  const scope: Scope = {
    trigger,
    steps: {},
    errors: {},
    config: {},
    execution: { id: execution.id, integration: integration.name, startedAt: execution.receivedAt, attempt: 1, test: execution.test },
    state: {},
    env,
  };
  const templates = 'computed' in response ? [response.computed] : Object.values(response.custom!);
  if (templates.some((t) => t && needsConfig(t)))
    scope.config = ((await evaluateTemplate(integration.config, scope)) ?? {}) as Record<string, unknown>;

  if ('computed' in response) return toSpec(await evaluateTemplate(response.computed, scope), 'the computed response');
  const c = response.custom!;
  const spec: HttpResponseSpec = { statusCode: 200 };
  if (c.statusCode) spec.statusCode = toStatus(await evaluateTemplate(c.statusCode, scope), 'response.statusCode');
  if (c.contentType) {
    const ct = await evaluateTemplate(c.contentType, scope);
    if (ct !== undefined && ct !== null) spec.contentType = String(ct);
  }
  if (c.headers) spec.headers = toHeaders(await evaluateTemplate(c.headers, scope));
  if (c.body) spec.body = await evaluateTemplate(c.body, scope);
  return spec;
}

function needsConfig(t: ValueTemplate): boolean {
  switch (t.kind) {
    case 'expr':
      return t.source.includes('$config');
    case 'object':
      return t.entries.some(([, v]) => needsConfig(v));
    case 'array':
      return t.items.some(needsConfig);
    default:
      return false;
  }
}

/**
 * The computed form returns `{statusCode, contentType?, headers?, body?}`; the "code block
 * trigger" returns the payload together with a response object, so `{response: {...}}` works too.
 */
function toSpec(value: unknown, what: string): HttpResponseSpec {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${what} must be an object {statusCode, contentType?, headers?, body?}, got ${JSON.stringify(value) ?? 'undefined'}`);
  }
  let v = value as Record<string, unknown>;
  if (v.statusCode === undefined && v.response && typeof v.response === 'object') v = v.response as Record<string, unknown>;
  const spec: HttpResponseSpec = { statusCode: v.statusCode === undefined ? 200 : toStatus(v.statusCode, `${what}.statusCode`) };
  if (v.contentType !== undefined && v.contentType !== null) spec.contentType = String(v.contentType);
  if (v.headers !== undefined) spec.headers = toHeaders(v.headers);
  if (v.body !== undefined) spec.body = v.body;
  return spec;
}

function toStatus(v: unknown, what: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 200 || n > 599) throw new Error(`${what} must be an HTTP status code 200–599, got ${JSON.stringify(v)}`);
  return n;
}

function toHeaders(v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`response headers must be an object of name: value, got ${JSON.stringify(v)}`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (val !== undefined && val !== null) out[k.toLowerCase()] = String(val);
  return out;
}

/**
 * Spec → wire. Strings go out as text (text/plain unless a content type is given), binary values
 * as their bytes (a download: src/triggers/webhook/response-security.ts), everything else as
 * JSON; 204 and 304 without a body. The integration's framing headers are dropped (`dropped`
 * names them); a status, header or content type that cannot be sent throws
 * `UnsendableResponseError`.
 */
export function renderResponse(spec: HttpResponseSpec, extraHeaders: Record<string, string> = {}): RenderedResponse {
  const status = spec.statusCode;
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new UnsendableResponseError(`the response status must be an HTTP status code 200–599, got ${JSON.stringify(status)}`);
  }
  const { headers, dropped } = sendableHeaders(spec.headers);
  Object.assign(headers, extraHeaders);
  let body: string | Buffer = '';
  let contentType = spec.contentType ?? headers['content-type'];
  const b = spec.body;
  if (statusHasNoBody(status) || b === undefined || b === null) {
    body = '';
  } else if (isBinaryValue(b)) {
    body = Buffer.from(b.base64, 'base64');
    contentType ??= b.contentType;
    headers['content-disposition'] = attachmentDisposition(headers['content-disposition']);
  } else if (typeof b === 'string') {
    body = b;
    contentType ??= 'text/plain; charset=utf-8';
  } else {
    body = JSON.stringify(b);
    contentType ??= 'application/json';
  }
  if (contentType) headers['content-type'] = sendableContentType(contentType);
  return dropped.length > 0 ? { status, headers, body, dropped } : { status, headers, body };
}

/**
 * The answer of a response a run set (core.respond, core.stop), or — when it cannot be sent —
 * 500 `{error, executionId}` saying why (the run's own record says what it did).
 */
export function runResponse(
  spec: HttpResponseSpec,
  executionId: string,
  integration: string,
  onUnsendable?: (error: string) => void,
): RenderedResponse {
  try {
    return renderResponse(spec, { 'x-execution-id': executionId });
  } catch (err) {
    if (!(err instanceof UnsendableResponseError)) throw err;
    const error = `integration ${integration}: the response the run set cannot be sent: ${err.message}`;
    onUnsendable?.(error);
    return executionJson(500, executionId, { error, executionId });
  }
}

/**
 * What a synchronous webhook caller gets once the run is over — or has started waiting: the
 * response a core.respond or core.stop step set, else `waitingResponse` / `cancelledResponse`,
 * else 500 `{error, executionId}` for a failed run, else 200 with the last step's results as JSON.
 */
export function syncWebhookResponse(
  record: {
    id: string;
    integration: string;
    status: string;
    response?: HttpResponseSpec;
    error?: { message: string };
    result?: unknown;
    wakeAt?: string;
    waitingFor?: { step: string; kind: string };
  },
  onUnsendable?: (error: string) => void,
): RenderedResponse {
  if (record.response) return runResponse(record.response, record.id, record.integration, onUnsendable);
  // Not over, or over by an operator's hand: what the run's own caller was told (a duplicate of it gets the same).
  if (record.status === 'waiting') return runResponse(waitingResponse(record), record.id, record.integration, onUnsendable);
  if (record.status === 'cancelled') return runResponse(cancelledResponse(record), record.id, record.integration, onUnsendable);
  if (record.status !== 'succeeded')
    return executionJson(500, record.id, { error: record.error?.message ?? 'the execution failed', executionId: record.id });
  return executionJson(200, record.id, record.result ?? null);
}

/**
 * What a synchronous webhook caller gets when its run starts waiting (docs/server.md "Waiting
 * executions and callbacks"): 202 `{executionId, status: "waiting", wakeAt?, waitingFor}` with
 * `x-execution-id` — accepted, finishing later (the callback URL of a callback wait is not shown).
 */
export function waitingResponse(record: Pick<ExecutionRecord, 'id' | 'wakeAt'> & { waitingFor?: { step: string; kind: string } }): HttpResponseSpec {
  return {
    statusCode: 202,
    contentType: 'application/json',
    body: {
      executionId: record.id,
      status: 'waiting',
      ...(record.wakeAt !== undefined ? { wakeAt: record.wakeAt } : {}),
      // The step and what it waits for — never the callback URL: it is meant for someone else (an approver).
      ...(record.waitingFor !== undefined ? { waitingFor: { step: record.waitingFor.step, kind: record.waitingFor.kind } } : {}),
    },
  };
}

/** A synchronous caller of a run cancelled by an operator: 500 `{error, executionId}` saying so (not "failed"). */
export function cancelledResponse(record: Pick<ExecutionRecord, 'id' | 'integration'>): HttpResponseSpec {
  return {
    statusCode: 500,
    contentType: 'application/json',
    body: { error: `integration ${record.integration}: the execution was cancelled by an operator`, executionId: record.id },
  };
}

/** A JSON answer about one execution (its id in `x-execution-id`). */
export function executionJson(status: number, executionId: string, body: unknown): RenderedResponse {
  return { status, headers: { 'content-type': 'application/json', 'x-execution-id': executionId }, body: JSON.stringify(body) };
}

/**
 * What an asynchronous webhook caller gets once its execution is recorded: the trigger's custom
 * response, or 200 `{"executionId"}`. A custom response that fails to evaluate is a 500 naming
 * the integration (`error` says why; the execution runs anyway).
 */
export async function asyncWebhookResponse(
  integration: CompiledIntegration,
  trigger: unknown,
  execution: { id: string; test: boolean; receivedAt: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ response: RenderedResponse; error?: string }> {
  try {
    const spec = await evaluateAsyncResponse(integration, trigger, execution, env);
    if (spec) return { response: renderResponse(spec, { 'x-execution-id': execution.id }) };
  } catch (err) {
    const error = `integration ${integration.name}: the trigger's custom response failed: ${(err as Error).message}`;
    return { error, response: executionJson(500, execution.id, { error, executionId: execution.id }) };
  }
  return { response: executionJson(200, execution.id, { executionId: execution.id }) };
}
