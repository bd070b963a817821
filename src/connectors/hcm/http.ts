/**
 * HCM calls: sent through the connection's dispatcher (../http/stack.ts: bearer token with one
 * refresh on 401, body limit, timeouts, retries), error answers worded as HCM errors, bodies
 * decoded by content type.
 */
import { binaryFromBytes } from '../../common/binary.js';
import { ActionError } from '../../common/errors.js';
import type { LogLevel, ResolvedConnection, TokenStore } from '../types.js';
import { connectionDispatcher, send, type Answer } from '../http/stack.js';
import type { RetryRules } from '../http/retry-rules.js';

export interface AuthContext {
  connection: ResolvedConnection;
  tokens: TokenStore;
  storeKey: string;
  /** The integration running the step, for error hints. */
  integration?: string;
  signal: AbortSignal;
  /** Largest response body read (the step result limit, ../result-limit.ts). */
  maxResultBytes: number;
}

export interface HcmRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Per-attempt timeout (ms). */
  timeoutMs?: number;
  retry?: RetryRules;
  log?: (level: LogLevel, message: string) => void;
}

/** One HCM call as `actionKey`: the answer, or the ActionError of the last attempt (httpError for error answers). */
export function sendHcm(auth: AuthContext, req: HcmRequest, actionKey: string): Promise<Answer> {
  const { connection, tokens, storeKey, integration, signal, maxResultBytes } = auth;
  return send(connectionDispatcher({ connection, tokens, storeKey, integration }), {
    ...req,
    signal,
    label: actionKey,
    peer: 'HCM',
    answerError: (answer) => httpError(actionKey, answer),
    maxBodyBytes: maxResultBytes,
  });
}

const isJson = (ct: string) => /\bjson\b/i.test(ct);
const isText = (ct: string) => /^text\/|xml|javascript|x-www-form-urlencoded/i.test(ct);

/** Body by content type: JSON parsed, text as a string, anything else a binary value. */
export function parseBody(r: Answer, mode: 'auto' | 'json' | 'text' | 'binary' = 'auto'): unknown {
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
export function httpError(actionKey: string, r: Answer): ActionError {
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
    detail = remote.errors
      .map((e) => (e && typeof e === 'object' ? String((e as Record<string, unknown>).error ?? '') : String(e)))
      .filter(Boolean)
      .join('; ');
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
