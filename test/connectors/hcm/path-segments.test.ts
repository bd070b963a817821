/**
 * Path inputs are single segments: whatever an input holds (often payload data), it can only
 * name one resource below the action's own path. `.`, `..` (also percent-encoded, even twice)
 * and empty values are refused before any request goes out (no bearer token leaves the runner);
 * everything else is percent-encoded into one segment. The sandbox records every request it
 * gets, so "nothing was sent" is checked on the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionError } from '../../../src/common/errors.js';
import { apiRequests, failure, harness, invoke, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h?.close();
});

describe('path inputs', () => {
  const refused = ['..', '.', '%2e%2e', '%2E.', '.%2e', '%2e', '%252e%252e'];
  const sent = () => h.sb.requests.length + h.sb.tokenRequests.length;

  it.each(refused)('refuses %j in a path input before any request is sent', async (value) => {
    const before = sent();
    const err = await failure(invoke(h, 'deleteWorkerTimeBlock', { workerId: value, workerTimeBlockId: 'x' }));
    expect(err).toBeInstanceOf(ActionError);
    expect(err.details.code).toBe('invalid_input');
    expect(err.message).toContain('hcm.deleteWorkerTimeBlock: input workerId');
    expect(err.message).toContain(JSON.stringify(value));
    expect(err.message).toMatch(/single path segments/);
    // Not even the token endpoint was called: the request was never built.
    expect(sent()).toBe(before);
  });

  it('names the input that was refused when it is not the first path input', async () => {
    const err = await failure(invoke(h, 'deleteWorkerTimeBlock', { workerId: 'w1', workerTimeBlockId: '..' }));
    expect(err.message).toContain('input workerTimeBlockId is ".."');
  });

  it('keeps `/`, `?`, `#` and `..` inside a value within one segment', async () => {
    for (const [value, wire] of [
      ['../../workers', '..%2F..%2Fworkers'],
      ['a/../../b', 'a%2F..%2F..%2Fb'],
      ['x?limit=1#f', 'x%3Flimit=1%23f'],
      ['..a', '..a'],
      ['...', '...'],
    ] as const) {
      await invoke(h, 'getStaffingWorkerById', { workerId: value }).catch(() => undefined);
      const last = apiRequests(h).at(-1)!;
      expect(last.path, value).toBe(`/ccx/staffing/v7/workers/${wire}`);
    }
  });

  it('still sends the ID forms of the docs and the sandbox as they are (Employee_ID=21001)', async () => {
    const result = (await invoke(h, 'getStaffingWorkerById', { workerId: 'Employee_ID=21001' })) as { id?: string };
    expect(result).toBeTruthy();
    expect(apiRequests(h).at(-1)!.path).toBe('/ccx/staffing/v7/workers/Employee_ID=21001');
  });
});
