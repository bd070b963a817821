/**
 * Error answers (status ≥ 400) become the caller's ActionError (`call.answerError`: HCM's wording
 * in ../hcm/http.ts, core.http's in ../core/http.ts), with the body read (within the body limit).
 * The answer stays attached (`answerOf`) for the interceptors that decide on status and headers:
 * auth (401), retry (5xx, Retry-After) and a connection's line (429). A Retry-After also goes on
 * the error (`details.retryAfterMs`, capped), for a step's `retry:` to wait at least that long.
 */
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import type { ActionError } from '../../common/errors.js';
import { callOf, type Answer } from './call.js';
import { forwarding } from './forward.js';
import { requestedWaitMs } from './retry-after.js';

const answers = new WeakMap<Error, Answer>();

/** The error answer behind `err`, when an answer was the failure. */
export function answerOf(err: unknown): Answer | undefined {
  return err instanceof Error ? answers.get(err) : undefined;
}

export function contentTypeOf(headers: Answer['headers']): string {
  const ct = headers['content-type'];
  return (Array.isArray(ct) ? ct[0] : ct) ?? '';
}

export const responseErrorInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const describe = callOf(opts).answerError;
  if (!describe) return dispatch(opts, handler);
  let failed: Omit<Answer, 'bytes'> | undefined;
  let chunks: Buffer[] = [];
  return dispatch(
    opts,
    forwarding(handler, {
      onRequestStart: (c, context) => {
        failed = undefined;
        chunks = [];
        handler.onRequestStart?.(c, context);
      },
      onResponseStart(c, status, headers, message) {
        if (status < 400) return handler.onResponseStart?.(c, status, headers, message);
        const h = headers as Answer['headers'];
        failed = { status, statusText: STATUS_CODES[status] ?? '', headers: h, contentType: contentTypeOf(h) };
      },
      onResponseData: (c, chunk) => (failed ? void chunks.push(chunk) : handler.onResponseData?.(c, chunk)),
      onResponseEnd(c, trailers) {
        if (!failed) return handler.onResponseEnd?.(c, trailers);
        const answer: Answer = { ...failed, bytes: Buffer.concat(chunks) };
        const err: ActionError = describe(answer);
        answers.set(err, answer);
        const wait = requestedWaitMs(answer.headers['retry-after']);
        if (wait !== undefined) err.details.retryAfterMs = wait;
        handler.onResponseError?.(c, err);
      },
    }),
  );
};
