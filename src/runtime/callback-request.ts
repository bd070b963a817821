/**
 * A request to a callback URL (`/callbacks/{token}`) as the waiting step gets it: the results of a
 * `core.wait` on a callback are the request as a webhook would see it (docs/authoring.md
 * "Waiting") — `body` parsed by its content type as a webhook's `$trigger.body.data` is (JSON, form
 * fields, multipart parts, a file value for binary bodies; a text body as its text; no body:
 * `null`), so `$steps.<id>.body.approved` reads a JSON field, as in `hcm-runner test` cases;
 * headers (credentials redacted), query parameters, method and when it came. Bounded like a
 * webhook: the body at a webhook's default `maxBodyBytes`, parsing under the intake limits.
 */
import type { CallbackRequest } from '../engine/durable.js';
import { mapBody, queryToObject } from '../triggers/webhook/body.js';
import type { IntakeLimits } from '../triggers/webhook/limits.js';
import { webhookOptions } from '../triggers/webhook/spec.js';
import { redactHeaders } from '../triggers/webhook/trigger-data.js';

/** Largest callback request body: a webhook's default `maxBodyBytes` (6 MiB). */
export const CALLBACK_MAX_BODY_BYTES = webhookOptions.maxBodyBytes!.default as number;

/** Throws HttpError (400, 413) for malformed, too deep or too many-parted bodies, as webhook intake does. */
export function callbackRequest(
  req: { method: string; query: string; headers: Record<string, string>; rawBody: Buffer },
  limits: IntakeLimits,
  receivedAt: string,
): CallbackRequest {
  const parts = mapBody(req.rawBody, req.headers['content-type'], limits);
  return {
    method: req.method.toUpperCase(),
    headers: redactHeaders(req.headers, limits.redactedHeaders),
    queryParameters: queryToObject(req.query),
    body: (parts.body ?? parts.rawBody)?.data ?? null,
    receivedAt,
  };
}
