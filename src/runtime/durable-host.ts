/**
 * The runtime's side of `core.wait` and `core.callback` (engine/durable.ts): waits suspend the
 * execution (it ends `waiting` and the waker resumes it), callback tokens and their requests are
 * kept in the store, and the number of waiting executions per integration is capped
 * (`--max-waiting`, docs/server.md "Waiting executions and callbacks").
 */
import { randomBytes } from 'node:crypto';
import { ActionError } from '../common/errors.js';
import type { CallbackLookup, DurableHost } from '../engine/durable.js';
import { settingSpecs } from '../settings/spec.js';
import type { Store } from '../store/types.js';

export const DEFAULT_MAX_WAITING = settingSpecs.maxWaiting.default;

/** A callback token: 32 random bytes, base64url (256 bits; what `/callbacks/{token}` accepts). */
export const CALLBACK_TOKEN = /^[A-Za-z0-9_-]{43}$/;
export const CALLBACK_PATH = '/callbacks/';

export interface DurableHostOptions {
  store: Pick<Store, 'createCallback' | 'getCallback' | 'countWaiting'>;
  /** Base of callback URLs, without a trailing slash (as webhook URLs: HCM_RUNNER_PUBLIC_URL). */
  publicUrl: string;
  /** Waiting executions one integration may have (HCM_RUNNER_MAX_WAITING). */
  maxWaiting?: number;
  /**
   * Commits a synchronous run that is not in the store yet (LiveRuns.makeDurable): before it hands
   * out a callback URL or starts waiting, an execution must survive a crash.
   */
  makeDurable(executionId: string): Promise<void>;
}

function tokenInPath(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const at = path.lastIndexOf(CALLBACK_PATH);
  if (at < 0) return undefined;
  const token = path.slice(at + CALLBACK_PATH.length);
  return CALLBACK_TOKEN.test(token) ? token : undefined;
}

export function newCallbackToken(): string {
  return randomBytes(32).toString('base64url');
}

export function createDurableHost(opts: DurableHostOptions): DurableHost {
  const { store, makeDurable } = opts;
  const base = `${opts.publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
  const maxWaiting = opts.maxWaiting ?? DEFAULT_MAX_WAITING;
  return {
    mode: 'suspend',
    async createCallback(req) {
      await makeDurable(req.executionId);
      const token = newCallbackToken();
      await store.createCallback({
        token,
        executionId: req.executionId,
        integration: req.integration,
        step: req.step,
        test: req.test,
        expiresAt: req.expiresAt,
      });
      return { url: base + token };
    },
    tokenOf(url) {
      if (typeof url !== 'string') return undefined;
      if (url.startsWith(base)) {
        const token = url.slice(base.length);
        return CALLBACK_TOKEN.test(token) ? token : undefined;
      }
      // Made under another public URL (HCM_RUNNER_PUBLIC_URL changed while the execution waited):
      // the token is what counts, and lookupCallback checks it belongs to this execution.
      return tokenInPath(url);
    },
    async lookupCallback(token, executionId): Promise<CallbackLookup> {
      const entry = await store.getCallback(token);
      // Another execution's token is as good as unknown: one execution cannot consume another's request.
      if (!entry || entry.executionId !== executionId) return { state: 'unknown' };
      if (entry.request) return { state: 'received', request: entry.request };
      return { state: 'pending', expiresAt: entry.expiresAt };
    },
    async admitWait(integration, executionId) {
      const waiting = await store.countWaiting(integration);
      if (waiting >= maxWaiting) {
        throw new ActionError(
          `integration ${integration} has ${waiting} waiting executions, the most it may have (${maxWaiting}); ` +
            'let some finish or cancel them, or raise the limit with --max-waiting / HCM_RUNNER_MAX_WAITING',
          { code: 'waiting_limit' },
        );
      }
      await makeDurable(executionId);
    },
  };
}
