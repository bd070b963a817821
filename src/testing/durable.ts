/**
 * How `hcm-runner test` carries out core.wait and core.callback: waits finish at once (the case's
 * report lists them), a callback URL is made from the step id, and a callback wait takes its
 * request from the case's `callbacks: {<stepId>: {body, headers}}` (docs/testing.md "Waits and
 * callbacks"). Nothing is kept: a case is one run.
 */
import { ActionError } from '../common/errors.js';
import type { CallbackLookup, DurableHost } from '../engine/durable.js';
import type { CaseCallback } from './types.js';

/** A wait as the case's report shows it. */
export interface CaseWait {
  step: string;
  kind: 'time' | 'callback';
  for?: string;
  until?: string;
  callbackUrl?: string;
}

/** Callback tokens in tests are readable: `test-<stepId>` of the core.callback step. */
const TOKEN_PREFIX = 'test-';

export function testDurableHost(publicUrl: string | undefined, callbacks: Record<string, CaseCallback>, waits: CaseWait[]): DurableHost {
  const base = `${(publicUrl || 'http://localhost').replace(/\/+$/, '')}/callbacks/`;
  return {
    mode: 'now',
    async createCallback(req) {
      return { url: `${base}${TOKEN_PREFIX}${req.step}` };
    },
    tokenOf(url) {
      if (!url.startsWith(base)) return undefined;
      const token = url.slice(base.length);
      return token.startsWith(TOKEN_PREFIX) && /^[\w-]+$/.test(token) ? token : undefined;
    },
    async lookupCallback(_token, _executionId, step): Promise<CallbackLookup> {
      const given = callbacks[step];
      if (!given)
        throw new ActionError(
          `step ${step} waits for a callback: add callbacks.${step} to the test case with the request it receives, e.g. callbacks: { ${step}: { body: { approved: true }, headers: {} } }`,
          { code: 'no_callback' },
        );
      const { pointer: _p, ...request } = given;
      return {
        state: 'received',
        request: {
          method: request.method ?? 'POST',
          headers: request.headers ?? {},
          queryParameters: request.queryParameters ?? {},
          body: structuredClone(request.body),
          receivedAt: new Date().toISOString(),
        },
      };
    },
    async admitWait() {},
    waited(w) {
      const wait: CaseWait = { step: w.step, kind: w.kind };
      if (w.for) wait.for = w.for;
      if (w.until) wait.until = w.until;
      if (w.callbackUrl) wait.callbackUrl = w.callbackUrl;
      waits.push(wait);
    },
  };
}
