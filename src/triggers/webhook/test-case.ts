/**
 * Test cases of webhook-like triggers (webhook, appEvent), loaded by `hcm-runner test` only: a
 * case becomes a request (method, path fragment, query string, headers, body bytes) that goes
 * through the same mapping `serve` uses (`buildWebhookTrigger`), and a recorded request becomes a
 * case again (`test --record`).
 */
import type { CompiledTrigger, WebhookOptions } from '../../definition/types.js';
import { RecordError, type TestTriggerInput, type TriggerTesting } from '../type.js';
import { isJsonType, parseContentType } from './content-type.js';
import { buildWebhookTrigger, REDACTED, type WebhookTriggerRequest } from './trigger-data.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Headers every HTTP client sends; they say nothing about the integration. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'accept',
  'accept-encoding',
  'accept-language',
  'user-agent',
]);

export const webhookTesting: TriggerTesting<Extract<CompiledTrigger, WebhookOptions>> = {
  caseTrigger: (_i, t, input, ctx) =>
    buildWebhookTrigger(webhookRequest(t.methods, input), {
      webhookUrls: ctx.webhookUrls,
      executionId: ctx.executionId,
      receivedAt: ctx.now.toISOString(),
    }),
  recordedInput,
};

/** The request a caller would send: JSON body unless the headers name another content type. */
export function webhookRequest(methods: string[], input: TestTriggerInput): WebhookTriggerRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k.toLowerCase()] = String(v);
  let rawBody = Buffer.alloc(0);
  if (input.body !== undefined) {
    if (typeof input.body === 'string') headers['content-type'] ??= 'text/plain; charset=utf-8';
    else headers['content-type'] ??= 'application/json';
    rawBody = Buffer.from(encodeBody(input.body, headers['content-type']));
    headers['content-length'] = String(rawBody.length);
  }
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(input.query ?? {})) for (const one of Array.isArray(v) ? v : [v]) query.append(k, String(one));
  const method = input.method?.toUpperCase() ?? (methods.includes('POST') ? 'POST' : (methods[0] ?? 'POST'));
  return { method, pathFragment: input.pathFragment ?? '', query: query.toString(), headers, rawBody };
}

function encodeBody(body: unknown, contentType: string): string {
  if (typeof body === 'string') return body;
  const { mediaType } = parseContentType(contentType);
  if (mediaType === 'application/x-www-form-urlencoded' && body && typeof body === 'object') {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, String(one));
    return form.toString();
  }
  if (!isJsonType(mediaType)) return typeof body === 'object' ? JSON.stringify(body) : String(body);
  return JSON.stringify(body);
}

/** A recorded request back as a case: transport headers, redacted values and defaults left out. */
function recordedInput(trigger: WebhookOptions, t: Obj): Obj {
  const out: Obj = {};
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(isObj(t.headers) ? t.headers : {})) {
    if (!TRANSPORT_HEADERS.has(k) && !k.startsWith('sec-fetch-') && v !== REDACTED) headers[k] = String(v);
  }
  const body = isObj(t.body) ? t.body : undefined;
  const raw = isObj(t.rawBody) ? t.rawBody : undefined;
  const mediaType = parseContentType(String(body?.contentType ?? raw?.contentType ?? headers['content-type'] ?? '')).mediaType;
  if (body && isJsonType(mediaType)) {
    out.body = body.data;
    if (mediaType === 'application/json') delete headers['content-type'];
  } else if (body && mediaType === 'application/x-www-form-urlencoded') {
    out.body = body.data;
  } else if (body) {
    throw new RecordError(
      `the execution's request body is ${mediaType || 'binary'}; recording supports JSON, form and text bodies — write this case's trigger by hand (docs/testing.md)`,
    );
  } else if (raw) {
    out.body = raw.data;
  }
  const methods = trigger.methods;
  const defaultMethod = methods.includes('POST') ? 'POST' : methods[0];
  if (typeof t.method === 'string' && t.method !== defaultMethod) out.method = t.method;
  if (typeof t.pathFragment === 'string' && t.pathFragment) out.pathFragment = t.pathFragment;
  if (isObj(t.queryParameters) && Object.keys(t.queryParameters).length) out.query = t.queryParameters;
  if (Object.keys(headers).length) out.headers = headers;
  return out;
}
