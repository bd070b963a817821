/** `$trigger` for a webhook request (the mapping table in docs/authoring.md "webhook"). */
import { setOwn } from '../../common/own.js';
import { rememberTriggerJson } from '../../common/trigger-json.js';
import { mapBody, queryToObject } from './body.js';
import { DEFAULT_INTAKE_LIMITS, type IntakeLimits } from './limits.js';
import type { WebhookRequest } from './request.js';

export interface WebhookUrls {
  live: string;
  test: string;
}

export interface WebhookTriggerData {
  body?: { data: unknown; contentType: string };
  rawBody?: { data: string; contentType: string };
  headers: Record<string, string>;
  queryParameters: Record<string, string | string[]>;
  pathFragment: string;
  method: string;
  webhookUrls: WebhookUrls;
  executionId: string;
  receivedAt: string;
}

export const REDACTED = '[redacted]';

/**
 * The caller's headers as `$trigger.headers`: a copy holding every name as an own key (a header is
 * the caller's choice of name) with the values of credential headers (`limits.redactedHeaders`)
 * replaced.
 */
export function redactHeaders(
  headers: Record<string, string>,
  redacted: ReadonlySet<string> = DEFAULT_INTAKE_LIMITS.redactedHeaders,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) setOwn(out, name, redacted.has(name) ? REDACTED : headers[name]!);
  return out;
}

/** Throws HttpError (400, 413) for malformed, too deep or too many-parted bodies. */
export function buildWebhookTrigger(
  req: WebhookRequest,
  ctx: { webhookUrls: WebhookUrls; executionId: string; receivedAt: string },
  limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
): WebhookTriggerData {
  const { body, rawBody, jsonText } = mapBody(req.rawBody, req.headers['content-type'], limits);
  const trigger: WebhookTriggerData = {
    headers: redactHeaders(req.headers, limits.redactedHeaders),
    queryParameters: queryToObject(req.query),
    pathFragment: req.pathFragment,
    method: req.method,
    webhookUrls: ctx.webhookUrls,
    executionId: ctx.executionId,
    receivedAt: ctx.receivedAt,
  };
  if (body && jsonText !== undefined) {
    // The stored trigger is the rest serialised with the caller's JSON text spliced in as
    // body.data (it parses to body.data: body.data was parsed from it), in the key order
    // JSON.stringify would give: the body's JSON is not written out a second time.
    const rest = JSON.stringify(trigger);
    trigger.body = body;
    rememberTriggerJson(trigger, `${rest.slice(0, -1)},"body":{"data":${jsonText},"contentType":${JSON.stringify(body.contentType)}}}`);
    return trigger;
  }
  if (body) trigger.body = body;
  if (rawBody) trigger.rawBody = rawBody;
  return trigger;
}
