/** The pass-through part of an interceptor's handler: every event goes on to `handler`, except those `own` takes over. */
import type { Dispatcher } from 'undici';

type Handler = Dispatcher.DispatchHandler;

export function forwarding(handler: Handler, own: Handler): Handler {
  return {
    onRequestStart: (c, context) => handler.onRequestStart?.(c, context),
    onRequestUpgrade: (c, status, headers, socket) => handler.onRequestUpgrade?.(c, status, headers, socket),
    onResponseStart: (c, status, headers, message) => handler.onResponseStart?.(c, status, headers, message),
    onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
    onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
    onResponseError: (c, err) => handler.onResponseError?.(c, err),
    ...own,
  };
}

/**
 * `forwarding`, and `settled` once the response has ended or failed (with its error), before the
 * event goes on: for interceptors that hold something for the request's lifetime (a place in a
 * connection's line, a span).
 */
export function settling(handler: Handler, settled: (err?: Error) => void, own: Handler = {}): Handler {
  return forwarding(handler, {
    ...own,
    onResponseEnd(c, trailers) {
      settled();
      handler.onResponseEnd?.(c, trailers);
    },
    onResponseError(c, err) {
      settled(err);
      handler.onResponseError?.(c, err);
    },
  });
}
