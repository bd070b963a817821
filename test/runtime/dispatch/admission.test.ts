/**
 * Admission on its own, over a real in-process queue: the global backlog, one integration's share
 * of it, the places held while a batch is being recorded, and shutdown.
 */
import { describe, expect, it } from 'vitest';
import { Admission, BusyError } from '../../../src/runtime/dispatch/admission.js';
import { DEFAULT_LIMITS, type DispatcherLimits } from '../../../src/runtime/dispatch/limits.js';
import { InProcessQueue } from '../../../src/store/queue.js';

function setup(limits: Partial<DispatcherLimits>) {
  const queue = new InProcessQueue();
  const admission = new Admission({ ...DEFAULT_LIMITS, ...limits }, queue);
  let n = 0;
  const queued = (integration: string, count: number) =>
    queue.push(Array.from({ length: count }, () => ({ id: `job-${++n}`, integration, attempt: 1 })));
  return { queue, admission, queued };
}

function refusal(fn: () => unknown): BusyError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BusyError);
    return err as BusyError;
  }
  throw new Error('expected a BusyError');
}

describe('Admission', () => {
  it('refuses past the global backlog with 429 and Retry-After, counting what waits in the queue', () => {
    const { admission, queued } = setup({ backlog: 3, backlogPerIntegration: 3, retryAfterSec: 7 });
    queued('a', 2);
    admission.check(1);
    const err = refusal(() => admission.check(2));
    expect(err.status).toBe(429);
    expect(err.headers).toEqual({ 'retry-after': '7' });
    expect(err.message).toMatch(/backlog limit 3/);
  });

  it('refuses only the integration past its share of the backlog; the others are still accepted', () => {
    const { admission, queued } = setup({ backlog: 10, backlogPerIntegration: 2 });
    queued('slow', 2);
    const err = refusal(() => admission.check(1, 'slow'));
    expect(err.status).toBe(429);
    expect(err.message).toMatch(/integration slow \(its backlog limit is 2, HCM_RUNNER_INTEGRATION_BACKLOG\)/);
    admission.check(2, 'other');
  });

  it("an integration's share defaults to half the backlog, rounded up", () => {
    const { admission, queued } = setup({ backlog: 5 });
    expect(admission.integrationBacklog).toBe(3);
    queued('a', 3);
    refusal(() => admission.check(1, 'a'));
    admission.check(1, 'b');
  });

  it('holds the places of a batch being recorded until release, globally and per integration', () => {
    const { admission } = setup({ backlog: 4, backlogPerIntegration: 2 });
    const held = admission.reserve([{ integration: 'a' }, { integration: 'a' }, { integration: 'b' }]);
    expect(admission.pendingCount).toBe(3);
    refusal(() => admission.check(2)); // 3 held + 2 > 4
    refusal(() => admission.check(1, 'a')); // a holds its 2
    admission.check(1, 'b');
    admission.release(held, 3);
    expect(admission.pendingCount).toBe(0);
    admission.check(4);
    admission.check(2, 'a');
  });

  it('a refused batch holds nothing, whichever limit refused it', () => {
    const { admission, queued } = setup({ backlog: 4, backlogPerIntegration: 2 });
    refusal(() => admission.reserve([{ integration: 'a' }, { integration: 'b' }, { integration: 'c' }, { integration: 'd' }, { integration: 'e' }]));
    expect(admission.pendingCount).toBe(0);
    queued('a', 1);
    refusal(() => admission.reserve([{ integration: 'b' }, { integration: 'a' }, { integration: 'a' }]));
    expect(admission.pendingCount).toBe(0);
    admission.check(3); // 1 queued + 3 = 4: nothing was left held
    admission.check(1, 'a');
  });

  it('refuses everything with 503 once shutdown began', () => {
    const { admission } = setup({});
    admission.accepting = false;
    const err = refusal(() => admission.check(1, 'a'));
    expect(err.status).toBe(503);
    expect(err.shuttingDown).toBe(true);
    expect(err.message).toMatch(/shutting down/);
  });
});
