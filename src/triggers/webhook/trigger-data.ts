/** `$trigger` for a webhook request (PRODUCT §5 mapping table). */
import { mapBody, queryToObject } from './body.js';
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

/**
 * Headers that carry credentials. PRODUCT §7 says Authorization headers never appear in
 * execution records, and `$trigger` is part of the record, so their values are replaced.
 */
const REDACTED_HEADERS = new Set(['authorization', 'proxy-authorization']);
export const REDACTED = '[redacted]';

export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  let out = headers;
  for (const name of REDACTED_HEADERS) {
    if (name in headers) {
      if (out === headers) out = { ...headers };
      out[name] = REDACTED;
    }
  }
  return out;
}

/** Throws WebhookRejection(400) for malformed JSON or multipart bodies. */
export function buildWebhookTrigger(
  req: WebhookRequest,
  ctx: { webhookUrls: WebhookUrls; executionId: string; receivedAt: string },
): WebhookTriggerData {
  const { body, rawBody } = mapBody(req.rawBody, req.headers['content-type']);
  const trigger: WebhookTriggerData = {
    headers: redactHeaders(req.headers),
    queryParameters: queryToObject(req.query),
    pathFragment: req.pathFragment,
    method: req.method,
    webhookUrls: ctx.webhookUrls,
    executionId: ctx.executionId,
    receivedAt: ctx.receivedAt,
  };
  if (body) trigger.body = body;
  if (rawBody) trigger.rawBody = rawBody;
  return trigger;
}
