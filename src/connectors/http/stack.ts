/**
 * The one HTTP stack of the connectors: HCM actions, Raw Request and core.http all `send` through
 * an undici dispatcher composed from the same interceptors (outermost first):
 *
 *   retry (./retry.ts) → auth (./auth.ts, HCM only) → the connection's line (./limit.ts, when it
 *     has rateLimit or maxConcurrent) → response errors (./response-error.ts)
 *     → per-attempt timeout (./timeout.ts) → body limit (./body-limit.ts)
 *     → client span and traceparent (./trace.ts, when tracing is on) → the connection pool
 *
 * so a retry repeats the 401 refresh, every attempt waits in the connection's line and has its
 * own timeout (which starts once it leaves the line), and every body — error answers included —
 * is counted against the step result limit. HCM connections get one
 * dispatcher each; core.http one per outbound policy setting (../outbound-policy.ts checks every
 * address dialled). What a call needs (its name in errors, how error answers read, its retry
 * rules, timeout and limit) travels with the request (`Call`, ./call.ts).
 */
import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import type { TokenStore } from '../types.js';
import { outboundAgent } from '../outbound-policy.js';
import { bearerAuthInterceptor, type BearerAuth } from './auth.js';
import { bodyLimitInterceptor } from './body-limit.js';
import { connectionLimitsOf } from '../connection-limits.js';
import { ConnectionLimiter, limitInterceptor } from './limit.js';
import { callFailure, type Answer, type Call, type CallDispatchOptions } from './call.js';
import { contentTypeOf, responseErrorInterceptor } from './response-error.js';
import { retryInterceptor } from './retry.js';
import { timeoutInterceptor } from './timeout.js';
import { traceInterceptor } from './trace.js';

export type { Answer, Call } from './call.js';

/** compose() calls the last interceptor first: this lists them innermost first. */
function stack(base: Dispatcher, auth?: BearerAuth, limiter?: ConnectionLimiter): Dispatcher {
  const inner = [
    traceInterceptor,
    bodyLimitInterceptor,
    timeoutInterceptor,
    responseErrorInterceptor,
    ...(limiter ? [limitInterceptor(limiter)] : []),
  ];
  return base.compose(...inner, ...(auth ? [bearerAuthInterceptor(auth)] : []), retryInterceptor);
}

const hcmPool = new Agent();
/** Per token store (one per runtime or test), per connection as configured. */
const byConnection = new WeakMap<TokenStore, Map<string, Dispatcher>>();
/**
 * The lines of the connections with limits, per token store (one per runtime: one line per
 * replica), per integration and connection name — not per configuration, so every execution,
 * whichever version of the integration it runs, waits in the same line; a reload changes its limits.
 */
const lines = new WeakMap<TokenStore, Map<string, ConnectionLimiter>>();

function lineOf(auth: BearerAuth): ConnectionLimiter | undefined {
  const limits = connectionLimitsOf(auth.connection);
  if (!limits) return undefined;
  let map = lines.get(auth.tokens);
  if (!map) lines.set(auth.tokens, (map = new Map()));
  const key = JSON.stringify([auth.integration, auth.connection.name]);
  let line = map.get(key);
  if (line) line.configure(limits);
  else {
    // Integrations come and go; past 1000 lines, forget those nobody is in (a busy one is kept).
    if (map.size >= 1000) for (const [k, l] of map) if (!l.inFlight && !l.waiting) map.delete(k);
    map.set(key, (line = new ConnectionLimiter(`connection ${auth.connection.name}`, limits)));
  }
  return line;
}

/**
 * The dispatcher of one HCM connection: bearer token with the 401 refresh, the connection's line
 * when it has limits, then the shared stack. Unusable limits (from env or an expression) are an
 * `invalid_input` ActionError.
 */
export function connectionDispatcher(auth: BearerAuth): Dispatcher {
  let map = byConnection.get(auth.tokens);
  if (!map) byConnection.set(auth.tokens, (map = new Map()));
  const key = JSON.stringify([auth.integration, auth.storeKey, auth.connection.name, auth.connection.config]);
  let d = map.get(key);
  if (!d) {
    if (map.size >= 1000) map.clear(); // reloaded configurations: never grows without bound
    map.set(key, (d = stack(hcmPool, auth, lineOf(auth))));
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

/**
 * Sends `call` through `dispatcher`; the answer read whole, or the ActionError of the last attempt.
 * The answer is collected by a plain handler rather than undici's `request()`, whose body stream
 * (and async-context bookkeeping per callback) only to be read whole at once cost more than the
 * rest of the stack here.
 */
export function send(dispatcher: Dispatcher, call: Call): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const { signal } = call;
    let controller: Dispatcher.DispatchController | undefined;
    const onAbort = () => controller?.abort(signal.reason);
    const fail = (err: unknown) => {
      signal.removeEventListener('abort', onAbort);
      reject(callFailure(err, call));
    };
    if (signal.aborted) return fail(signal.reason);
    let url: URL;
    try {
      url = new URL(call.url);
    } catch (err) {
      return fail(err);
    }
    let status = 0;
    let headers: Answer['headers'] = {};
    let chunks: Buffer[] = [];
    const handler: Dispatcher.DispatchHandler = {
      // Once per attempt (the retry interceptor dispatches again): what an attempt before read is dropped.
      onRequestStart(c) {
        controller = c;
        status = 0;
        chunks = [];
        if (signal.aborted) c.abort(signal.reason);
      },
      onResponseStart(_c, statusCode, h) {
        status = statusCode;
        headers = h as Answer['headers'];
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        signal.removeEventListener('abort', onAbort);
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        resolve({ status, statusText: STATUS_CODES[status] ?? '', headers, contentType: contentTypeOf(headers), bytes });
      },
      onResponseError(_c, err) {
        fail(err);
      },
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const opts: CallDispatchOptions = {
        origin: url.origin,
        path: url.pathname + url.search,
        method: call.method as Dispatcher.HttpMethod,
        headers: call.headers,
        body: call.body,
        call,
      };
      dispatcher.dispatch(opts, handler);
    } catch (err) {
      fail(err);
    }
  });
}
