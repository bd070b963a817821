/**
 * Callers waiting for an execution to finish that this process may not be running (a synchronous
 * webhook's duplicate, docs/triggers.md "Idempotency"): answered at once by this process's
 * `finished` event when it runs here, else by reading the store — the execution may run on
 * another replica. One `finished` listener for all waiters; each waiter polls the store at most
 * every `pollMs`.
 */
import type { ExecutionRecord } from '../engine/record.js';
import type { Store } from '../store/types.js';
import type { ExecutionDispatcher } from './dispatch/dispatcher.js';

/** Where a duplicate stops waiting: the run ended, or it waits (core.wait) — maybe for days — as its own caller was told. */
const SETTLED = new Set(['succeeded', 'failed', 'cancelled', 'waiting']);

export class FinishedWaits {
  private readonly waiting = new Map<string, Set<(r: ExecutionRecord) => void>>();

  constructor(
    dispatcher: Pick<ExecutionDispatcher, 'on'>,
    private readonly store: Pick<Store, 'getExecution'>,
    private readonly pollMs = 250,
  ) {
    const settled = (record: ExecutionRecord) => {
      const set = this.waiting.get(record.id);
      if (set) for (const done of [...set]) done(record);
    };
    dispatcher.on('finished', settled);
    dispatcher.on('waiting', settled);
  }

  wait(id: string, timeoutMs: number): Promise<ExecutionRecord | 'timeout' | 'missing'> {
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (v: ExecutionRecord | 'timeout' | 'missing') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const set = this.waiting.get(id);
        set?.delete(finish);
        if (set?.size === 0) this.waiting.delete(id);
        resolve(v);
      };
      let set = this.waiting.get(id);
      if (!set) this.waiting.set(id, (set = new Set()));
      set.add(finish);
      const poll = async () => {
        const record = await this.store.getExecution(id).catch(() => null);
        if (settled) return;
        if (record === undefined) return finish('missing');
        if (record && SETTLED.has(record.status)) return finish(record);
        const left = deadline - Date.now();
        if (left <= 0) return finish('timeout');
        timer = setTimeout(() => void poll(), Math.min(this.pollMs, left));
      };
      void poll();
    });
  }
}
