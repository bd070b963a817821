/**
 * The line of a connection with limits (src/connectors/http/limit.ts) on its own: first come
 * first served, the token bucket's window, bounded waiting, and an abort that frees its place at
 * once — with many waiters, memory and the count go back to nothing.
 */
import { describe, expect, it } from 'vitest';
import { ActionError } from '../../../src/common/errors.js';
import { connectionLimitsOf } from '../../../src/connectors/connection-limits.js';
import { ConnectionLimiter } from '../../../src/connectors/http/limit.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('ConnectionLimiter', () => {
  it('lets requests go in the order they came, one slot at a time', async () => {
    const line = new ConnectionLimiter('connection hcm', { maxConcurrent: 1 });
    const never = new AbortController().signal;
    const order: number[] = [];
    await line.take(never);
    const waiting = [1, 2, 3].map((n) => line.take(never).then(() => order.push(n)));
    expect(line.waiting).toBe(3);
    // Nobody jumps the line, not even a request that arrives as a slot frees.
    expect(line.tryTake()).toBe(false);
    for (let i = 0; i < 3; i++) {
      line.release();
      await tick();
    }
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
    expect(line.inFlight).toBe(1);
  });

  it('counts `requests` per window: the next token comes back `per` after the oldest left', async () => {
    const line = new ConnectionLimiter('connection hcm', { rate: { requests: 2, perMs: 300 } });
    const never = new AbortController().signal;
    expect(line.tryTake()).toBe(true);
    expect(line.tryTake()).toBe(true);
    line.release();
    line.release();
    // Both slots are free, but both tokens are out.
    expect(line.tryTake()).toBe(false);
    let third = false;
    const p = line.take(never).then(() => {
      third = true;
    });
    await tick();
    expect(third).toBe(false);
    await p; // a timer lets it go once the first token is back
    expect(third).toBe(true);
  });

  it('a request arriving as a token comes back does not jump the line', async () => {
    const line = new ConnectionLimiter('connection hcm', { rate: { requests: 1, perMs: 50 } });
    const never = new AbortController().signal;
    expect(line.tryTake()).toBe(true);
    line.release();
    const first = line.take(never);
    // Past the token's return, before the line's timer has run: the one waiting goes first.
    const until = performance.now() + 80;
    while (performance.now() < until);
    expect(line.tryTake()).toBe(false);
    await first;
  });

  it('an abort ends the wait with the signal’s reason and frees the place; the next in line keeps its turn', async () => {
    const line = new ConnectionLimiter('connection hcm', { maxConcurrent: 1 });
    const never = new AbortController().signal;
    await line.take(never);
    const step = new AbortController();
    const timedOut = line.take(step.signal);
    const after = line.take(never);
    const reason = new ActionError('timed out after 200 ms', { code: 'timeout', retryable: true });
    step.abort(reason);
    await expect(timedOut).rejects.toBe(reason);
    expect(line.waiting).toBe(1);
    line.release();
    await after;
    expect(line.inFlight).toBe(1);
  });

  it('bounds the line: past maxWaiters a request fails at once, retryably; 10,000 aborted waiters leave nothing behind', async () => {
    const small = new ConnectionLimiter('connection hcm', { maxConcurrent: 1 }, 2);
    const never = new AbortController().signal;
    await small.take(never);
    void small.take(never);
    void small.take(never);
    const refused = await small.take(never).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ActionError);
    expect((refused as ActionError).message).toMatch(/^connection hcm: 2 requests are already waiting/);
    expect((refused as ActionError).details).toMatchObject({ code: 'connection_busy', retryable: true });

    const line = new ConnectionLimiter('connection hcm', { maxConcurrent: 1 });
    await line.take(never);
    const aborts = Array.from({ length: 10_000 }, () => new AbortController());
    const waits = aborts.map((a) => line.take(a.signal).catch(() => 'aborted'));
    expect(line.waiting).toBe(10_000);
    for (const a of aborts) a.abort(new Error('gone'));
    expect(await Promise.all(waits)).toEqual(Array(10_000).fill('aborted'));
    expect(line.waiting).toBe(0);
    line.release();
    expect(line.tryTake()).toBe(true);
  });

  it('an already aborted signal never queues', async () => {
    const line = new ConnectionLimiter('connection hcm', { maxConcurrent: 1 });
    const a = new AbortController();
    a.abort(new Error('late'));
    await expect(line.take(a.signal)).rejects.toThrow('late');
    expect(line.waiting).toBe(0);
    expect(line.inFlight).toBe(0);
  });
});

describe('connectionLimitsOf (values from env and expressions, checked when read)', () => {
  const conn = (config: Record<string, unknown>) => ({ name: 'hcm', type: 'hcm-oauth2', config });
  it('reads numbers and durations, also as strings from env', () => {
    expect(connectionLimitsOf(conn({}))).toBeUndefined();
    expect(connectionLimitsOf(conn({ rateLimit: { requests: '10', per: '1s' }, maxConcurrent: '4' }))).toEqual({
      rate: { requests: 10, perMs: 1000 },
      maxConcurrent: 4,
    });
  });
  it('names the connection and key of a bad value', () => {
    expect(() => connectionLimitsOf(conn({ maxConcurrent: '0' }))).toThrow(
      'connection hcm: maxConcurrent must be an integer from 1 to 10000 (got "0")',
    );
    expect(() => connectionLimitsOf(conn({ rateLimit: { requests: 5, per: 'soon' } }))).toThrow(
      'connection hcm: rateLimit.per must be a duration such as 1s or 500ms (got "soon")',
    );
    expect(() => connectionLimitsOf(conn({ rateLimit: { requests: 1e9, per: '1s' } }))).toThrow(
      /rateLimit.requests must be an integer from 1 to 10000/,
    );
  });
});
