/**
 * A connection's outbound limits, `rateLimit: {requests, per}` and `maxConcurrent`: declared once
 * here as connection inputs (the schema, the load-time checks and the connection tables in the
 * docs derive from them), and read from a resolved connection by `connectionLimitsOf`, the one
 * run-time reading (env values and expressions are checked there). The line that enforces them is
 * the HTTP stack's (http/limit.ts). Plain data and small functions: `validate` reads this file.
 */
import { ActionError } from '../common/errors.js';
import { parseDuration } from '../common/duration.js';
import type { InputDecl, ResolvedConnection } from './types.js';

/** Most requests a `rateLimit` may count (the line keeps one timestamp per request: bounded memory). */
export const MAX_RATE_REQUESTS = 10_000;
/** Most requests in flight `maxConcurrent` may allow. */
export const MAX_CONCURRENT = 10_000;

const intOrEnv = (min: number, max: number) => ({
  'x-expect': `an integer from ${min} to ${max}, an expression {% … %}, {env: NAME} or {file: PATH}`,
  anyOf: [{ type: 'integer', minimum: min, maximum: max }, { $ref: '#/$defs/expression' }, { $ref: '#/$defs/env' }, { $ref: '#/$defs/file' }],
});

export const connectionLimitInputs: Readonly<Record<string, InputDecl>> = {
  rateLimit: {
    type: 'object',
    label: 'Rate limit',
    description:
      `Outgoing requests of this connection, every execution together (per replica): at most \`requests\` (1–${MAX_RATE_REQUESTS}) in any window of length \`per\`, e.g. \`{ requests: 10, per: 1s }\`. ` +
      'A request waits in line (first come, first served) while the limit is reached; the wait counts against the step’s `timeoutMs`.',
    schema: {
      required: ['requests', 'per'],
      additionalProperties: false,
      properties: {
        requests: { description: `Requests allowed per \`per\` (1–${MAX_RATE_REQUESTS}).`, ...intOrEnv(1, MAX_RATE_REQUESTS) },
        per: {
          description: 'The window, a duration such as 1s, 500ms or 1m.',
          'x-expect': 'a duration such as 1s, 500ms or 1m, an expression {% … %}, {env: NAME} or {file: PATH}',
          anyOf: [
            { type: 'string', pattern: '^[0-9]*[1-9][0-9]*(ms|s|m|h|d)$' },
            { $ref: '#/$defs/expression' },
            { $ref: '#/$defs/env' },
            { $ref: '#/$defs/file' },
          ],
        },
      },
    },
  },
  maxConcurrent: {
    type: 'integer',
    label: 'Max concurrent',
    minimum: 1,
    maximum: MAX_CONCURRENT,
    description: `Requests of this connection in flight at once (1–${MAX_CONCURRENT}), every execution together (per replica). Further requests wait in the same line as \`rateLimit\`.`,
  },
};

export interface ConnectionLimits {
  rate?: { requests: number; perMs: number };
  maxConcurrent?: number;
}

function bad(conn: ResolvedConnection, key: string, what: string, got: unknown): ActionError {
  const shown = typeof got === 'string' ? `"${got.slice(0, 40)}"` : JSON.stringify(got)?.slice(0, 40);
  return new ActionError(`connection ${conn.name}: ${key} must be ${what} (got ${shown})`, { code: 'invalid_input' });
}

function integer(conn: ResolvedConnection, key: string, v: unknown, max: number): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max) throw bad(conn, key, `an integer from 1 to ${max}`, v);
  return n;
}

/**
 * The limits of a resolved connection (values may come from env or expressions), or undefined when
 * it has none; an unusable value is an `invalid_input` ActionError naming the connection and key.
 */
export function connectionLimitsOf(conn: ResolvedConnection): ConnectionLimits | undefined {
  const { rateLimit, maxConcurrent } = conn.config;
  if (rateLimit === undefined && maxConcurrent === undefined) return undefined;
  const limits: ConnectionLimits = {};
  if (rateLimit !== undefined) {
    if (!rateLimit || typeof rateLimit !== 'object' || Array.isArray(rateLimit)) throw bad(conn, 'rateLimit', '{requests, per}', rateLimit);
    const r = rateLimit as Record<string, unknown>;
    const requests = integer(conn, 'rateLimit.requests', r.requests, MAX_RATE_REQUESTS);
    const perMs = typeof r.per === 'string' ? parseDuration(r.per) : undefined;
    if (perMs === undefined) throw bad(conn, 'rateLimit.per', 'a duration such as 1s or 500ms', r.per);
    limits.rate = { requests, perMs };
  }
  if (maxConcurrent !== undefined) limits.maxConcurrent = integer(conn, 'maxConcurrent', maxConcurrent, MAX_CONCURRENT);
  return limits;
}
