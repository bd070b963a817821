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
