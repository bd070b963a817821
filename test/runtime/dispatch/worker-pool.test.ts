/**
 * The worker pool on its own, over a real in-process queue. Each job's run is a promise the test
 * ends, so the test sees exactly which jobs run at once: the global and per-integration bounds,
 * fairness between integrations, an integration's own lower limit, and stop.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type DispatcherLimits } from '../../../src/runtime/dispatch/limits.js';
import { WorkerPool } from '../../../src/runtime/dispatch/worker-pool.js';
import { InProcessQueue, type QueuedJob } from '../../../src/store/queue.js';
import { settle } from './helpers.js';

interface Running {
  job: QueuedJob;
  signal: AbortSignal;
  end(saved?: boolean): void;
}

function setup(limits: Partial<DispatcherLimits>, concurrencyFor?: (integration: string) => number | undefined) {
  const queue = new InProcessQueue();
  const running: Running[] = [];
  const started: string[] = [];
  const violations: string[] = [];
  const lim = { ...DEFAULT_LIMITS, ...limits };
  const pool = new WorkerPool({
    queue,
    limits: lim,
    concurrencyFor,
    run: (job, signal) =>
      new Promise<boolean>((resolve) => {
        running.push({
          job,
          signal,
          end: (saved = true) => {
            running.splice(
              running.findIndex((r) => r.job === job),
              1,
            );
            resolve(saved);
          },
        });
        started.push(job.id);
        // The bounds, checked at every start.
        const mine = running.filter((r) => r.job.integration === job.integration).length;
        if (running.length > lim.concurrency) violations.push(`${running.length} running at once`);
        if (mine > Math.min(lim.perIntegration, concurrencyFor?.(job.integration) ?? Infinity))
          violations.push(`${mine} of ${job.integration} at once`);
      }),
  });
  let n = 0;
  const push = (integration: string, count = 1) => {
    const jobs = Array.from({ length: count }, () => ({ id: `${integration}${++n}`, integration, attempt: 1 }));
    queue.push(jobs);
    return jobs.map((j) => j.id);
  };
  /** Ends the run of job `id` and lets the pool start what fits. */
  const end = async (id: string, saved = true) => {
    const r = running.find((x) => x.job.id === id);
    if (!r) throw new Error(`${id} is not running`);
    r.end(saved);
    await settle();
  };
  const runningIds = () => running.map((r) => r.job.id).sort();
  return { queue, pool, running, started, violations, push, end, runningIds };
}

describe('WorkerPool', () => {
  it('never runs more than `concurrency` at once, nor more than `perIntegration` of one integration', async () => {
    const t = setup({ concurrency: 4, perIntegration: 2 });
    t.push('a', 10);
    t.push('b', 10);
    t.push('c', 10);
    expect(t.pool.runningCount).toBe(4);
    expect(t.runningIds()).toEqual(['a1', 'a2', 'b11', 'b12']);
    // End runs in a scrambled order until everything ran once.
    let k = 0;
    while (t.running.length > 0) {
      const r = t.running[k++ % t.running.length]!;
      await t.end(r.job.id);
      expect(t.pool.runningCount).toBe(t.running.length);
    }
    expect(t.violations).toEqual([]);
    expect(t.started).toHaveLength(30);
    expect(new Set(t.started).size).toBe(30);
    expect(t.queue.size).toBe(0);
  });

  it('is fair: an integration at its limit never blocks the others, and the oldest runnable job goes first', async () => {
    const t = setup({ concurrency: 3, perIntegration: 2 });
    t.push('busy', 6);
    t.push('quiet', 1);
    // quiet7 was queued after all of busy's jobs, yet it runs now: busy is at its limit.
    expect(t.runningIds()).toEqual(['busy1', 'busy2', 'quiet7']);
    // A free slot is not given to busy past its limit.
    await t.end('quiet7');
    expect(t.runningIds()).toEqual(['busy1', 'busy2']);
    expect(t.pool.free()).toBe(1);
    expect(t.pool.freeFor('busy')).toBe(0);
    // One of busy's ends: its next job, in order.
    await t.end('busy1');
    expect(t.runningIds()).toEqual(['busy2', 'busy3']);
    const later = t.push('late');
    expect(t.runningIds()).toEqual(['busy2', 'busy3', later[0]!]);
  });

  it('starts the oldest waiting job among the integrations that may run, whatever integration it belongs to', async () => {
    const t = setup({ concurrency: 1, perIntegration: 1 });
    for (const name of ['a', 'b', 'a', 'b']) t.push(name);
    while (t.running.length > 0) await t.end(t.running[0]!.job.id);
    expect(t.started).toEqual(['a1', 'b2', 'a3', 'b4']);
  });

  it("keeps an integration's own lower limit (schedule overlap: 1 at a time)", async () => {
    const t = setup({ concurrency: 8, perIntegration: 4 }, (name) => (name === 'nightly' ? 1 : undefined));
    t.push('nightly', 3);
    t.push('other', 3);
    expect(t.runningIds()).toEqual(['nightly1', 'other4', 'other5', 'other6']);
    expect(t.pool.freeFor('nightly')).toBe(0);
    expect(t.pool.freeFor('other')).toBe(1);
    await t.end('nightly1');
    expect(t.pool.runningOf('nightly')).toBe(1);
    expect(t.runningIds()).toContain('nightly2');
    expect(t.violations).toEqual([]);
  });

  it('stop waits for running jobs within the grace period and starts nothing more', async () => {
    const t = setup({ concurrency: 2, perIntegration: 2 });
    t.push('a', 4);
    expect(t.runningIds()).toEqual(['a1', 'a2']);
    const stopping = t.pool.stop(20_000);
    expect(t.pool.free()).toBe(0);
    await t.end('a1');
    await t.end('a2');
    expect(await stopping).toEqual({ finished: 2, abandoned: 0 });
    expect(t.pool.abandoned).toBe(false);
    expect(t.runningIds()).toEqual([]);
    expect(t.queue.size).toBe(2); // queued ones stay queued
  });

  it('stop abandons what is still running after the grace period: aborted, marked abandoned', async () => {
    const t = setup({ concurrency: 2, perIntegration: 2 });
    t.push('a', 2);
    const [first, second] = t.running;
    const stopping = t.pool.stop(50);
    await t.end('a1');
    expect(await stopping).toEqual({ finished: 1, abandoned: 1 });
    expect(t.pool.abandoned).toBe(true);
    expect(first!.signal.aborted).toBe(false);
    expect(second!.signal.aborted).toBe(true);
  });
});
