/**
 * The step result limit on every response body (../result-limit.ts): a Content-Length above the
 * limit fails before any byte is read; otherwise bytes are counted as they arrive and the request
 * is aborted — the connection closed — as soon as the count passes the limit. Never buffered
 * whole first, so a 300 MB answer costs at most the limit in memory.
 */
import type { Dispatcher } from 'undici';
import { callOf } from './call.js';
import { forwarding } from './forward.js';
import { tooLarge } from '../result-limit.js';

export const bodyLimitInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const { maxBodyBytes: limit, label } = callOf(opts);
  let total = 0;
  let over = false;
  const stop = (c: Dispatcher.DispatchController, seen: string) => {
    over = true;
    c.abort(tooLarge(label, limit, seen));
  };
  return dispatch(
    opts,
    forwarding(handler, {
      onRequestStart(c, context) {
        total = 0;
        over = false;
        handler.onRequestStart?.(c, context);
      },
      onResponseStart(c, status, headers, message) {
        const declared = Number(headers['content-length']);
        if (Number.isFinite(declared) && declared > limit) return stop(c, `Content-Length ${declared}`);
        return handler.onResponseStart?.(c, status, headers, message);
      },
      onResponseData(c, chunk) {
        if (over) return;
        total += chunk.length;
        if (total > limit) return stop(c, `more than ${limit} bytes arrived`);
        return handler.onResponseData?.(c, chunk);
      },
    }),
  );
};
