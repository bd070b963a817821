/** `$trigger` for a webhook request (the mapping table in docs/authoring.md "webhook"). */
import { setOwn } from '../../common/own.js';
import { rememberTriggerJson } from '../../common/trigger-json.js';
import { mapBody, queryToObject } from './body.js';
import { DEFAULT_INTAKE_LIMITS, type IntakeLimits } from './limits.js';

/**
 * The request `$trigger` is built from: a webhook request past intake's checks — the token
 * resolved and dropped, the path after it decoded, the method upper-case, the body read whole.
 * Deliberately not intake's `IntakeRequest` (./intake.ts), which is the request as the server
 * received it (the token still in the still-encoded path, the body perhaps not yet read, the
 * caller's address): test cases and recorded requests build this one without a token, a URL or a
 * connection. It carries no HTTP-server types, so the mapping runs without Hono or node:http.
 */
export interface WebhookTriggerRequest {
  /** Upper-case HTTP method. */
  method: string;
  /** Extra path after the token, without the leading `/` ('' when none). */
  pathFragment: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** Header names lower-cased; repeated headers joined with ", " (Node's convention). */
  headers: Record<string, string>;
  rawBody: Buffer;
}

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
  req: WebhookTriggerRequest,
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
