/** In-process async mutex per key: callers of the same key run one at a time, in order. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** A `signal` that aborts while waiting rejects with its reason; those queued behind still wait their turn. */
  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    try {
      await (signal ? untilAborted(prev, signal) : prev);
    } catch (err) {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
      throw err;
    }
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

function untilAborted(p: Promise<void>, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
