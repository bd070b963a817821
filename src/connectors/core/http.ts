/**
 * core.http: a call to a third-party API (appEvent subscriptions, notifications). Retries on 5xx
 * and network errors (every error response with retryOnAllErrors), with the same timing as Raw
 * Request (../http-retry.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { binaryFromBytes, bytesOf, isBinaryValue } from '../../common/binary.js';
import { ActionError } from '../../common/errors.js';
import type { ActionContext } from '../types.js';
import { keyValuePairs } from '../key-value.js';
import { retryDelay } from '../http-retry.js';
import { maxResultBytes, readLimited } from '../result-limit.js';
import { outboundDispatcher, outboundRefusal } from '../outbound-policy.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

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
  const maxRetries = Number(inputs.maxRetryCount ?? 0);
  const timeoutMs = Number(inputs.timeoutMs ?? 30_000);
  for (let attempt = 0; ; attempt++) {
    let retryAfter: string | undefined;
    let failure: ActionError;
    try {
      const res = await request(url, {
        method: String(inputs.method ?? 'GET') as Method,
        headers,
        body,
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]),
        // Checks every address dialled against the outbound policy (../outbound-policy.ts).
        dispatcher: outboundDispatcher(ctx.services.allowPrivateNetwork === true),
      });
      // Streamed and counted: past the step result limit the request is cancelled (../result-limit.ts).
      const bytes = await readLimited(res.body, res.headers, maxResultBytes(ctx.services), `${inputs.method ?? 'GET'} ${url.origin}${url.pathname}`);
      const resHeaders = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
      const parsed = decodeBody(bytes, resHeaders['content-type'], String(inputs.responseType ?? 'json'));
      if (res.statusCode < 400 || inputs.failOnError === false) return { status: res.statusCode, headers: resHeaders, body: parsed };
      retryAfter = resHeaders['retry-after'];
      failure = new ActionError(`${inputs.method ?? 'GET'} ${url.origin}${url.pathname} answered ${res.statusCode}`, {
        status: res.statusCode,
        code: res.statusCode === 429 ? 'rate_limited' : res.statusCode >= 500 ? 'server_error' : 'http_error',
        remote: parsed,
        retryable: res.statusCode >= 500 || res.statusCode === 429,
      });
      const retryable = res.statusCode >= 500 || inputs.retryOnAllErrors === true;
      if (!retryable || attempt >= maxRetries) throw failure;
    } catch (err) {
      if (err instanceof ActionError && (err.details.status === undefined || attempt >= maxRetries || !(err.details.status >= 500 || inputs.retryOnAllErrors))) throw err;
      if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : err;
      const refused = outboundRefusal(err);
      // A policy refusal is the same on every attempt: fail the step now, naming address and flag.
      if (refused) throw new ActionError(`${inputs.method ?? 'GET'} ${url.origin}${url.pathname}: ${refused.message}`, { code: 'outbound_refused', retryable: false });
      failure =
        err instanceof ActionError
          ? err
          : new ActionError(`${inputs.method ?? 'GET'} ${url.origin}${url.pathname} failed: ${(err as Error).message}`, { code: 'network_error', retryable: true });
      if (attempt >= maxRetries) throw failure;
    }
    const delay = retryDelay(attempt, { useExponentialBackoff: inputs.useExponentialBackoff === true, retryDelayMs: Number(inputs.retryDelayMs ?? 0) }, retryAfter);
    ctx.log('warn', `${failure.message}; retry ${attempt + 1} of ${maxRetries} in ${delay} ms`);
    await sleep(delay, undefined, { signal: ctx.signal });
  }
}

function decodeBody(bytes: Buffer, contentType: string | undefined, responseType: string): unknown {
  if (responseType === 'binary') return binaryFromBytes(bytes, contentType ?? 'application/octet-stream');
  const text = bytes.toString('utf8');
  if (responseType === 'text') return text;
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
