/**
 * A DurableHost kept in memory, for engine tests: the host side of core.wait/core.callback as the
 * runtime does it (tokens, requests, the cap), without a store. Tests deliver a request with
 * `receive`, and read what the engine asked with `created`, `admitted`, `waits`.
 */
import type { CallbackLookup, CallbackRequest, DurableHost } from '../../src/engine/durable.js';

export interface MemoryDurableHost extends DurableHost {
  created: Array<{ token: string; executionId: string; step: string; expiresAt: string }>;
  admitted: string[];
  waits: Array<Parameters<NonNullable<DurableHost['waited']>>[0]>;
  receive(url: string, request: Partial<CallbackRequest>): void;
  /** Rejects admitWait from now on, as a host at its cap. */
  full: boolean;
}

export function memoryDurableHost(mode: 'suspend' | 'now' = 'suspend', base = 'http://runner.test'): MemoryDurableHost {
  const requests = new Map<string, CallbackRequest>();
  let n = 0;
  const host: MemoryDurableHost = {
    mode,
    created: [],
    admitted: [],
    waits: [],
    full: false,
    async createCallback(req) {
      const token = `tok${++n}`;
      host.created.push({ token, executionId: req.executionId, step: req.step, expiresAt: req.expiresAt });
      return { url: `${base}/callbacks/${token}` };
    },
    tokenOf(url) {
      return url.startsWith(`${base}/callbacks/`) ? url.slice(base.length + '/callbacks/'.length) : undefined;
    },
    async lookupCallback(token, executionId): Promise<CallbackLookup> {
      const made = host.created.find((c) => c.token === token && c.executionId === executionId);
      if (!made) return { state: 'unknown' };
      const request = requests.get(token);
      return request ? { state: 'received', request } : { state: 'pending', expiresAt: made.expiresAt };
    },
    async admitWait(_integration, executionId) {
      if (host.full) throw new Error('integration t has 2 waiting executions, as many as it may have (HCM_RUNNER_MAX_WAITING)');
      host.admitted.push(executionId);
    },
    waited(wait) {
      host.waits.push(wait);
    },
    receive(url, request) {
      requests.set(host.tokenOf(url)!, {
        method: 'POST',
        headers: {},
        queryParameters: {},
        body: undefined,
        receivedAt: new Date().toISOString(),
        ...request,
      });
    },
  };
  return host;
}
