/**
 * Client spans (docs/operations.md "Tracing"): each request an attempt sends — innermost, so a
 * retried or re-authorised request is one span per attempt — is a child of the running step's span
 * and carries its W3C `traceparent`. Tracing off, or no step running, it only passes the request on.
 */
import type { Dispatcher } from 'undici';
import { activeStepTrace } from '../../common/tracing.js';
import { settling } from './forward.js';

export const traceInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const step = activeStepTrace();
  if (!step) return dispatch(opts, handler);
  const span = step.startClient(opts.method, `${String(opts.origin ?? '')}${opts.path}`);
  // Ours replaces a traceparent/tracestate the caller set (any spelling): one trace per request.
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries((opts.headers ?? {}) as Record<string, string>)) {
    const lower = k.toLowerCase();
    if (lower !== 'traceparent' && lower !== 'tracestate') headers[k] = v;
  }
  if (span.traceparent) headers.traceparent = span.traceparent;
  if (span.tracestate) headers.tracestate = span.tracestate;
  let status: number | undefined;
  let ended = false;
  const end = (err?: Error) => {
    if (ended) return;
    ended = true;
    span.end(status, err);
  };
  const traced = settling(handler, end, {
    onResponseStart(c, statusCode, h, message) {
      status = statusCode;
      return handler.onResponseStart?.(c, statusCode, h, message);
    },
  });
  try {
    return dispatch({ ...opts, headers }, traced);
  } catch (err) {
    end(err as Error);
    throw err;
  }
};
