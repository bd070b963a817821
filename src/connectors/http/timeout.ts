/** The per-attempt timeout (`call.timeoutMs`): headers and body of one attempt within it, or a retryable `timeout`. */
import type { Dispatcher } from 'undici';
import { ActionError } from '../../common/errors.js';
import { callOf } from './call.js';
import { forwarding } from './forward.js';

export const timeoutInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const call = callOf(opts);
  if (!call.timeoutMs) return dispatch(opts, handler);
  let controller: Dispatcher.DispatchController | undefined;
  let expired: ActionError | undefined;
  const timer = setTimeout(() => {
    expired = new ActionError(`${call.label}: no response within ${call.timeoutMs} ms`, { code: 'timeout', retryable: true });
    controller?.abort(expired);
  }, call.timeoutMs);
  const done = () => clearTimeout(timer);
  const timed = forwarding(handler, {
    onRequestStart(c, context) {
      controller = c;
      if (expired) c.abort(expired);
      handler.onRequestStart?.(c, context);
    },
    onResponseEnd(c, trailers) {
      done();
      handler.onResponseEnd?.(c, trailers);
    },
    onResponseError(c, err) {
      done();
      handler.onResponseError?.(c, expired ?? err);
    },
  });
  try {
    return dispatch(opts, timed);
  } catch (err) {
    done();
    throw err;
  }
};
