/**
 * The appEvent trigger at run time (loaded by `serve` only): subscriptions follow each
 * integration's lifecycle (enabled, listening, changed, disabled, removed); executions see
 * `$state.subscribe`; the API shows the subscription's status.
 */
import type { StartTrigger } from '../type.js';
import { AppEventSubscriptions } from './subscriptions.js';

export const startAppEvents: StartTrigger = (host, settings) => {
  const subscriptions = new AppEventSubscriptions(host, { retryMs: settings.subscribeRetryMs });
  return {
    // A name that stopped being appEvent (removed, or another type now) is synced once more: it unsubscribes.
    sync: (name, current) => (current || subscriptions.tracks(name) ? subscriptions.sync(name, current) : undefined),
    detail: (name) => {
      const s = subscriptions.status(name);
      return s ? { subscription: s } : undefined;
    },
    stateFor: (name) => subscriptions.stateFor(name),
    get busy() {
      return subscriptions.busy;
    },
    idle: () => subscriptions.idle(),
    stop: (graceMs) => subscriptions.stop(graceMs),
  };
};
