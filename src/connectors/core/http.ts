/**
 * core.http: a call to a third-party API (appEvent subscriptions, notifications), sent through
 * the HTTP stack (../http/stack.ts) on the outbound policy's dispatcher (../outbound-policy.ts),
 * with Raw Request's retry inputs (../http/retry-rules.ts; the retry interceptor is ../http/retry.ts).
 */
import { binaryFromBytes, bytesOf, isBinaryValue } from '../../common/binary.js';
import { ActionError } from '../../common/errors.js';
import type { ActionContext } from '../types.js';
import { keyValuePairs } from '../key-value.js';
import { retryRulesFrom } from '../http/retry-rules.js';
import { outboundDispatcher, send, type Answer } from '../http/stack.js';
import { maxResultBytes } from '../result-limit.js';

/** How core.http words and classifies an error answer; `remote` is the decoded body. */
export function thirdPartyAnswerError(label: string, status: number, remote: unknown): ActionError {
  return new ActionError(`${label} answered ${status}`, {
    status,
    code: status === 429 ? 'rate_limited' : status >= 500 ? 'server_error' : 'http_error',
    remote,
    retryable: status >= 500 || status === 429,
  });
}

/** "METHOD origin/path": how core.http names a call in errors (no query: it may carry secrets). */
export function callLabel(method: unknown, url: string): string {
  let where = url;
  try {
    const u = new URL(url);
    where = `${u.origin}${u.pathname}`;
  } catch {
    /* keep as written */
  }
  return `${String(method ?? 'GET')} ${where}`;
}

export async function coreHttp(inputs: Record<string, unknown>, ctx: ActionContext): Promise<unknown> {
  const url = new URL(String(inputs.url));
  for (const [k, v] of keyValuePairs(inputs.query, 'core.http: query')) url.searchParams.append(k, v);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries((inputs.headers as Record<string, unknown>) ?? {})) headers[k.toLowerCase()] = String(v);
  let body: string | Buffer | undefined;
  const data = inputs.data;
  if (data !== undefined) {
    if (isBinaryValue(data)) {
      body = bytesOf(data);
      headers['content-type'] ??= data.contentType;
    } else if (typeof data === 'string') {
      body = data;
      headers['content-type'] ??= 'text/plain; charset=utf-8';
    } else {
      body = JSON.stringify(data);
      headers['content-type'] ??= 'application/json';
    }
  }
  const responseType = String(inputs.responseType ?? 'json');
  const label = callLabel(inputs.method, url.href);
  const answer = await send(outboundDispatcher(ctx.services.allowPrivateNetwork === true), {
    method: String(inputs.method ?? 'GET'),
    url: url.href,
    headers,
    body,
    signal: ctx.signal,
    label,
    // failOnError: false → error answers are results (and not retried).
    answerError: inputs.failOnError === false ? undefined : (a) => thirdPartyAnswerError(label, a.status, decodeBody(a, responseType)),
    retry: retryRulesFrom(inputs, 'core.http'),
    timeoutMs: Number(inputs.timeoutMs ?? 30_000),
    maxBodyBytes: maxResultBytes(ctx.services),
    log: (level, message) => ctx.log(level, message),
  });
  const resHeaders = Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
  return { status: answer.status, headers: resHeaders, body: decodeBody(answer, responseType) };
}

function decodeBody(answer: Answer, responseType: string): unknown {
  if (responseType === 'binary') return binaryFromBytes(answer.bytes, answer.contentType || 'application/octet-stream');
  const text = answer.bytes.toString('utf8');
  if (responseType === 'text') return text;
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
