/**
 * The one HTTP stack of the connectors: HCM actions, Raw Request and core.http all `send` through
 * an undici dispatcher composed from the same interceptors (outermost first):
 *
 *   retry (./retry.ts) → auth (./auth.ts, HCM only) → response errors (./response-error.ts)
 *     → per-attempt timeout (./timeout.ts) → body limit (./body-limit.ts) → the connection pool
 *
 * so a retry repeats the 401 refresh, every attempt has its own timeout, and every body —
 * error answers included — is counted against the step result limit. HCM connections get one
 * dispatcher each; core.http one per outbound policy setting (../outbound-policy.ts checks every
 * address dialled). What a call needs (its name in errors, how error answers read, its retry
 * rules, timeout and limit) travels with the request (`Call`, ./call.ts).
 */
import { STATUS_CODES } from 'node:http';
import { Agent, request, type Dispatcher } from 'undici';
import type { TokenStore } from '../types.js';
import { outboundAgent } from '../outbound-policy.js';
import { bearerAuthInterceptor, type BearerAuth } from './auth.js';
import { bodyLimitInterceptor } from './body-limit.js';
import { callFailure, type Answer, type Call } from './call.js';
import { contentTypeOf, responseErrorInterceptor } from './response-error.js';
import { retryInterceptor } from './retry.js';
import { timeoutInterceptor } from './timeout.js';

export type { Answer, Call } from './call.js';

/** compose() calls the last interceptor first: this lists them innermost first. */
function stack(base: Dispatcher, auth?: BearerAuth): Dispatcher {
  const inner = [bodyLimitInterceptor, timeoutInterceptor, responseErrorInterceptor];
  return base.compose(...inner, ...(auth ? [bearerAuthInterceptor(auth)] : []), retryInterceptor);
}

const hcmPool = new Agent();
/** Per token store (one per runtime or test), per connection as configured. */
const byConnection = new WeakMap<TokenStore, Map<string, Dispatcher>>();

/** The dispatcher of one HCM connection: bearer token with the 401 refresh, then the shared stack. */
export function connectionDispatcher(auth: BearerAuth): Dispatcher {
  let map = byConnection.get(auth.tokens);
  if (!map) byConnection.set(auth.tokens, (map = new Map()));
  const key = JSON.stringify([auth.integration, auth.storeKey, auth.connection.name, auth.connection.config]);
  let d = map.get(key);
  if (!d) {
    if (map.size >= 1000) map.clear(); // reloaded configurations: never grows without bound
    map.set(key, (d = stack(hcmPool, auth)));
  }
  return d;
}

const outbound = new Map<boolean, Dispatcher>();

/** The dispatcher of core.http: the outbound address policy under the shared stack. */
export function outboundDispatcher(allowPrivateNetwork: boolean): Dispatcher {
  let d = outbound.get(allowPrivateNetwork);
  if (!d) outbound.set(allowPrivateNetwork, (d = stack(outboundAgent(allowPrivateNetwork))));
  return d;
}

/** Sends `call` through `dispatcher`; the answer read whole, or the ActionError of the last attempt. */
export async function send(dispatcher: Dispatcher, call: Call): Promise<Answer> {
  try {
    const res = await request(call.url, {
      dispatcher,
      method: call.method as Dispatcher.HttpMethod,
      headers: call.headers,
      body: call.body,
      signal: call.signal,
      call,
    } as Parameters<typeof request>[1]);
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const headers = res.headers as Answer['headers'];
    return { status: res.statusCode, statusText: STATUS_CODES[res.statusCode] ?? '', headers, contentType: contentTypeOf(headers), bytes };
  } catch (err) {
    throw callFailure(err, call);
  }
}
