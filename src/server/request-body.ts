/**
 * Bodies sent by operators — the console's sign-in form and forms, the admin API's JSON — read
 * under a byte limit and parsed under the same part/field and nesting limits as webhook bodies
 * (src/triggers/webhook/limits.ts), so no request the server parses can cost it more than a
 * bounded amount of memory and CPU (docs/security.md "Operator authentication").
 *
 * A declared Content-Length over the limit is refused with 413 before a byte is read; a body
 * without one is counted while it streams (src/server/read-body.ts) and refused at the limit.
 * The rest is discarded by the HTTP server (@hono/node-server drains an unread body for at most
 * 500 ms / 64 MiB, then closes): no `Connection: close` here, which would cut a client still
 * writing its body before it could read the 413.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { HttpError } from '../common/errors.js';
import { mapBody } from '../triggers/webhook/body.js';
import { parseJsonBounded } from '../triggers/webhook/json.js';
import type { IntakeLimits } from '../triggers/webhook/limits.js';
import { readBody } from './read-body.js';
import type { AppEnv } from './types.js';
import { settingSpecs } from '../settings/spec.js';

/**
 * The sign-in form holds one token and a `next` path: 4 KiB is plenty, and it is what an
 * unauthenticated caller may make the server read and parse.
 */
export const SIGN_IN_BODY_LIMIT_BYTES = 4 * 1024;
/** Admin API JSON bodies and the console's forms (HCM_RUNNER_MAX_ADMIN_BODY_BYTES). */
export const DEFAULT_ADMIN_BODY_LIMIT_BYTES = settingSpecs.maxAdminBodyBytes.default;

/** A form's fields by name; a repeated field keeps its first value. */
export type FormFields = Record<string, string>;

/** The body's bytes, at most `limit` of them (else 413); `what` names the body in the answer. */
export async function readOperatorBytes(c: Context<AppEnv>, limit: number, what: string): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `${what} is larger than ${limit} bytes; send less (docs/security.md "Operator authentication")`);
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) throw tooLarge();
  try {
    return await readBody(c.env?.incoming as IncomingMessage | undefined, c.req.raw, limit);
  } catch (err) {
    if (err instanceof HttpError && err.status === 413) throw tooLarge();
    throw err;
  }
}

/**
 * An `application/x-www-form-urlencoded` or `multipart/form-data` form as text fields (files and
 * other types give no fields). Too many fields or parts → 413, as for webhooks.
 */
export async function readForm(c: Context<AppEnv>, limit: number, limits: IntakeLimits, what = 'the form'): Promise<FormFields> {
  const raw = await readOperatorBytes(c, limit, what);
  const contentType = c.req.header('content-type') ?? '';
  if (!/^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(contentType)) return {};
  const data = mapBody(raw, contentType, limits).body?.data as Record<string, unknown> | undefined;
  const fields: FormFields = {};
  for (const [name, value] of Object.entries(data ?? {})) {
    const text = textOf(Array.isArray(value) ? value[0] : value);
    if (text !== undefined) Object.defineProperty(fields, name, { value: text, enumerable: true, writable: true, configurable: true });
  }
  return fields;
}

/** A JSON body (nesting bounded as for webhooks); an empty body is undefined when `optional`, else 400. */
export async function readJson(c: Context<AppEnv>, limit: number, limits: IntakeLimits, optional = false): Promise<unknown> {
  const text = (await readOperatorBytes(c, limit, 'the request body')).toString('utf8');
  if (text.trim() === '') {
    if (optional) return undefined;
    throw new HttpError(400, 'request body must be JSON');
  }
  return parseJsonBounded(text, limits.maxJsonDepth, 'the request body');
}

/** A urlencoded value is a string; a multipart text part is `{data, contentType}`. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { data?: unknown }).data === 'string' && !('base64' in value))
    return (value as { data: string }).data;
  return undefined;
}
