/** Sends one request with the connection's bearer token (one refresh + retry on 401) and maps responses. */
import { STATUS_CODES } from 'node:http';
import { request } from 'undici';
import { binaryFromBytes } from '../../common/binary.js';
import { ActionError } from '../../common/errors.js';
import type { ResolvedConnection, TokenStore } from '../types.js';
import { getAccessToken } from './oauth/provider.js';
import { retryAfterMs as retryAfterHeaderMs } from '../http-retry.js';
import { DEFAULT_MAX_RESULT_BYTES, readLimited } from '../result-limit.js';

export interface AuthContext {
  connection: ResolvedConnection;
  tokens: TokenStore;
  storeKey: string;
  /** The integration running the step, for error hints. */
  integration?: string;
  signal: AbortSignal;
  /** Largest response body read (the step result limit, ../result-limit.ts); default 16 MiB. */
  maxResultBytes?: number;
}

export interface SendSpec {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Per-attempt timeout (ms). */
  timeoutMs?: number;
}

export interface HttpResult {
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  contentType: string;
  bytes: Buffer;
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== 'authorization') out[k] = v;
  return out;
}

async function once(spec: SendSpec, token: string, outer: AbortSignal, actionKey: string, maxBytes: number): Promise<HttpResult> {
  const timeout = spec.timeoutMs ? AbortSignal.timeout(spec.timeoutMs) : undefined;
  const signal = timeout ? AbortSignal.any([outer, timeout]) : outer;
  try {
    const res = await request(spec.url, {
      method: spec.method as 'GET',
      // The bearer token always wins over user headers.
      headers: { ...withoutAuthorization(spec.headers), authorization: `Bearer ${token}` },
      body: spec.body,
      signal,
    });
    // Streamed and counted: past the step result limit the request is cancelled.
    const bytes = await readLimited(res.body, res.headers, maxBytes, actionKey);
    const ct = res.headers['content-type'];
    return {
      status: res.statusCode,
      statusText: STATUS_CODES[res.statusCode] ?? '',
      headers: res.headers,
      contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '',
      bytes,
    };
  } catch (err) {
    if (err instanceof ActionError) throw err; // e.g. the result limit
    if (timeout?.aborted && !outer.aborted) {
      throw new ActionError(`${actionKey}: no response within ${spec.timeoutMs} ms`, { code: 'timeout', retryable: true });
    }
    if (outer.aborted) throw new ActionError(`${actionKey}: request aborted`, { code: 'aborted', retryable: false });
    const e = err as Error & { code?: string };
    throw new ActionError(`${actionKey}: network error calling HCM (${e.code ?? e.name}: ${e.message})`, {
      code: 'network_error',
      retryable: true,
    });
  }
}

/** One logical call: bearer token, and on 401 one refresh then one retry. */
export async function sendAuthorized(auth: AuthContext, spec: SendSpec, actionKey: string): Promise<HttpResult> {
  const token = await getAccessToken(auth.connection, auth.tokens, auth.storeKey, auth.signal, undefined, auth.integration);
  const maxBytes = auth.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const first = await once(spec, token, auth.signal, actionKey, maxBytes);
  if (first.status !== 401) return first;
  const fresh = await getAccessToken(auth.connection, auth.tokens, auth.storeKey, auth.signal, token, auth.integration);
  return once(spec, fresh, auth.signal, actionKey, maxBytes);
}

const isJson = (ct: string) => /\bjson\b/i.test(ct);
const isText = (ct: string) => /^text\/|xml|javascript|x-www-form-urlencoded/i.test(ct);

/** Body by content type: JSON parsed, text as a string, anything else a binary value. */
export function parseBody(r: HttpResult, mode: 'auto' | 'json' | 'text' | 'binary' = 'auto'): unknown {
  const ct = r.contentType.split(';')[0]!.trim();
  if (mode === 'binary') return binaryFromBytes(r.bytes, ct || 'application/octet-stream');
  const text = () => r.bytes.toString('utf8');
  if (mode === 'text') return text();
  if (r.bytes.length === 0) return mode === 'json' ? null : {};
  if (mode === 'json' || isJson(ct) || !ct) {
    try {
      return JSON.parse(text());
    } catch {
      if (mode === 'json' && (isJson(ct) || isText(ct) || !ct)) return text();
    }
  }
  if (isText(ct) || isJson(ct)) return text();
  return binaryFromBytes(r.bytes, ct || 'application/octet-stream');
}

export function errorCodeFor(status: number): string {
  if (status === 400 || status === 422) return 'bad_request';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return 'http_error';
}

/** An ActionError for an error response, naming the action; the remote's `error`/`errors` only. */
export function httpError(actionKey: string, r: HttpResult): ActionError {
  let remote: { error?: unknown; errors?: unknown } | undefined;
  try {
    const body = JSON.parse(r.bytes.toString('utf8')) as Record<string, unknown>;
    if (body && typeof body === 'object') {
      remote = {};
      if (body.error !== undefined) remote.error = body.error;
      if (body.errors !== undefined) remote.errors = body.errors;
    }
  } catch {
    /* not JSON */
  }
  let detail = typeof remote?.error === 'string' ? remote.error : '';
  if (!detail && Array.isArray(remote?.errors)) {
    detail = remote.errors.map((e) => (e && typeof e === 'object' ? String((e as Record<string, unknown>).error ?? '') : String(e))).filter(Boolean).join('; ');
  }
  if (!detail && r.bytes.length && isText(r.contentType)) detail = r.bytes.toString('utf8').slice(0, 200);
  detail = detail.replace(/Bearer\s+[\w.~+/=-]+/gi, 'Bearer [redacted]');
  const message = `${actionKey}: HCM answered ${r.status}${r.statusText ? ` ${r.statusText}` : ''}${detail ? `: ${detail}` : ''}`;
  return new ActionError(message, {
    status: r.status,
    code: errorCodeFor(r.status),
    remote,
    retryable: r.status === 429 || r.status >= 500 || r.status === 408,
  });
}

/** Retry-After (seconds or an HTTP date) → ms, or undefined. */
export function retryAfterMs(r: HttpResult): number | undefined {
  return retryAfterHeaderMs(r.headers['retry-after'] as string | string[] | undefined);
}
